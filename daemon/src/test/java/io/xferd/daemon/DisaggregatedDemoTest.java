package io.xferd.daemon;

import io.xferd.daemon.tools.cli.XferdMain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code xferd demo --disagg} in its short form: a daemon, the proxy and the Python stand-in prefill and decode
 * servers move each prompt's KV cache through {@code mooncake.engine}; decode checks every byte. A prompt passes only
 * when its KV arrived intact, a single flipped byte fails it and the demo, and the demo leaves nothing behind.
 */
@Tag("integration")
@Timeout(240)
class DisaggregatedDemoTest
{
    private static final Pattern DIRECTORY = Pattern.compile("demo: daemon in (\\S+);");

    private ChildProcess demo;

    @AfterEach
    void cleanUp()
    {
        if (demo != null)
        {
            demo.close();
        }
    }

    @Test
    void shouldServeEveryPromptThroughTheProxyAfterDecodeVerifiedItsKv()
    {
        demo = ChildProcess.start("demo", XferdMain.class, "demo", "--disagg", "--prompts", "3",
            "--prompt-tokens", "64", "--max-tokens", "4", "--timeout-s", "100");

        assertThat(demo.awaitExit(Duration.ofSeconds(200))).as(demo.output()).isZero();
        final String output = demo.output();
        assertThat(output).contains("demo: OK, 3 prompts through the proxy, every KV byte verified by decode");
        // 64 tokens = 4 blocks of 16 tokens; 28 layers x (K + V) x 16 KiB per block = 3.5 MiB each
        assertThat(output).contains("prompt 1 (64 tokens, streamed): prefill ")
            .contains("prompt 2 (64 tokens, streamed): prefill ")
            .contains("prompt 3 (64 tokens, not streamed): prefill ")
            .contains("KV 3.5 MiB (4 blocks) pushed in ").contains("time to first token ");
        assertThat(output).doesNotContain("FAILED");
        assertDirectoryRemoved(output);
    }

    @Test
    void shouldFailWhenOneKvByteArrivesWrong()
    {
        demo = ChildProcess.start("demo", XferdMain.class, "demo", "--disagg", "--prompts", "2",
            "--prompt-tokens", "64", "--max-tokens", "4", "--timeout-s", "100", "--corrupt-first");

        assertThat(demo.awaitExit(Duration.ofSeconds(200))).as(demo.output()).isEqualTo(1);
        final String output = demo.output();
        assertThat(output).containsPattern("prompt 1 \\(64 tokens, streamed\\): FAILED, HTTP 500: KV verification " +
            "failed: layer \\d+ [KV] block \\d+ \\(local block \\d+\\) byte \\d+: expected 0x[0-9a-f]{2}, found");
        // the fault was in the first prompt only: the second is served, and the demo still reports the failure
        assertThat(output).contains("prompt 2 (64 tokens, not streamed): prefill ")
            .contains("demo: FAILED, 1 of 2 prompts failed");
        assertDirectoryRemoved(output);
    }

    private static void assertDirectoryRemoved(final String output)
    {
        final Matcher directory = DIRECTORY.matcher(output);
        assertThat(directory.find()).as(output).isTrue();
        assertThat(Path.of(directory.group(1))).as("the demo's daemon directory is removed").doesNotExist();
    }
}
