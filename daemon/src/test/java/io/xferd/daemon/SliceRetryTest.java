package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.daemon.transport.tcp.FakePeerServer;
import io.xferd.ipc.SystemCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A slice that fails on one path is sent again on another, without root or namespaces: the daemon's two NICs are
 * loopback addresses, and the peer's descriptor sends one of them to an address where nothing listens.
 */
@Tag("integration")
@Timeout(60)
class SliceRetryTest
{
    private final Path dir = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;

    @AfterEach
    void tearDown()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(dir);
    }

    @Test
    void shouldSendASliceThatFailedOnOnePathAgainOnAnotherAndCompleteTheRequest() throws Exception
    {
        // path "dead": 127.0.0.9 -> the peer's NIC "gone" at 127.0.0.9, where nothing listens (connection refused);
        // path "live": 127.0.0.1 -> the peer's RPC address. The first slice takes "dead" (both equally loaded)
        daemon = XferDaemon.launch(SystemTests.daemonContext(dir).localNics(LocalNics.of(List.of(
            new LocalNics.Nic("dead", "127.0.0.9", 32), new LocalNics.Nic("live", "127.0.0.1", 32)))));
        try (FakePeerServer peer = FakePeerServer.withNics(SystemTests.CLUSTER_TOKEN,
                List.of(new SegmentDescriptor.Nic("gone", "127.0.0.9")));
            XferClient client = XferClient.connect(SystemTests.clientContext(dir, "reader")))
        {
            final SharedBuffer local = client.allocateMemory(64 * 1024);
            client.registerMemory(local, "cpu:0");
            final long segment = client.openSegment(peer.address() + "/decode");

            client.transferSyncRead(segment, local.address(), FakePeerServer.BUFFER_ADDRESS, 64 * 1024);

            for (int i = 0; i < 64 * 1024; i++)
            {
                assertThat(local.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, i)).isEqualTo((byte)i);
            }
            // it did fail on the dead path first
            assertThat(SystemTests.counter(daemon, SystemCounter.PEER_CONNECTION_FAILURES)).isPositive();
            assertThat(peer.readsAnswered()).isPositive();
        }
    }
}
