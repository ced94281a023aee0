package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.SystemCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --tcp-congestion}: two daemons on loopback started with an algorithm other than the host's move every
 * byte, and the kernel reports that algorithm on both ends of every peer connection ({@code ss -tin}, filtered to
 * the serving daemon's port); an algorithm the kernel lacks costs a WARN, never a transfer.
 */
@Tag("integration")
@Timeout(90)
class TcpCongestionSystemTest
{
    private static final int SIZE = 8 * 1024 * 1024;

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private XferDaemon daemonA;
    private XferDaemon daemonB;

    @AfterEach
    void tearDown()
    {
        if (daemonA != null)
        {
            daemonA.close();
        }
        if (daemonB != null)
        {
            daemonB.close();
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
    }

    @Test
    void shouldRunEveryPeerConnectionOnTheConfiguredAlgorithm() throws Exception
    {
        final String host = Files.readString(Path.of("/proc/sys/net/ipv4/tcp_congestion_control")).strip();
        final String wanted = "reno".equals(host) ? "cubic" : "reno"; // reno is always built in
        startDaemons(wanted);

        moveEveryByteAndKeepTheConnections(connections ->
        {
            final int port = port(daemonB.rpcAddress());
            final List<Socket> sockets = connections;
            final long outgoing = sockets.stream().filter(s -> s.peerPort == port).count();
            final long accepted = sockets.stream().filter(s -> s.localPort == port).count();
            assertThat(outgoing).as("daemon A's connections to B: %s", sockets).isPositive();
            assertThat(accepted).as("daemon B's accepted connections: %s", sockets).isPositive();
            assertThat(sockets).allSatisfy(s -> assertThat(s.algorithm).as(s.toString()).isEqualTo(wanted));
        });
    }

    @Test
    void shouldMoveEveryByteOnTheHostsAlgorithmWhenTheKernelLacksTheNamedOne() throws Exception
    {
        startDaemons("nosuchcc");

        moveEveryByteAndKeepTheConnections(connections -> assertThat(connections).isNotEmpty()
            .noneSatisfy(s -> assertThat(s.algorithm).isEqualTo("nosuchcc")));
    }

    private void startDaemons(final String congestion)
    {
        daemonA = XferDaemon.launch(SystemTests.daemonContext(dirA).sliceSize(256 * 1024).tcpCongestion(congestion));
        daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB).sliceSize(256 * 1024).tcpCongestion(congestion));
    }

    private void moveEveryByteAndKeepTheConnections(final ConnectionCheck check) throws Exception
    {
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(SIZE);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(SIZE);
            SystemTests.fill(source.segment(), 16);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            final long batch = prefill.allocateBatch(8);
            for (int i = 0; i < 8; i++)
            {
                prefill.submitTransfer(batch, TransferRequest.write(source.address() + i * (1L << 20), segment,
                    target.address() + i * (1L << 20), 1 << 20));
            }
            assertThat(prefill.awaitBatch(batch, 20_000)).isTrue();
            prefill.freeBatch(batch);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(16, SIZE), 0, SIZE))
                .isEqualTo(-1);
            assertThat(SystemTests.counter(daemonB, SystemCounter.REMOTE_BYTES_RECEIVED)).isEqualTo(SIZE);

            // the pooled connections stay open while the clients are: look at them now
            check.accept(peerSockets(port(daemonB.rpcAddress())));
        }
    }

    /**
     * @return the established TCP sockets to or from {@code port} as {@code ss -tinH} reports them.
     */
    private static List<Socket> peerSockets(final int port) throws IOException, InterruptedException
    {
        final Process ss = new ProcessBuilder("ss", "-tinH", "state", "established",
            "( sport = :" + port + " or dport = :" + port + " )").redirectErrorStream(true).start();
        final String output = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(ss.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ss.exitValue()).as(output).isZero();

        // one line per socket (Recv-Q Send-Q Local Peer, no State under a state filter), then its indented info
        final List<Socket> sockets = new ArrayList<>();
        final String[] lines = output.split("\n");
        for (int i = 0; i + 1 < lines.length; i++)
        {
            if (lines[i].isBlank() || Character.isWhitespace(lines[i].charAt(0)))
            {
                continue;
            }
            final String[] columns = lines[i].trim().split("\\s+");
            final String[] info = lines[i + 1].trim().split("\\s+");
            sockets.add(new Socket(port(columns[2]), port(columns[3]), info[0]));
        }
        return sockets;
    }

    private static int port(final String address)
    {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    private record Socket(int localPort, int peerPort, String algorithm)
    {
    }

    @FunctionalInterface
    private interface ConnectionCheck
    {
        void accept(List<Socket> sockets) throws Exception;
    }
}
