package io.xferd.daemon.gpu;

import io.xferd.daemon.gpu.GpuTransferCheckMain.Arguments;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What of the GPU check (run-gpu-transfer.sh) runs without a GPU: its command lines, the free ports it gives the two
 * daemons, and the pattern check that decides pass or fail.
 */
class GpuTransferCheckMainTest
{
    @Test
    void shouldParseTheSingleDaemonRoles()
    {
        assertThat(GpuTransferCheckMain.parse("probe").role()).isEqualTo("probe");

        final Arguments target = GpuTransferCheckMain.parse("target", "/dev/shm/d", "/tmp/w", "1");
        assertThat(target).isEqualTo(new Arguments("target", 0, Path.of("/dev/shm/d"), Path.of("/tmp/w"), 1,
            "gpu-target", 0));
        assertThat(target.remote()).isFalse();

        final Arguments initiator = GpuTransferCheckMain.parse("initiator", "/dev/shm/d", "/tmp/w", "0");
        assertThat(initiator.segment()).as("opens the target on its own daemon").isEqualTo("gpu-target");
        assertThat(initiator.rounds()).isEqualTo(GpuTransferCheckMain.ROUNDS);
        assertThat(initiator.remote()).isFalse();
        assertThat(GpuTransferCheckMain.path(initiator)).isEqualTo("through one daemon");
    }

    @Test
    void shouldParseTheRemoteInitiatorIntoTheOtherDaemonsSegmentName()
    {
        final Arguments remote = GpuTransferCheckMain.parse("remote-initiator", "/dev/shm/a", "/tmp/w", "0",
            "127.0.0.1:40123");

        assertThat(remote.directory()).isEqualTo(Path.of("/dev/shm/a"));
        assertThat(remote.segment()).as("host:port/name, a segment of daemon B")
            .isEqualTo("127.0.0.1:40123/gpu-target");
        assertThat(remote.remote()).isTrue();
        assertThat(remote.rounds()).isEqualTo(GpuTransferCheckMain.REMOTE_ROUNDS);
        assertThat(GpuTransferCheckMain.path(remote)).contains("two daemons over TCP");
    }

    @Test
    void shouldParseFreePorts()
    {
        assertThat(GpuTransferCheckMain.parse("free-ports", "2").count()).isEqualTo(2);
    }

    @Test
    void shouldRefuseBadCommandLines()
    {
        assertRefused("no command");
        assertRefused("unknown command", "copy");
        assertRefused("takes 3 argument(s), got 2", "target", "/d", "/w");
        assertRefused("takes 3 argument(s), got 4", "initiator", "/d", "/w", "0", "127.0.0.1:1");
        assertRefused("takes 4 argument(s), got 3", "remote-initiator", "/d", "/w", "0");
        assertRefused("takes 0 argument(s)", "probe", "extra");
        assertRefused("DEVICE is not a number", "target", "/d", "/w", "cuda:0");
        assertRefused("DEVICE out of range", "initiator", "/d", "/w", "-1");
        assertRefused("N out of range", "free-ports", "0");
        assertRefused("HOST:PORT expected", "remote-initiator", "/d", "/w", "0", "127.0.0.1");
        assertRefused("HOST:PORT expected", "remote-initiator", "/d", "/w", "0", ":4000");
        assertRefused("HOST:PORT expected", "remote-initiator", "/d", "/w", "0", "127.0.0.1:4000/gpu-target");
        assertRefused("PORT is not a number", "remote-initiator", "/d", "/w", "0", "127.0.0.1:http");
        assertRefused("PORT out of range", "remote-initiator", "/d", "/w", "0", "127.0.0.1:0");
        assertRefused("PORT out of range", "remote-initiator", "/d", "/w", "0", "127.0.0.1:65536");
    }

    @Test
    void shouldGiveDistinctPortsThatCanBeBound() throws Exception
    {
        final int[] ports = GpuTransferCheckMain.freePorts(2);

        assertThat(ports).hasSize(2).doesNotHaveDuplicates();
        for (final int port : ports)
        {
            assertThat(port).isBetween(1, 65535);
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress()))
            {
                assertThat(socket.getLocalPort()).as("released again for the daemon").isEqualTo(port);
            }
        }
        assertThat(Arrays.stream(ports).distinct().count()).isEqualTo(2);
    }

    @Test
    void shouldPassOnlyTheExactPattern()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final long length = 1 << 16;
            final MemorySegment memory = arena.allocate(length, 8);
            GpuTransferCheckMain.fill(memory, length, 1);

            assertThat(GpuTransferCheckMain.verify(memory, 0, length, 1)).isTrue();
            assertThat(GpuTransferCheckMain.verify(memory, 0, length, 2)).as("the other side's pattern").isFalse();

            memory.set(JAVA_BYTE, length - 3, (byte)(memory.get(JAVA_BYTE, length - 3) ^ 0x10));
            assertThat(GpuTransferCheckMain.verify(memory, 0, length, 1)).as("one flipped bit").isFalse();
            assertThat(GpuTransferCheckMain.verify(memory, 0, length - 8, 1)).isTrue();
        }
    }

    private static void assertRefused(final String message, final String... args)
    {
        assertThatThrownBy(() -> GpuTransferCheckMain.parse(args))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(message);
    }
}
