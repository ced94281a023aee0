package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.control.FileRegionMapper;
import io.xferd.daemon.memory.Region;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.IoUring;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A block device whose middle fails every read and write with EIO (device-mapper's {@code error} target): requests
 * into that region fail typed, {@link TransferStatus#STORAGE_IO_ERROR}, never OK, while requests around it on the
 * same device, before and after, land every byte; through the shared stage (its own thread) and through a worker's
 * inline stage alike. Skipped, with the reason, where the kernel has no device-mapper.
 */
@Tag("integration")
@Timeout(120)
class FailingRegionTest
{
    private static final long ADDRESS = FileRegistration.FILE_ADDRESS_BASE;
    private static final int MIB = 1 << 20;
    private static final int SIZE = 8 * MIB;
    private static final long FAILING_FROM = 4L * MIB;
    private static final long FAILING_LENGTH = 2L * MIB;
    private static final int MAX_DUTY_CYCLES = 10_000_000;

    private final StorageTestData data = new StorageTestData(31);
    private final SystemCounters counters = new SystemCounters(new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));

    @AfterEach
    void close() throws IOException
    {
        data.close();
    }

    @BeforeEach
    void requireIoUring()
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
    }

    @Test
    void shouldFailOnlyTheRequestsIntoTheFailingRegionThroughTheSharedStage() throws Exception
    {
        final StorageStage stage = new StorageStage(16, 64, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS));
        try
        {
            failOnlyTheFailingRegion(stage);
        }
        finally
        {
            stage.close();
        }
    }

    @Test
    void shouldFailOnlyTheRequestsIntoTheFailingRegionThroughAnInlineStage() throws Exception
    {
        final StorageStage stage = StorageStage.inline(16, counters.get(SystemCounter.STORAGE_BYTES_READ),
            counters.get(SystemCounter.STORAGE_BYTES_WRITTEN), counters.get(SystemCounter.STORAGE_ERRORS),
            counters.get(SystemCounter.STORAGE_SYNCS));
        try
        {
            failOnlyTheFailingRegion(stage);
        }
        finally
        {
            stage.close();
        }
    }

    private void failOnlyTheFailingRegion(final StorageStage stage) throws Exception
    {
        final byte[] content = data.randomBytes(SIZE);
        try (ErrorTargetDevice dm = ErrorTargetDevice.create(content, FAILING_FROM, FAILING_LENGTH))
        {
            final FileRegionMapper mapper = new FileRegionMapper();
            final int fd = FileIo.open(dm.device().toString(), FileIo.O_RDWR, 0);
            final Region region = mapper.map(fd, new FileRegistration(1, ADDRESS, SIZE, 0, 0));
            try
            {
                final MemorySegment memory = data.memory(new byte[SIZE]);
                final MemorySegment payload = data.memory(data.randomBytes(MIB));
                // in order: a read before, a read inside, a write inside, a read after, a write after, a read across
                final long[] offsets = {0, FAILING_FROM, FAILING_FROM + MIB, 6L * MIB, 7L * MIB, FAILING_FROM - MIB};
                final boolean[] writes = {false, false, true, false, true, false};
                final int[] lengths = {MIB, MIB, MIB, MIB, MIB, 2 * MIB};
                final int[] statuses = new int[offsets.length];
                Arrays.fill(statuses, -1);
                final StorageRequest[] requests = new StorageRequest[offsets.length];
                for (int i = 0; i < offsets.length; i++)
                {
                    final int index = i;
                    requests[i] = new StorageRequest((request, status) -> statuses[index] = status);
                    final long address = writes[i] ? payload.address() : memory.address() + offsets[i];
                    assertThat(stage.submit(requests[i].set(region.file(), writes[i], offsets[i], address,
                        lengths[i]))).isTrue();
                }
                runUntilDone(stage, statuses);

                assertThat(statuses[0]).as("read before the failing region").isEqualTo(TransferStatus.OK);
                assertThat(statuses[1]).as("read inside it").isEqualTo(TransferStatus.STORAGE_IO_ERROR);
                assertThat(statuses[2]).as("write inside it").isEqualTo(TransferStatus.STORAGE_IO_ERROR);
                assertThat(statuses[3]).as("read after it").isEqualTo(TransferStatus.OK);
                assertThat(statuses[4]).as("write after it").isEqualTo(TransferStatus.OK);
                assertThat(statuses[5]).as("read across its start").isEqualTo(TransferStatus.STORAGE_IO_ERROR);
                assertThat(memory.asSlice(0, MIB).toArray(JAVA_BYTE)).isEqualTo(Arrays.copyOf(content, MIB));
                assertThat(memory.asSlice(6L * MIB, MIB).toArray(JAVA_BYTE))
                    .isEqualTo(Arrays.copyOfRange(content, 6 * MIB, 7 * MIB));

                // the write after it landed: read it back through the stage
                final int[] readBack = {-1};
                final MemorySegment back = data.memory(new byte[MIB]);
                stage.submit(new StorageRequest((request, status) -> readBack[0] = status)
                    .set(region.file(), false, 7L * MIB, back.address(), MIB));
                runUntilDone(stage, readBack);
                assertThat(readBack[0]).isEqualTo(TransferStatus.OK);
                assertThat(back.toArray(JAVA_BYTE)).isEqualTo(payload.toArray(JAVA_BYTE));
            }
            finally
            {
                FileRegionMapper.unmap(region); // its descriptor would keep the device busy
            }
        }
    }

    private static void runUntilDone(final StorageStage stage, final int[] statuses) throws InterruptedException
    {
        for (int cycle = 0; cycle < MAX_DUTY_CYCLES && Arrays.stream(statuses).anyMatch(s -> s == -1); cycle++)
        {
            if (stage.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
        assertThat(statuses).as("every request completed").doesNotContain(-1);
    }
}
