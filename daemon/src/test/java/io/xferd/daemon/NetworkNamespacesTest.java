package io.xferd.daemon;

import io.xferd.daemon.tools.cli.JavaProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two-host fixture itself: a TCP connection from namespace B reaches a server in namespace A over the veth
 * pair; with the link down it fails within its timeout; with the link up again it works; and closing removes both
 * namespaces.
 */
@Tag("integration")
@Timeout(90)
class NetworkNamespacesTest
{
    private static final int PORT = 7007;

    private NetworkNamespaces namespaces;

    @BeforeEach
    void create()
    {
        NetworkNamespaces.assumeAvailable();
        namespaces = NetworkNamespaces.create();
    }

    @AfterEach
    void close()
    {
        if (namespaces != null)
        {
            namespaces.close();
        }
    }

    @Test
    void shouldCarryTcpBetweenTheNamespacesOnlyWhileTheLinkIsUp() throws Exception
    {
        final Process server = namespaces.start(namespaces.namespaceA(), JavaProcesses.builder(WatchedMain.class,
            List.of("60", EchoMain.class.getName(), "server", namespaces.addressA(), Integer.toString(PORT)))
            .redirectErrorStream(true));
        final BufferedReader serverOut =
            new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        assertThat(serverOut.readLine()).startsWith("LISTENING");

        assertThat(askFromB("hello over the wire", 5000)).isEqualTo("ECHO hello over the wire");

        namespaces.linkDown();
        final long start = System.nanoTime();
        assertThat(askFromB("lost", 1000)).startsWith("FAILED");
        assertThat((System.nanoTime() - start) / 1_000_000).as("a bounded failure, in ms").isLessThan(20_000);

        namespaces.linkUp();
        assertThat(askFromB("back again", 5000)).isEqualTo("ECHO back again");

        final String a = namespaces.namespaceA();
        final String b = namespaces.namespaceB();
        assertThat(NetworkNamespaces.listNamespaces()).contains(a, b);
        namespaces.close();
        assertThat(NetworkNamespaces.listNamespaces()).doesNotContain(a, b);
        assertThat(server.isAlive()).as("close() kills what it started").isFalse();
    }

    @Test
    void shouldStillCarryTcpUnderARateLimit() throws Exception
    {
        namespaces.rateLimit(100);
        final Process server = namespaces.start(namespaces.namespaceA(), JavaProcesses.builder(WatchedMain.class,
            List.of("60", EchoMain.class.getName(), "server", namespaces.addressA(), Integer.toString(PORT)))
            .redirectErrorStream(true));
        assertThat(new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
            .readLine()).startsWith("LISTENING");

        assertThat(askFromB("slow but there", 5000)).isEqualTo("ECHO slow but there");
    }

    /**
     * Run the echo client in namespace B against A's address; its one line of output.
     */
    private String askFromB(final String message, final int timeoutMs) throws IOException, InterruptedException
    {
        // the link may need a moment after coming up; the client's own timeout bounds each try
        final Process client = namespaces.start(namespaces.namespaceB(), JavaProcesses.builder(WatchedMain.class,
            List.of("60", EchoMain.class.getName(), "client", namespaces.addressA(), Integer.toString(PORT), message,
                Integer.toString(timeoutMs))).redirectErrorStream(true));
        final String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(client.waitFor(30, TimeUnit.SECONDS)).as("the client ends within its timeout").isTrue();
        return output;
    }
}
