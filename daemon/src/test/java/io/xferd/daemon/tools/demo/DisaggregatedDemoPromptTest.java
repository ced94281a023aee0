package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's prompts: exactly the asked number of tokens (the stand-ins count one per UTF-8 byte), a different
 * text per prompt, so each prompt's KV pattern differs.
 */
class DisaggregatedDemoPromptTest
{
    @Test
    void shouldBeExactlyAsManyBytesAsTokensAndDifferPerPrompt()
    {
        for (final int tokens : new int[]{16, 64, 1000, 4096})
        {
            assertThat(DisaggregatedDemo.prompt(0, tokens).getBytes(StandardCharsets.UTF_8)).hasSize(tokens);
            assertThat(DisaggregatedDemo.prompt(1, tokens)).isNotEqualTo(DisaggregatedDemo.prompt(0, tokens));
        }
    }
}
