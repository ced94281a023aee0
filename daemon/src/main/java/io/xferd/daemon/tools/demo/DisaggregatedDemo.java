package io.xferd.daemon.tools.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.xferd.daemon.XferDaemon;
import io.xferd.daemon.config.DaemonContext;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * {@code xferd demo --disagg}: a disaggregated deployment on one machine without GPUs. A daemon (own directory,
 * RPC on a free loopback port), {@code xferd proxy} in V1 mode (a process, on a free port), and two stand-in vLLM
 * instances (Python, {@code python/xferd_demo}) that register a KV cache of Qwen2.5-7B's shape through
 * {@code mooncake.engine} and move it as vLLM's MooncakeConnector does. Sends prompts through the proxy and prints,
 * per prompt, prefill time, KV bytes and transfer time, and time to first token. The decode stand-in checks every
 * KV byte before it answers, so a prompt passes only if every byte arrived. Everything it started is stopped and
 * its directory deleted.
 */
public final class DisaggregatedDemo
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] WORDS = ("the KV cache of a prompt computed by the prefill instance moves to the " +
        "decode instance through the xferd daemon and every byte is checked before the first token").split(" ");

    private final Settings settings;
    private final Function<List<String>, ProcessBuilder> xferdProcess;
    private final PrintStream out;
    private final List<Process> processes = new ArrayList<>();

    /**
     * What to run.
     *
     * @param python        the Python interpreter (3.10 or later)
     * @param pythonPath    the repository's {@code python} folder (packages xferd, mooncake, xferd_demo)
     * @param prompts       prompts to send
     * @param promptTokens  tokens per prompt (the stand-ins count one token per UTF-8 byte)
     * @param maxTokens     tokens to generate per prompt
     * @param kvBlocks      KV blocks per instance (16 tokens each); 0: what one prompt needs
     * @param corruptFirst  make prefill flip one KV byte of the first prompt (the demo must then fail)
     * @param timeout       longest wait for anything: a process to be ready, a request
     */
    public record Settings(String python, Path pythonPath, int prompts, int promptTokens, int maxTokens, int kvBlocks,
        boolean corruptFirst, Duration timeout)
    {
        int blocksPerPrompt()
        {
            return (promptTokens + 15) / 16;
        }
    }

    /**
     * @param settings     what to run
     * @param out          where the figures go
     * @param xferdProcess makes the command line of another {@code xferd} JVM from its arguments (the CLI knows
     *                     how: the demo does not depend on it)
     */
    public DisaggregatedDemo(
        final Settings settings, final PrintStream out, final Function<List<String>, ProcessBuilder> xferdProcess)
    {
        this.settings = settings;
        this.out = out;
        this.xferdProcess = xferdProcess;
    }

    /**
     * The repository's {@code python} folder, found from where this class was loaded
     * ({@code daemon/target/classes} or {@code daemon/target/*.jar}), or {@code null}.
     */
    public static Path findPythonPath()
    {
        try
        {
            Path at = Path.of(DisaggregatedDemo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (int up = 0; up < 4 && at != null; up++, at = at.getParent())
            {
                if (Files.isDirectory(at.resolve("python/xferd_demo")))
                {
                    return at.resolve("python");
                }
            }
        }
        catch (final Exception ignore)
        {
            // not loaded from a file
        }
        return null;
    }

    /**
     * Run the demo: 0 when every prompt was answered after its KV was verified, 1 otherwise.
     */
    public int run() throws Exception
    {
        final Path directory = Files.createTempDirectory(Files.isDirectory(Path.of("/dev/shm")) ?
            Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir")), "xferd-disagg-");
        XferDaemon daemon = null;
        try
        {
            final DaemonContext context = new DaemonContext().directory(directory).rpcAddress("127.0.0.1:0");
            context.operations().metricsAddress("127.0.0.1:0");
            daemon = XferDaemon.launch(context);
            final int blocks = settings.kvBlocks() > 0 ? settings.kvBlocks() : settings.blocksPerPrompt();
            out.printf("demo: daemon in %s; KV cache of Qwen2.5-7B shape (28 layers x K and V, 4 KV heads x 128, " +
                "bf16, 16-token blocks of %d KiB per layer), %d blocks per instance%n", directory,
                2 * 16 * 4 * 128 * 2 / 1024, blocks);
            final String prefill = startStandIn("prefill", directory, blocks);
            final String decode = startStandIn("decode", directory, blocks);
            final String banner = awaitReady("proxy", xferdProcess.apply(List.of("proxy",
                "--listen", "127.0.0.1:0", "--prefill", prefill, "--decode", decode, "--mode", "v1",
                "--event-loops", "1")).redirectErrorStream(true), "xferd proxy on ");
            final String proxyUrl = banner.split(" ")[3];
            out.printf("demo: prefill %s, decode %s, proxy %s (V1 kv_transfer_params)%n", prefill, decode, proxyUrl);
            return sendPrompts(proxyUrl);
        }
        finally
        {
            stopProcesses();
            if (daemon != null)
            {
                daemon.close();
            }
            deleteRecursively(directory);
        }
    }

    private int sendPrompts(final String proxyUrl) throws Exception
    {
        int failed = 0;
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(settings.timeout()).build())
        {
            for (int i = 0; i < settings.prompts(); i++)
            {
                // the last prompt goes unstreamed, so both answer forms are exercised
                final boolean stream = settings.prompts() == 1 || i < settings.prompts() - 1;
                if (!sendPrompt(http, proxyUrl, i, stream))
                {
                    failed++;
                }
            }
        }
        if (failed == 0)
        {
            out.printf("demo: OK, %d prompt%s through the proxy, every KV byte verified by decode%n",
                settings.prompts(), settings.prompts() == 1 ? "" : "s");
            return 0;
        }
        out.printf("demo: FAILED, %d of %d prompts failed%n", failed, settings.prompts());
        return 1;
    }

    private boolean sendPrompt(final HttpClient http, final String proxyUrl, final int index, final boolean stream)
        throws Exception
    {
        final String prompt = prompt(index, settings.promptTokens());
        final String body = JSON.writeValueAsString(JSON.createObjectNode().put("model", "Qwen/Qwen2.5-7B-Instruct")
            .put("prompt", prompt).put("max_tokens", settings.maxTokens()).put("stream", stream));
        final long started = System.nanoTime();
        final HttpResponse<Stream<String>> response = http.send(HttpRequest.newBuilder(
                URI.create(proxyUrl + "/v1/completions"))
            .timeout(settings.timeout())
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofLines());
        final String label = String.format("prompt %d (%d tokens, %s)", index + 1, settings.promptTokens(),
            stream ? "streamed" : "not streamed");
        try (Stream<String> lines = response.body())
        {
            final Iterator<String> it = lines.iterator();
            if (response.statusCode() != 200)
            {
                final StringBuilder text = new StringBuilder();
                it.forEachRemaining(text::append);
                out.printf("%s: FAILED, HTTP %d: %s%n", label, response.statusCode(), errorMessage(text.toString()));
                return false;
            }
            JsonNode first = null;
            long firstTokenNanos = 0;
            int tokens = 0;
            boolean done = !stream;
            final StringBuilder whole = new StringBuilder();
            while (it.hasNext())
            {
                final String line = it.next();
                if (!stream)
                {
                    whole.append(line);
                    continue;
                }
                if (!line.startsWith("data: "))
                {
                    continue;
                }
                final String data = line.substring(6);
                if (data.equals("[DONE]"))
                {
                    done = true;
                    continue;
                }
                final JsonNode event = JSON.readTree(data);
                if (event.has("error"))
                {
                    out.printf("%s: FAILED mid-stream: %s%n", label, event.path("error").path("message").asText());
                    return false;
                }
                if (first == null)
                {
                    first = event;
                    firstTokenNanos = System.nanoTime() - started;
                }
                tokens++;
            }
            if (!stream)
            {
                first = JSON.readTree(whole.toString());
                firstTokenNanos = System.nanoTime() - started;
                tokens = first.path("usage").path("completion_tokens").asInt();
            }
            if (first == null || !done || tokens != settings.maxTokens())
            {
                out.printf("%s: FAILED, answer cut short (%d of %d tokens%s)%n", label, tokens, settings.maxTokens(),
                    done ? "" : ", no [DONE]");
                return false;
            }
            return report(label, first.path("xferd_demo"), firstTokenNanos);
        }
    }

    private boolean report(final String label, final JsonNode timings, final long firstTokenNanos)
    {
        final long kvBytes = timings.path("kv_bytes").asLong();
        final long expected = (long)settings.blocksPerPrompt() * 2 * 28 * 16 * 4 * 128 * 2;
        if (!timings.path("verified").asBoolean() || kvBytes != expected)
        {
            out.printf("%s: FAILED, decode reports %d KV bytes verified=%s (expected %d)%n", label, kvBytes,
                timings.path("verified").asText(), expected);
            return false;
        }
        final double transferSeconds = timings.path("prefill_transfer_s").asDouble();
        out.printf("%s: prefill %.1f ms, KV %.1f MiB (%d blocks) pushed in %.1f ms (%.2f GB/s; %.1f ms with the " +
                "side-channel round trip), verified in %.1f ms, time to first token %.1f ms%n", label,
            timings.path("prefill_s").asDouble() * 1e3, kvBytes / 1048576.0, timings.path("blocks").asInt(),
            transferSeconds * 1e3, transferSeconds > 0 ? kvBytes / transferSeconds / 1e9 : 0.0,
            timings.path("transfer_s").asDouble() * 1e3, timings.path("verify_s").asDouble() * 1e3,
            firstTokenNanos / 1e6);
        return true;
    }

    private static String errorMessage(final String body)
    {
        try
        {
            final JsonNode error = JSON.readTree(body).path("error");
            return error.isMissingNode() ? body : error.path("message").asText(body);
        }
        catch (final IOException ex)
        {
            return body;
        }
    }

    /**
     * A prompt of exactly {@code tokens} bytes, different for each index.
     */
    static String prompt(final int index, final int tokens)
    {
        final StringBuilder text = new StringBuilder("Prompt " + (index + 1) + ":");
        for (int i = index; text.length() < tokens; i++)
        {
            text.append(' ').append(WORDS[i % WORDS.length]);
        }
        text.setLength(tokens);
        return text.toString();
    }

    private String startStandIn(final String role, final Path directory, final int blocks) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(settings.python(), "-m", "xferd_demo", role,
            "--host", "127.0.0.1", "--port", "0", "--num-blocks", Integer.toString(blocks)));
        if (settings.corruptFirst() && role.equals("prefill"))
        {
            command.add("--corrupt-first");
        }
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("XFERD_DIR", directory.toString());
        builder.environment().put("PYTHONPATH", settings.pythonPath().toString());
        builder.environment().put("PYTHONUNBUFFERED", "1");
        final String line = awaitReady(role, builder, "READY ");
        out.println("demo: " + line.substring("READY ".length()));
        return line.split(" ")[2];
    }

    // starts a process and waits for the line saying it serves; everything else it prints is relayed when it matters
    private String awaitReady(final String role, final ProcessBuilder builder, final String readyPrefix)
        throws IOException, InterruptedException
    {
        final Process process = builder.start();
        processes.add(process);
        final BlockingQueue<String> ready = new ArrayBlockingQueue<>(2);
        final Thread reader = new Thread(() -> relay(role, process, readyPrefix, ready), "demo-" + role);
        reader.setDaemon(true);
        reader.start();
        final String line = ready.poll(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
        if (line == null || !line.startsWith(readyPrefix))
        {
            throw new IllegalStateException("the " + role + " did not start (" +
                (line == null ? "no answer within " + settings.timeout().toSeconds() + " s" : line) +
                "); its output is above");
        }
        return line;
    }

    // prints a process's log lines that matter (warnings, errors) and hands over its ready line
    private void relay(final String role, final Process process, final String readyPrefix,
        final BlockingQueue<String> ready)
    {
        try (BufferedReader reader =
            new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = reader.readLine()) != null)
            {
                if (line.startsWith(readyPrefix))
                {
                    ready.offer(line);
                }
                else if (!line.contains(" INFO ") && !line.contains("does not report its transport"))
                {
                    out.println(role + ": " + line);
                }
            }
        }
        catch (final IOException ignore)
        {
            // the process ended
        }
        ready.offer("ended with exit code " + waitFor(process));
    }

    private static String waitFor(final Process process)
    {
        try
        {
            return Integer.toString(process.waitFor());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

    private void stopProcesses() throws InterruptedException
    {
        for (final Process process : processes)
        {
            process.destroy(); // SIGTERM: the stand-in closes its engine, the daemon frees its registrations
        }
        for (final Process process : processes)
        {
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void deleteRecursively(final Path directory) throws IOException
    {
        if (!Files.exists(directory))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
