package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The only changes the proxy makes to a client's request: the prefill request (one token, not streamed, and in V1
 * the ask to keep the KV for a remote decode) and the decode request (in V1, the prefill answer's
 * {@code kv_transfer_params}). Everything else the client sent reaches both backends unchanged. A
 * {@code kv_transfer_params} sent by the client is dropped: the proxy owns that field, and a client must not be able
 * to point a decode engine at KV blocks of its choosing.
 */
public final class RequestRewriter
{
    public static final String KV_TRANSFER_PARAMS = "kv_transfer_params";

    private final DisaggMode mode;

    public RequestRewriter(final DisaggMode mode)
    {
        this.mode = mode;
    }

    public DisaggMode mode()
    {
        return mode;
    }

    /**
     * @param client the client's request; not modified.
     * @return the request for the prefill backend.
     */
    public ObjectNode prefillRequest(final ObjectNode client)
    {
        final ObjectNode prefill = client.deepCopy();
        prefill.remove(KV_TRANSFER_PARAMS);
        prefill.put("max_tokens", 1);
        if (prefill.has("max_completion_tokens"))
        {
            prefill.put("max_completion_tokens", 1);
        }
        prefill.put("stream", false);
        prefill.remove("stream_options");
        if (mode == DisaggMode.V1)
        {
            final ObjectNode params = prefill.putObject(KV_TRANSFER_PARAMS);
            params.put("do_remote_decode", true);
            params.put("do_remote_prefill", false);
            params.putNull("remote_engine_id");
            params.putNull("remote_block_ids");
            params.putNull("remote_host");
            params.putNull("remote_port");
        }
        return prefill;
    }

    /**
     * @param client        the client's request; not modified.
     * @param prefillAnswer the prefill backend's JSON answer (V1 takes its {@code kv_transfer_params}); may be null.
     * @return the request for the decode backend.
     */
    public ObjectNode decodeRequest(final ObjectNode client, final JsonNode prefillAnswer)
    {
        final ObjectNode decode = client.deepCopy();
        decode.remove(KV_TRANSFER_PARAMS);
        if (mode == DisaggMode.V1 && prefillAnswer != null)
        {
            final JsonNode params = prefillAnswer.get(KV_TRANSFER_PARAMS);
            if (params != null && params.isObject())
            {
                decode.set(KV_TRANSFER_PARAMS, params.deepCopy());
            }
        }
        return decode;
    }

    /**
     * @return true if a V1 prefill answer carried the parameters the decode backend needs to fetch the KV (without
     * them the decode backend computes the prompt again: correct, but the disaggregation bought nothing).
     */
    public static boolean hasTransferParams(final JsonNode prefillAnswer)
    {
        final JsonNode params = prefillAnswer == null ? null : prefillAnswer.get(KV_TRANSFER_PARAMS);
        return params != null && params.isObject() && !params.isEmpty();
    }
}
