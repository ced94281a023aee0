package io.xferd.proxy;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An estimate of what a request costs its backends, in tokens, from the request alone (no tokenizer): prompt text
 * at four characters a token, token-id prompts exactly. The prefill backend holds the prompt; the decode backend
 * holds the prompt's KV and the tokens it generates.
 *
 * @param promptTokens estimated prompt tokens.
 * @param decodeTokens prompt tokens plus the most tokens the answer may have.
 */
public record RequestCost(long promptTokens, long decodeTokens)
{
    /**
     * Answer length assumed when the request sets no {@code max_tokens} (the backend's own limit is unknown here).
     */
    public static final long DEFAULT_ANSWER_TOKENS = 256;

    private static final int CHARS_PER_TOKEN = 4;

    /**
     * @param body a completions or chat completions request.
     */
    public static RequestCost of(final JsonNode body)
    {
        long prompt = textTokens(body.get("prompt"));
        final JsonNode messages = body.get("messages");
        if (messages != null && messages.isArray())
        {
            for (final JsonNode message : messages)
            {
                prompt += textTokens(message.get("content"));
            }
        }
        long answer = DEFAULT_ANSWER_TOKENS;
        final JsonNode limit = body.has("max_completion_tokens") ? body.get("max_completion_tokens") :
            body.get("max_tokens");
        if (limit != null && limit.canConvertToLong() && limit.asLong() > 0)
        {
            answer = Math.min(limit.asLong(), 1L << 32);
        }
        return new RequestCost(prompt, prompt + answer);
    }

    private static long textTokens(final JsonNode node)
    {
        if (node == null || node.isNull())
        {
            return 0;
        }
        if (node.isTextual())
        {
            return (node.asText().length() + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
        }
        if (node.isNumber())
        {
            return 1; // one token id of a token-id prompt
        }
        if (node.isArray())
        {
            long tokens = 0;
            for (final JsonNode element : node)
            {
                tokens += textTokens(element);
            }
            return tokens;
        }
        if (node.isObject())
        {
            return textTokens(node.get("text")); // a chat content part
        }
        return 0;
    }
}
