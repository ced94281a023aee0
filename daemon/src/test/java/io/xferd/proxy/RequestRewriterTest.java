package io.xferd.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RequestRewriterTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private static ObjectNode json(final String text) throws Exception
    {
        return (ObjectNode)JSON.readTree(text);
    }

    @Test
    void shouldAskTheV1PrefillForOneUnstreamedTokenAndARemoteDecode() throws Exception
    {
        final ObjectNode client = json("{\"model\":\"m\",\"prompt\":\"hello\",\"max_tokens\":100,\"stream\":true," +
            "\"stream_options\":{\"include_usage\":true},\"temperature\":0.7}");
        final ObjectNode prefill = new RequestRewriter(DisaggMode.V1).prefillRequest(client);
        assertThat(prefill).isEqualTo(json("{\"model\":\"m\",\"prompt\":\"hello\",\"max_tokens\":1," +
            "\"stream\":false,\"temperature\":0.7,\"kv_transfer_params\":{\"do_remote_decode\":true," +
            "\"do_remote_prefill\":false,\"remote_engine_id\":null,\"remote_block_ids\":null,\"remote_host\":null," +
            "\"remote_port\":null}}"));
        assertThat(client.get("max_tokens").asInt()).as("the client's request is not modified").isEqualTo(100);
    }

    @Test
    void shouldLimitMaxCompletionTokensTooWhenTheClientSetIt() throws Exception
    {
        final ObjectNode prefill = new RequestRewriter(DisaggMode.V0).prefillRequest(
            json("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_completion_tokens\":50}"));
        assertThat(prefill.get("max_completion_tokens").asInt()).isEqualTo(1);
        assertThat(prefill.get("max_tokens").asInt()).isEqualTo(1);
        assertThat(prefill.has("kv_transfer_params")).as("V0 has no transfer parameters").isFalse();
    }

    @Test
    void shouldPassThePrefillAnswersTransferParametersToTheV1Decode() throws Exception
    {
        final ObjectNode client = json("{\"prompt\":\"hello\",\"max_tokens\":100,\"stream\":true}");
        final ObjectNode answer = json("{\"id\":\"x\",\"kv_transfer_params\":{\"do_remote_prefill\":true," +
            "\"remote_engine_id\":\"e1\",\"remote_block_ids\":[4,5],\"remote_host\":\"10.0.0.2\",\"remote_port\":7}}");
        final ObjectNode decode = new RequestRewriter(DisaggMode.V1).decodeRequest(client, answer);
        final ObjectNode expected = client.deepCopy();
        expected.set("kv_transfer_params", answer.get("kv_transfer_params"));
        assertThat(decode).isEqualTo(expected);
        assertThat(RequestRewriter.hasTransferParams(answer)).isTrue();
        assertThat(RequestRewriter.hasTransferParams(json("{\"id\":\"x\"}"))).isFalse();
        assertThat(RequestRewriter.hasTransferParams(json("{\"kv_transfer_params\":null}"))).isFalse();
    }

    @Test
    void shouldSendTheV0DecodeTheClientsRequestUnchanged() throws Exception
    {
        final ObjectNode client = json("{\"prompt\":[1,2,3],\"max_tokens\":9,\"stream\":true,\"n\":1}");
        final ObjectNode decode = new RequestRewriter(DisaggMode.V0).decodeRequest(client,
            json("{\"kv_transfer_params\":{\"remote_engine_id\":\"e\"}}"));
        assertThat(decode).isEqualTo(client);
    }

    @Test
    void shouldDropTransferParametersSentByTheClient() throws Exception
    {
        final ObjectNode client = json("{\"prompt\":\"p\",\"kv_transfer_params\":{\"remote_host\":\"evil\"," +
            "\"remote_block_ids\":[0]}}");
        for (final DisaggMode mode : DisaggMode.values())
        {
            final RequestRewriter rewriter = new RequestRewriter(mode);
            assertThat(rewriter.decodeRequest(client, json("{}")).has("kv_transfer_params")).isFalse();
            assertThat(rewriter.prefillRequest(client).path("kv_transfer_params").has("remote_host"))
                .as(mode.name()).isEqualTo(mode == DisaggMode.V1);
            assertThat(rewriter.prefillRequest(client).path("kv_transfer_params").path("remote_host").isNull())
                .as(mode.name()).isEqualTo(mode == DisaggMode.V1);
        }
    }

    @Test
    void shouldEstimateTokensFromTextTokenIdsAndChatMessages() throws Exception
    {
        assertThat(RequestCost.of(json("{\"prompt\":\"12345678\",\"max_tokens\":10}")))
            .isEqualTo(new RequestCost(2, 12));
        assertThat(RequestCost.of(json("{\"prompt\":[[1,2,3],[4]]}")))
            .isEqualTo(new RequestCost(4, 4 + RequestCost.DEFAULT_ANSWER_TOKENS));
        assertThat(RequestCost.of(json("{\"messages\":[{\"role\":\"system\",\"content\":\"abcd\"},{\"role\":" +
            "\"user\",\"content\":[{\"type\":\"text\",\"text\":\"abcdefgh\"}]}],\"max_completion_tokens\":5," +
            "\"max_tokens\":1000}"))).isEqualTo(new RequestCost(3, 8));
        assertThat(RequestCost.of(json("{\"prompt\":{\"odd\":true},\"max_tokens\":-4}")))
            .isEqualTo(new RequestCost(0, RequestCost.DEFAULT_ANSWER_TOKENS));
    }

    @Test
    void shouldParseModesCaseInsensitively()
    {
        assertThat(DisaggMode.parse("V1")).isEqualTo(DisaggMode.V1);
        assertThat(DisaggMode.parse(" v0 ")).isEqualTo(DisaggMode.V0);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DisaggMode.parse("v2"))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
