package io.xferd.daemon;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.daemon.metadata.MetadataStore;
import io.xferd.daemon.metadata.MetadataStores;
import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real metadata servers for the system tests, on loopback with free ports: etcd (Debian's {@code etcd-server})
 * and {@code redis-server}, each a child process killed by {@link #close()}. A test whose binary is missing is
 * skipped with the reason, except in CI (environment variable CI set), where it fails: CI installs them.
 */
final class MetadataServers implements AutoCloseable
{
    private final String name;
    private final List<String> command;
    private final int port;
    private final String host;
    private final List<String> lines = new ArrayList<>();
    private Process process;

    private MetadataServers(final String name, final List<String> command, final String host, final int port)
    {
        this.name = name;
        this.command = command;
        this.host = host;
        this.port = port;
    }

    static void assumeInstalled(final String binary)
    {
        for (final String directory : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator))
        {
            if (Files.isExecutable(Path.of(directory, binary)))
            {
                return;
            }
        }
        final String reason = binary + " is not installed (apt-get install etcd-server redis-server)";
        if (System.getenv("CI") != null)
        {
            throw new AssertionError("CI must provide " + reason);
        }
        Assumptions.assumeTrue(false, reason);
    }

    static int freePort()
    {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * A one-member etcd cluster on 127.0.0.1 (not started: {@link #start()}).
     */
    static MetadataServers etcd(final Path dataDir, final int clientPort, final int peerPort)
    {
        return etcd(dataDir, "127.0.0.1", clientPort, peerPort);
    }

    /**
     * A one-member etcd cluster listening on {@code host} (not started: {@link #start()} or {@link #startIn}).
     */
    static MetadataServers etcd(final Path dataDir, final String host, final int clientPort, final int peerPort)
    {
        assumeInstalled("etcd");
        final String client = "http://" + host + ":" + clientPort;
        final String peer = "http://" + host + ":" + peerPort;
        return new MetadataServers("etcd", List.of("etcd", "--name", "xt", "--data-dir", dataDir.toString(),
            "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer, "--initial-cluster", "xt=" + peer,
            "--logger", "zap", "--log-outputs", "stderr"), host, clientPort);
    }

    /**
     * A one-member etcd cluster on 127.0.0.1 serving clients over TLS only, with {@code certificates}' server
     * certificate; with {@code clientCertificates}, only clients showing a certificate of that CA are served
     * (not started: {@link #start()}).
     */
    static MetadataServers etcdTls(
        final Path dataDir,
        final int clientPort,
        final int peerPort,
        final TestCertificates certificates,
        final boolean clientCertificates)
    {
        assumeInstalled("etcd");
        final String client = "https://127.0.0.1:" + clientPort;
        final String peer = "http://127.0.0.1:" + peerPort;
        final List<String> command = new ArrayList<>(List.of("etcd", "--name", "xt", "--data-dir", dataDir.toString(),
            "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer, "--initial-cluster", "xt=" + peer,
            "--cert-file", certificates.serverCert().toString(), "--key-file", certificates.serverKey().toString(),
            "--logger", "zap", "--log-outputs", "stderr"));
        if (clientCertificates)
        {
            command.addAll(List.of("--client-cert-auth", "--trusted-ca-file", certificates.ca().toString()));
        }
        return new MetadataServers("etcd", command, "127.0.0.1", clientPort);
    }

    /**
     * Turn on authentication in a started, plain etcd: a root user (which etcd requires first) and {@code user},
     * whose role may read and write the keys under {@code prefix} and nothing else.
     */
    void enableEtcdAuthentication(final String user, final String password, final String prefix) throws Exception
    {
        try (Client admin = Client.builder().endpoints("http://" + host + ":" + port).build())
        {
            final Auth auth = admin.getAuthClient();
            final long seconds = 20;
            auth.userAdd(bytes("root"), bytes("root-" + password)).get(seconds, TimeUnit.SECONDS);
            auth.roleAdd(bytes("root")).get(seconds, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(seconds, TimeUnit.SECONDS);
            auth.userAdd(bytes(user), bytes(password)).get(seconds, TimeUnit.SECONDS);
            auth.roleAdd(bytes(user)).get(seconds, TimeUnit.SECONDS);
            // the range [prefix, prefix with its last byte + 1): every key under prefix
            final int last = prefix.length() - 1;
            final String end = prefix.substring(0, last) + (char)(prefix.charAt(last) + 1);
            auth.roleGrantPermission(bytes(user), bytes(prefix), bytes(end), Permission.Type.READWRITE)
                .get(seconds, TimeUnit.SECONDS);
            auth.userGrantRole(bytes(user), bytes(user)).get(seconds, TimeUnit.SECONDS);
            auth.authEnable().get(seconds, TimeUnit.SECONDS);
        }
    }

    private static ByteSequence bytes(final String text)
    {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    /**
     * redis on 127.0.0.1, no persistence, keyspace notifications on (not started: {@link #start()}).
     */
    static MetadataServers redis(final int port)
    {
        assumeInstalled("redis-server");
        return new MetadataServers("redis", List.of("redis-server", "--port", Integer.toString(port),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--notify-keyspace-events", "K$gx"),
            "127.0.0.1", port);
    }

    /**
     * redis on 127.0.0.1 that refuses every command until {@code AUTH password} (not started: {@link #start()}).
     */
    static MetadataServers redisWithPassword(final int port, final String password)
    {
        assumeInstalled("redis-server");
        return new MetadataServers("redis", List.of("redis-server", "--port", Integer.toString(port),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--requirepass", password),
            "127.0.0.1", port);
    }

    /**
     * redis on 127.0.0.1 whose default user is off: only {@code user} with {@code password}, which may use every
     * command on the keys matching {@code keyPattern} (not started: {@link #start()}).
     */
    static MetadataServers redisWithAclUser(
        final int port, final String user, final String password, final String keyPattern)
    {
        assumeInstalled("redis-server");
        return new MetadataServers("redis", List.of("redis-server", "--port", Integer.toString(port),
            "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--user", "default", "off", "--user", user, "on", ">" + password, "~" + keyPattern, "&*", "+@all"),
            "127.0.0.1", port);
    }

    /**
     * redis on 127.0.0.1 serving TLS only ({@code --port 0}) with {@code certificates}' server certificate; with
     * {@code clientCertificates}, only clients showing a certificate of that CA are served (not started:
     * {@link #start()}). Skipped when this redis-server was built without TLS.
     */
    static MetadataServers redisTls(
        final int port, final TestCertificates certificates, final boolean clientCertificates)
    {
        assumeInstalled("redis-server");
        assumeRedisTls();
        return new MetadataServers("redis", List.of("redis-server", "--port", "0",
            "--tls-port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--tls-cert-file", certificates.serverCert().toString(),
            "--tls-key-file", certificates.serverKey().toString(),
            "--tls-ca-cert-file", certificates.ca().toString(),
            "--tls-auth-clients", clientCertificates ? "yes" : "no"), "127.0.0.1", port);
    }

    /**
     * A redis-server built without TLS stops at once on {@code tls-port} ("Bad directive"); one with TLS starts
     * (listening nowhere with both ports 0) and is killed.
     */
    private static void assumeRedisTls()
    {
        try
        {
            final Process probe = new ProcessBuilder("redis-server", "--port", "0", "--tls-port", "0", "--save", "")
                .redirectErrorStream(true).start();
            if (!probe.waitFor(2, TimeUnit.SECONDS))
            {
                probe.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return;
            }
            final String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            Assumptions.assumeFalse(output.contains("tls-port"), "this redis-server was built without TLS");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Start the server and wait until its port accepts connections.
     */
    MetadataServers start()
    {
        try
        {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        readOutput();
        SystemTests.awaitCondition(this::accepts, Duration.ofSeconds(20),
            () -> name + " did not listen on " + port + " (alive " + process.isAlive() + "):\n" + output());
        return this;
    }

    /**
     * Start etcd inside a network namespace (another "host") and wait until it serves clients.
     */
    MetadataServers startIn(final NetworkNamespaces namespaces, final String namespace)
    {
        process = namespaces.start(namespace, new ProcessBuilder(command).redirectErrorStream(true));
        readOutput();
        SystemTests.awaitCondition(() -> output().contains("serving client traffic"), Duration.ofSeconds(20),
            () -> name + " not ready in " + namespace + " (alive " + process.isAlive() + "):\n" + output());
        return this;
    }

    private void readOutput()
    {
        final Process started = process;
        Thread.ofPlatform().daemon().name(name + "-output").start(() ->
        {
            try (BufferedReader out = new BufferedReader(
                new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = out.readLine()) != null)
                {
                    synchronized (lines)
                    {
                        lines.add(line);
                    }
                }
            }
            catch (final IOException ignore)
            {
                // gone
            }
        });
    }

    private boolean accepts()
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(host, port), 200);
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    String url()
    {
        return name + "://" + host + ":" + port;
    }

    /**
     * A client of the test's own, to look at what the daemons published.
     */
    MetadataStore client()
    {
        return MetadataStores.open(MetadataServer.parse(url()), 10_000, 3_000);
    }

    String output()
    {
        synchronized (lines)
        {
            return String.join("\n", lines);
        }
    }

    /**
     * kill -9, and wait until it is gone.
     */
    void kill()
    {
        if (process != null)
        {
            process.destroyForcibly();
            try
            {
                process.waitFor(10, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close()
    {
        kill();
    }
}
