package io.xferd.daemon.tools.cli;

import io.xferd.daemon.metadata.HttpMetadataStore;
import io.xferd.daemon.tools.metadata.EmbeddedMetadataServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code xferd metadata-server}: an http metadata server (Mooncake's GET/PUT/DELETE {@code ?key=} contract) for
 * small deployments and tests, in the foreground until SIGTERM or SIGINT. Daemons use it with
 * {@code --metadata-server http://host:port/metadata}.
 */
@Command(name = "metadata-server", mixinStandardHelpOptions = true,
    description = "Run an embedded http metadata server (keys in memory, expired when not renewed).")
public final class MetadataServerCommand implements Callable<Integer>
{
    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Address to listen on " +
        "(default: ${DEFAULT-VALUE}).")
    String listen = "127.0.0.1:8080";

    @Option(names = "--path", description = "URL path of the metadata (default: ${DEFAULT-VALUE}).")
    String path = HttpMetadataStore.DEFAULT_PATH;

    @Option(names = "--ttl-ms", description = "TTL of a key PUT without the " + HttpMetadataStore.TTL_HEADER +
        " header (xferd daemons send it); 0: such keys never expire (default: ${DEFAULT-VALUE}).")
    long ttlMs;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Require 'Authorization: Bearer <token>' " +
        "with this file's token (at least 32 characters) on every request; daemons send it with " +
        "--metadata-token-file. Without it, anyone who reaches the server can read, write and delete keys.")
    java.nio.file.Path tokenFile;

    @Override
    public Integer call()
    {
        final int colon = listen.lastIndexOf(':');
        if (colon <= 0 || !listen.substring(colon + 1).matches("[0-9]{1,5}") || !path.startsWith("/") || ttlMs < 0)
        {
            System.err.println("xferd: --listen must be host:port, --path start with '/', --ttl-ms be >= 0");
            return 2;
        }
        final CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), signal -> stop.countDown());
        Signal.handle(new Signal("INT"), signal -> stop.countDown());
        final EmbeddedMetadataServer server;
        try
        {
            final String token = tokenFile == null ? null : io.xferd.daemon.config.ClusterKey.requireLongEnough(
                java.nio.file.Files.readString(tokenFile).trim(), "the token in " + tokenFile);
            server = new EmbeddedMetadataServer(new InetSocketAddress(listen.substring(0, colon),
                Integer.parseInt(listen.substring(colon + 1))), path, ttlMs, token).start();
        }
        catch (final java.io.IOException ex)
        {
            System.err.println("xferd: cannot read --token-file " + tokenFile + ": " + ex);
            return 2;
        }
        catch (final RuntimeException ex)
        {
            System.err.println("xferd: " + ex.getMessage());
            return 2;
        }
        System.out.println("xferd metadata server on " + server.url() + " (default TTL " +
            (ttlMs == 0 ? "none" : ttlMs + " ms") + (tokenFile == null ? ", NO TOKEN: anyone who reaches it can " +
            "write and delete keys; descriptors are signed, so forged ones are refused by the daemons" :
            ", bearer token required") + ")");
        System.out.flush();
        try
        {
            stop.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        server.close();
        return 0;
    }
}
