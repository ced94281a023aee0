package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.memory.Region;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

class RegionWindowsTest
{
    private static final long OWNER = 0x7f00_0000_0000L;

    @Test
    void aWindowIsExactlyTheRequestedBytesOfTheRegion()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(1 << 20);
            for (int i = 0; i < memory.byteSize(); i++)
            {
                memory.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte)(i * 7));
            }
            final Region region = new Region(OWNER, memory.byteSize(), "cpu:0", memory, memory);
            final ByteBuffer window = new RegionWindows(2).window(region, 4096, 512);

            assertThat(window.remaining()).isEqualTo(512);
            assertThat(MemorySegment.ofBuffer(window).address()).isEqualTo(memory.address() + 4096);
            for (int i = 0; i < 512; i++)
            {
                assertThat(window.get(window.position() + i)).isEqualTo((byte)((4096 + i) * 7));
            }
        }
    }

    @Test
    void windowsStayValidUntilEverySlotWasTakenAgain()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(1 << 20);
            final Region region = new Region(OWNER, memory.byteSize(), "cpu:0", memory, memory);
            final RegionWindows windows = new RegionWindows(3);
            final ByteBuffer first = windows.window(region, 0, 100);
            final ByteBuffer second = windows.window(region, 1000, 200);
            final ByteBuffer third = windows.window(region, 5000, 300);

            assertThat(first).isNotSameAs(second).isNotSameAs(third);
            assertThat(first.position()).isEqualTo(0);
            assertThat(first.remaining()).isEqualTo(100);
            assertThat(second.position()).isEqualTo(1000);
            assertThat(third.remaining()).isEqualTo(300);
            // the fourth reuses the first slot's buffer
            assertThat(windows.window(region, 64, 64)).isSameAs(first);
        }
    }

    @Test
    void steadyTrafficAllocatesNothing()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(8 << 20);
            final Region region = new Region(OWNER, memory.byteSize(), "cpu:0", memory, memory);
            final RegionWindows windows = new RegionWindows(17);
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            long sink = 0;
            for (int i = 0; i < 100_000; i++)
            {
                sink += windows.window(region, (i % 16) * 512 * 1024L, 512 * 1024).remaining();
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 100_000; i++)
            {
                sink += windows.window(region, (i % 16) * 512 * 1024L, 512 * 1024).remaining();
            }
            final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

            assertThat(sink).isEqualTo(200_000L * 512 * 1024);
            // the measuring call itself may allocate a few bytes; a view per window would be megabytes
            assertThat(allocated).isLessThan(1024);
        }
    }

    @Test
    void aWindowAcrossAChunkBoundaryIsStillExact()
    {
        // address arithmetic only: nothing reads through these views, so the memory need not exist
        final MemorySegment huge = MemorySegment.ofAddress(1L << 40).reinterpret(3 * RegionWindows.CHUNK);
        final Region region = new Region(OWNER, huge.byteSize(), "cpu:0", huge, huge);
        final RegionWindows windows = new RegionWindows(2);

        final ByteBuffer straddling = windows.window(region, RegionWindows.CHUNK - 4096, 8192);
        assertThat(MemorySegment.ofBuffer(straddling).address()).isEqualTo((1L << 40) + RegionWindows.CHUNK - 4096);
        assertThat(straddling.remaining()).isEqualTo(8192);

        final ByteBuffer inSecondChunk = windows.window(region, RegionWindows.CHUNK + 4096, 8192);
        assertThat(MemorySegment.ofBuffer(inSecondChunk).address()).isEqualTo((1L << 40) + RegionWindows.CHUNK + 4096);
        assertThat(inSecondChunk.remaining()).isEqualTo(8192);
    }
}
