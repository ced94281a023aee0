package io.xferd.daemon.storage;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

class StorageCountersTest
{
    // the system counters and room for one region's three counters, plus one slot to spare
    private static final int CAPACITY = SystemCounter.values().length + 4;

    private final CountersManager manager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY * CountersReader.METADATA_LENGTH)),
        new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY * CountersReader.COUNTER_LENGTH)));
    private final SystemCounters counters = new SystemCounters(manager);

    @Test
    void shouldLeaveARegionUncountedWhenTheCncFileHasNoRoomAndFreeWhatItTook()
    {
        final StorageFile first = new StorageFile(-1, 0, 4096, false, false, StorageFile.FILE);
        final StorageFile second = new StorageFile(-1, 0, 4096, false, false, StorageFile.NVME);

        assertThat(StorageCounters.attach(counters, first, "decode", 1L << 62)).isTrue();
        final int allocated = allocatedCount();
        assertThat(StorageCounters.attach(counters, second, "decode", (1L << 62) + 4096))
            .as("one slot left: not enough for a region's three counters").isFalse();
        assertThat(allocatedCount()).as("the counters taken on the way were freed").isEqualTo(allocated);

        second.onCompleted(true, 4096, true); // uncounted, and no failure
        first.onCompleted(true, 4096, true);
        assertThat(valueOf("storage decode 0x4000000000000000 file written")).isEqualTo(4096);
    }

    private int allocatedCount()
    {
        final int[] count = {0};
        manager.forEach((id, label) -> count[0]++);
        return count[0];
    }

    private long valueOf(final String label)
    {
        final long[] value = {-1};
        manager.forEach((id, name) ->
        {
            if (name.equals(label))
            {
                value[0] = manager.getCounterValue(id);
            }
        });
        return value[0];
    }
}
