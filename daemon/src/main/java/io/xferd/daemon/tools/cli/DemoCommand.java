package io.xferd.daemon.tools.cli;

import io.xferd.daemon.XferDaemon;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.tools.demo.DecodeConsumer;
import io.xferd.daemon.tools.demo.DemoLeftovers;
import io.xferd.daemon.tools.demo.DisaggregatedDemo;
import io.xferd.daemon.tools.demo.KvCacheLayout;
import io.xferd.daemon.tools.demo.PrefillProducer;
import io.xferd.ipc.CncFileDescriptor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code xferd demo}: the first run. Uses the daemon serving {@code --dir} or starts one, then runs a prefill
 * producer and a decode consumer as two processes that move a KV cache between them through the daemon; the
 * consumer verifies every byte. Exit 0 only when every byte arrived intact. With {@code --disagg}: a whole
 * disaggregated deployment (daemon, proxy, stand-in prefill and decode servers), see {@link DisaggregatedDemo}.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Move a KV cache between a prefill and a decode process through the daemon, verify every byte, " +
        "print GB/s and latency percentiles.")
public final class DemoCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Daemon directory (default: ${DEFAULT-VALUE}). When no daemon serves it, " +
        "the demo starts one there and at the end removes the daemon's own files that were not there before " +
        "(cluster.token, journal/, xferd.lock) and the directory if the demo made it and nothing else is in it; " +
        "a --dir that exists and is not a directory (a link included) is refused.")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    /** The longest --timeout-s: a day; it also keeps every conversion to milliseconds and nanoseconds in range. */
    static final long MAX_TIMEOUT_SECONDS = TimeUnit.DAYS.toSeconds(1);
    /** The largest --size-mib: 1 TiB; it keeps the byte count and the layout's block count in range. */
    static final long MAX_SIZE_MIB = 1L << 20;

    @Option(names = "--size-mib", description = "KV cache size to move (default: ${DEFAULT-VALUE}).")
    long sizeMib = 256;

    @Option(names = "--batch", description = "Requests per batch (default: ${DEFAULT-VALUE}).")
    int batch = 32;

    @Option(names = "--passes", description = "Times the cache is pushed at least: the first passes - 1 (and more " +
        "while --warm-up-s lasts) warm up the JIT of the three processes and are reported, the last is timed and " +
        "verified (default: ${DEFAULT-VALUE}).")
    int passes = 3;

    @Option(names = "--warm-up-s", description = "After the passes - 1 warm-up passes, go on warming up while passes " +
        "still get faster (until 3 in a row are not 5% faster than the best), for at most this long, below " +
        "--timeout-s; 0: exactly passes - 1 (default: ${DEFAULT-VALUE}).")
    long warmUpSeconds = 10;

    @Option(names = "--seed", description = "Seed of the random data (default: time based).")
    long seed = System.nanoTime();

    @Option(names = "--timeout-s", description = "Give up after (default: ${DEFAULT-VALUE}).")
    long timeoutSeconds = 120;

    @Option(names = "--drop-timed-bytes", description = "Fault injection: the timed pass sends only each layer's " +
        "last block (with its notification), as if the daemon had completed the rest without landing their bytes; " +
        "decode must find bytes the timed pass did not send and the demo fails.")
    boolean dropTimedBytes;

    @Option(names = "--disagg", description = "Run a disaggregated deployment instead: a daemon in its own " +
        "directory, the proxy (V1), stand-in vLLM prefill and decode servers (Python, OpenAI API) moving a KV " +
        "cache of Qwen2.5-7B shape through mooncake.engine; prompts go through the proxy. Ignores --dir.")
    boolean disagg;

    @Option(names = "--prompts", description = "--disagg: prompts to send (default: ${DEFAULT-VALUE}).")
    int prompts = 3;

    @Option(names = "--prompt-tokens", description = "--disagg: tokens per prompt, 16 per KV block; a block is " +
        "896 KiB over 28 layers (default: ${DEFAULT-VALUE}).")
    int promptTokens = 1024;

    @Option(names = "--max-tokens", description = "--disagg: tokens generated per prompt (default: ${DEFAULT-VALUE}).")
    int maxTokens = 16;

    @Option(names = "--kv-blocks", description = "--disagg: KV blocks per instance; 0: what one prompt needs " +
        "(default: ${DEFAULT-VALUE}).")
    int kvBlocks = 0;

    @Option(names = "--python",
        description = "--disagg: Python interpreter, 3.10 or later (default: ${DEFAULT-VALUE}).")
    String python = "python3";

    @Option(names = "--python-path", description = "--disagg: the repository's python folder (default: found " +
        "beside the daemon's jar).")
    Path pythonPath;

    @Option(names = "--corrupt-first", description = "--disagg: fault injection: prefill flips one KV byte of the " +
        "first prompt; decode must refuse it and the demo fails.")
    boolean corruptFirst;

    @Override
    public Integer call() throws Exception
    {
        final String invalid = invalidOptions();
        if (invalid != null)
        {
            System.out.println("demo: " + invalid);
            return 2;
        }
        if (disagg)
        {
            return runDisaggregated();
        }
        XferDaemon embedded = null;
        DemoLeftovers leftovers = null;
        try
        {
            if (!Files.exists(directory.resolve(CncFileDescriptor.SOCKET_FILE)))
            {
                try
                {
                    leftovers = DemoLeftovers.before(directory);
                }
                catch (final NotDirectoryException ex)
                {
                    System.out.println("demo: --dir " + directory + " exists and is not a directory (links are not " +
                        "followed): give a directory or a path that does not exist");
                    return 2;
                }
                System.out.println("demo: no daemon in " + directory + ", starting one in this process");
                // a local-only daemon: any free ports for the peer listener and the metrics endpoint
                final DaemonContext context = new DaemonContext().directory(directory).rpcAddress("127.0.0.1:0");
                context.operations().metricsAddress("127.0.0.1:0");
                embedded = XferDaemon.launch(context);
            }
            else
            {
                System.out.println("demo: using the daemon serving " + directory);
            }
            return run();
        }
        finally
        {
            // only after our daemon started: until it holds the directory's lock, what is there may be another's
            if (embedded != null)
            {
                try
                {
                    embedded.close();
                }
                catch (final RuntimeException ex)
                {
                    // said, and the run's own result stands
                    System.out.println("demo: closing its daemon failed: " + ex);
                }
                finally
                {
                    removeLeftovers(leftovers);
                }
            }
        }
    }

    /** Never fails the run: what could not be removed is said and left. */
    private void removeLeftovers(final DemoLeftovers leftovers)
    {
        try
        {
            report(leftovers.remove());
        }
        catch (final RuntimeException ex)
        {
            System.out.println("demo: could not remove what its daemon left in " + directory + ": " + ex);
        }
    }

    private void report(final DemoLeftovers.Removed removed)
    {
        if (removed.locked() != null)
        {
            System.out.println("demo: removed nothing from " + directory + ": " + removed.locked());
            return;
        }
        if (removed.madeByDemo() && removed.removed().contains(directory))
        {
            System.out.println("demo: removed " + directory + ", which it made");
        }
        else if (!removed.removed().isEmpty())
        {
            System.out.println("demo: removed what its daemon added to " + directory + ": " + names(removed.removed()));
        }
        if (!removed.left().isEmpty())
        {
            System.out.println("demo: could not remove, left: " + removed.left());
        }
    }

    private static String names(final List<Path> paths)
    {
        return String.join(", ", paths.stream().map(path -> path.getFileName().toString()).toList());
    }

    private int runDisaggregated() throws Exception
    {
        final Path packages = pythonPath != null ? pythonPath : DisaggregatedDemo.findPythonPath();
        if (packages == null || !Files.isDirectory(packages.resolve("xferd_demo")))
        {
            System.out.println("demo: cannot find the python folder with xferd_demo (give --python-path)");
            return 2;
        }
        if (prompts < 1 || promptTokens < 16 || maxTokens < 1 || kvBlocks < 0)
        {
            System.out.println("demo: --prompts and --max-tokens must be at least 1, --prompt-tokens at least 16");
            return 2;
        }
        try
        {
            return new DisaggregatedDemo(new DisaggregatedDemo.Settings(python, packages, prompts, promptTokens,
                maxTokens, kvBlocks, corruptFirst, Duration.ofSeconds(timeoutSeconds)), System.out,
                args -> JavaProcesses.builder(XferdMain.class, args)).run();
        }
        catch (final IllegalStateException | java.io.IOException ex)
        {
            // a stand-in or the proxy did not start: everything started is stopped by then
            System.out.println("demo: FAILED: " + ex.getMessage());
            return 1;
        }
    }

    /**
     * @return what is wrong with the options, or {@code null}: checked before anything starts.
     */
    String invalidOptions()
    {
        if (timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS)
        {
            return "--timeout-s must be from 1 to " + MAX_TIMEOUT_SECONDS;
        }
        if (disagg)
        {
            return null; // the deployment's own options are checked where it starts
        }
        if (passes < 1 || batch < 1)
        {
            return "--passes and --batch must be at least 1";
        }
        if (sizeMib < 1 || sizeMib > MAX_SIZE_MIB)
        {
            return "--size-mib must be from 1 to " + MAX_SIZE_MIB;
        }
        if (warmUpSeconds < 0 || warmUpSeconds >= timeoutSeconds)
        {
            // decode gives up --timeout-s after it is ready: a warm-up as long leaves no time for the timed pass
            return "--warm-up-s must be at least 0 and below --timeout-s (" + timeoutSeconds + ")";
        }
        return null;
    }

    private int run() throws Exception
    {
        final KvCacheLayout layout = KvCacheLayout.qwen25_7bOfSize(sizeMib * 1024 * 1024);
        final String suffix = Long.toString(ProcessHandle.current().pid());
        final String consumerName = "decode-" + suffix;
        System.out.printf("demo: KV cache of Qwen2.5-7B shape, %d layers x %d blocks of 16 tokens (%d bytes each), " +
            "%.1f MiB%n", layout.layers(), layout.blocks(), layout.blockBytes(), layout.totalBytes() / 1048576.0);

        final Process consumer = JavaProcesses.start(DecodeConsumer.class, List.of(directory.toString(), consumerName,
            Integer.toString(layout.layers()), Integer.toString(layout.blocks()), Long.toString(seed),
            Long.toString(TimeUnit.SECONDS.toMillis(timeoutSeconds)),
            Long.toString(TimeUnit.SECONDS.toMillis(timeoutSeconds)))); // and for VERIFY: the demo bounds its own waits
        Process producer = null;
        try
        {
            final BufferedReader consumerOut =
                new BufferedReader(new InputStreamReader(consumer.getInputStream(), StandardCharsets.UTF_8));
            String line;
            String[] ready = null;
            while ((line = consumerOut.readLine()) != null)
            {
                if (line.startsWith("READY "))
                {
                    ready = line.split(" ");
                    break;
                }
                System.out.println("decode: " + line);
            }
            if (ready == null)
            {
                System.out.println("demo: the decode process ended before it was ready");
                return 1;
            }
            final List<String> producerArgs = new ArrayList<>(List.of(directory.toString(), "prefill-" + suffix,
                ready[1], Integer.toString(layout.layers()), Integer.toString(layout.blocks()), Long.toString(seed),
                Integer.toString(batch), Integer.toString(passes), Long.toString(TimeUnit.SECONDS.toMillis(warmUpSeconds)),
                dropTimedBytes ? PrefillProducer.TIMED_PASS_LAST_BLOCKS : PrefillProducer.TIMED_PASS_ALL));
            producerArgs.addAll(Arrays.asList(ready).subList(2, ready.length));
            producer = JavaProcesses.builder(PrefillProducer.class, producerArgs).inheritIO().start();

            final boolean producerDone = producer.waitFor(timeoutSeconds, TimeUnit.SECONDS);
            if (producerDone && producer.exitValue() == 0)
            {
                tellToVerify(consumer);
            }
            else
            {
                // no word will come: stop decode rather than leave it waiting out its timeout
                System.out.println("demo: the prefill process " + (producerDone ? "failed" : "did not finish") +
                    ": decode stopped, nothing verified");
                consumer.destroy();
            }
            while ((line = consumerOut.readLine()) != null)
            {
                System.out.println("decode: " + line);
            }
            final boolean consumerDone = consumer.waitFor(timeoutSeconds, TimeUnit.SECONDS);
            final boolean ok = producerDone && consumerDone && producer.exitValue() == 0 && consumer.exitValue() == 0;
            System.out.println(ok ? "demo: OK, every byte verified" : "demo: FAILED");
            return ok ? 0 : 1;
        }
        finally
        {
            consumer.destroyForcibly();
            if (producer != null)
            {
                producer.destroyForcibly();
            }
        }
    }

    /**
     * The producer exited 0, so it saw every completion of the timed pass: decode may check the bytes now (a layer's
     * notification rides on its last batch, while earlier batches of it may still be landing).
     */
    private static void tellToVerify(final Process consumer)
    {
        try (OutputStream in = consumer.getOutputStream())
        {
            in.write((DecodeConsumer.VERIFY + "\n").getBytes(StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            // decode has already ended (its own output says why) and fails the demo by its exit status
        }
    }
}
