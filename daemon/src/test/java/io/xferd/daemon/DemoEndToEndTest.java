package io.xferd.daemon;

import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.tools.cli.JavaProcesses;
import io.xferd.daemon.tools.cli.XferdMain;
import io.xferd.daemon.tools.demo.DecodeConsumer;
import io.xferd.daemon.tools.demo.KvCacheLayout;
import io.xferd.daemon.tools.demo.PrefillProducer;
import io.xferd.ipc.CncFileDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The first run a user makes, {@code xferd demo}, end to end: a daemon, a prefill process and a decode process
 * move a KV cache and the decode side checks every byte, and only bytes the timed pass sent pass that check; what the
 * demo's daemon added to the directory is gone afterwards; decode alone gives up at its own deadline when nobody says
 * {@code VERIFY}.
 */
@Tag("integration")
@Timeout(150)
class DemoEndToEndTest
{
    private Path directory;
    private ChildProcess demo;

    @BeforeEach
    void createDirectory()
    {
        directory = SystemTests.newDaemonDirectory();
    }

    @AfterEach
    void cleanUp()
    {
        if (demo != null)
        {
            demo.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldMoveAKvCacheBetweenTwoProcessesAndVerifyEveryByte() throws IOException
    {
        Files.writeString(directory.resolve("notes.txt"), "the user's");
        demo = ChildProcess.start("demo", XferdMain.class,
            "demo", "--dir", directory.toString(), "--size-mib", "32", "--timeout-s", "100", "--warm-up-s", "2");

        assertThat(demo.awaitExit(Duration.ofSeconds(120))).as(demo.output()).isZero();
        assertThat(demo.output()).contains("every byte verified").contains("VERIFIED");
        assertThat(demo.output()).as("the figure is one timed pass after a warm-up that says how it ended")
            .contains("WARMED UP: ").contains("(one timed pass, after warm-up)");
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).as("the demo's daemon cleaned up").doesNotExist();
        assertThat(directory.resolve(CncFileDescriptor.SOCKET_FILE)).doesNotExist();
        try (Stream<Path> entries = Files.list(directory))
        {
            assertThat(entries).as("what its daemon added is gone, what was there stays")
                .containsExactly(directory.resolve("notes.txt"));
        }
        assertThat(demo.output()).contains("demo: removed what its daemon added to " + directory + ": ")
            .contains("cluster.token");
    }

    @Test
    void shouldFailWhenTheTimedPassCompletesWithoutLandingItsBytes()
    {
        // the timed pass sends only each layer's last block (its notification's), as a daemon that completed the
        // rest without landing them would look to decode: what the warm-up pass landed must not pass for it
        final Path made = directory.resolve("made-by-the-demo");
        demo = ChildProcess.start("demo", XferdMain.class, "demo", "--dir", made.toString(), "--size-mib", "8",
            "--passes", "2", "--warm-up-s", "0", "--timeout-s", "100", "--drop-timed-bytes");

        assertThat(demo.awaitExit(Duration.ofSeconds(120))).as(demo.output()).isEqualTo(1);
        assertThat(demo.output()).as("the producer saw every completion, then decode checked")
            .contains("SENT").contains("decode: MISMATCH layer 0 at byte 0").contains("demo: FAILED")
            .doesNotContain("VERIFIED");
        assertThat(made).as("a directory the demo made goes whole, failed run or not").doesNotExist();
        assertThat(demo.output()).contains("demo: removed " + made + ", which it made");
    }

    @Test
    void shouldEndDecodeAtItsOwnDeadlineWhenTheWordToVerifyNeverComes() throws Exception
    {
        // decode run alone, as by a harness that sees the producer through but never says VERIFY
        final DaemonContext context = new DaemonContext().directory(directory).rpcAddress("127.0.0.1:0");
        context.operations().metricsAddress("127.0.0.1:0");
        try (XferDaemon daemon = XferDaemon.launch(context))
        {
            final KvCacheLayout layout = KvCacheLayout.qwen25_7bOfSize(4L << 20);
            final Process decode = JavaProcesses.start(DecodeConsumer.class, List.of(directory.toString(), "decode",
                Integer.toString(layout.layers()), Integer.toString(layout.blocks()), "7", "60000", "2000"));
            Process prefill = null;
            try
            {
                final BufferedReader decodeOut =
                    new BufferedReader(new InputStreamReader(decode.getInputStream(), StandardCharsets.UTF_8));
                final StringBuilder output = new StringBuilder();
                String line;
                while ((line = decodeOut.readLine()) != null && !line.startsWith("READY "))
                {
                    output.append(line).append('\n');
                }
                assertThat(line).as(output.toString()).isNotNull();
                final String[] ready = line.split(" ");
                final List<String> args = new ArrayList<>(List.of(directory.toString(), "prefill", ready[1],
                    Integer.toString(layout.layers()), Integer.toString(layout.blocks()), "7", "32", "1", "0",
                    PrefillProducer.TIMED_PASS_ALL));
                args.addAll(Arrays.asList(ready).subList(2, ready.length));
                prefill = JavaProcesses.start(PrefillProducer.class, args);
                final byte[] prefillOutput = prefill.getInputStream().readAllBytes();
                assertThat(prefill.waitFor()).as(new String(prefillOutput, StandardCharsets.UTF_8)).isZero();

                while ((line = decodeOut.readLine()) != null) // decode's input stays open, and says nothing
                {
                    output.append(line).append('\n');
                }
                assertThat(decode.waitFor(60, TimeUnit.SECONDS)).as(output.toString()).isTrue();
                assertThat(decode.exitValue()).as(output.toString()).isEqualTo(DecodeConsumer.EXIT_NO_VERIFY);
                assertThat(output.toString()).contains("FAILED no VERIFY within 2000 ms").doesNotContain("VERIFIED");
            }
            finally
            {
                decode.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                if (prefill != null)
                {
                    prefill.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }
}
