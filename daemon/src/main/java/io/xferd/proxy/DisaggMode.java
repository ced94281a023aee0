package io.xferd.proxy;

import java.util.Locale;

/**
 * How a deployment hands a request from its prefill backend to its decode backend; one per deployment.
 */
public enum DisaggMode
{
    /**
     * vLLM V1 ({@code MooncakeConnector}, {@code NixlConnector}): the prefill request carries
     * {@code kv_transfer_params} with {@code do_remote_decode: true}, and the {@code kv_transfer_params} of the
     * prefill answer go into the decode request, which is how the decode engine learns where the KV blocks are.
     */
    V1,

    /**
     * The V0 style of Mooncake's vLLM guide: the prefill request is the client's with {@code max_tokens: 1}; the
     * decode request is the client's unchanged (the connectors pair the two through their own channel).
     */
    V0;

    /**
     * @param text {@code v1} or {@code v0}, any case.
     * @return the mode.
     * @throws IllegalArgumentException for anything else.
     */
    public static DisaggMode parse(final String text)
    {
        return switch (text.trim().toLowerCase(Locale.ROOT))
        {
            case "v1" -> V1;
            case "v0" -> V0;
            default -> throw new IllegalArgumentException("mode must be v1 or v0, not '" + text + "'");
        };
    }
}
