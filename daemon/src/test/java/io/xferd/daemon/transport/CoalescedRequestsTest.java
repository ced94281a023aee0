package io.xferd.daemon.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A member list costs nothing until it carries a merge, grows to what it carried (never past
 * {@link CoalescedRequests#MAX_MEMBERS}), keeps every member exactly, and is allocation-free once it carried its
 * widest merge.
 */
@Timeout(30)
class CoalescedRequestsTest
{
    @Test
    void aFreshListHoldsNoMemberStorage()
    {
        final CoalescedRequests members = new CoalescedRequests();

        assertThat(members.count()).isZero();
        assertThat(members.capacity()).isZero();
        assertThat(members.isFull()).isFalse();
    }

    @Test
    void growsByDoublingToTheMostMembersAndRefusesOneMore()
    {
        final CoalescedRequests members = new CoalescedRequests();
        for (int i = 0; i < CoalescedRequests.MAX_MEMBERS; i++)
        {
            assertThat(members.add(1000 + i, null, i, 4096L * (i + 1), 10L * i, 20L * i)).isTrue();
            final int expected = Math.max(CoalescedRequests.FIRST_CAPACITY, Integer.highestOneBit(i) << 1);
            assertThat(members.capacity()).as("after %d members", i + 1).isEqualTo(Math.min(expected, 64));
        }

        assertThat(members.isFull()).isTrue();
        assertThat(members.add(5000, null, 0, 1, 0, 0)).isFalse();
        assertThat(members.count()).isEqualTo(CoalescedRequests.MAX_MEMBERS);
        for (int i = 0; i < CoalescedRequests.MAX_MEMBERS; i++)
        {
            assertThat(members.requestId(i)).isEqualTo(1000 + i);
            assertThat(members.batchEntry(i)).isEqualTo(i);
            assertThat(members.length(i)).isEqualTo(4096L * (i + 1));
            assertThat(members.submitNanos(i)).isEqualTo(10L * i);
            assertThat(members.intakeNanos(i)).isEqualTo(20L * i);
        }
    }

    @Test
    void copyFromGrowsTheCopyToTheSourcesMembersAndKeepsEveryField()
    {
        final Random random = new Random(16);
        final CoalescedRequests source = new CoalescedRequests();
        final CoalescedRequests copy = new CoalescedRequests();
        for (int round = 0; round < 200; round++)
        {
            source.clear();
            final int n = random.nextInt(CoalescedRequests.MAX_MEMBERS + 1);
            for (int i = 0; i < n; i++)
            {
                source.add(random.nextLong(), null, random.nextInt(4096), 1 + random.nextInt(1 << 20),
                    random.nextLong(), random.nextLong());
            }

            copy.copyFrom(source);

            assertThat(copy.count()).isEqualTo(n);
            assertThat(copy.capacity()).isGreaterThanOrEqualTo(n).isLessThanOrEqualTo(CoalescedRequests.MAX_MEMBERS);
            for (int i = 0; i < n; i++)
            {
                assertThat(copy.requestId(i)).isEqualTo(source.requestId(i));
                assertThat(copy.batchEntry(i)).isEqualTo(source.batchEntry(i));
                assertThat(copy.length(i)).isEqualTo(source.length(i));
                assertThat(copy.submitNanos(i)).isEqualTo(source.submitNanos(i));
                assertThat(copy.intakeNanos(i)).isEqualTo(source.intakeNanos(i));
            }
        }
    }

    @Test
    void onceItCarriedItsWidestMergeItNoLongerAllocates()
    {
        final CoalescedRequests members = new CoalescedRequests();
        final CoalescedRequests copy = new CoalescedRequests();
        final Random random = new Random(64);
        fill(members, CoalescedRequests.MAX_MEMBERS, random); // warm-up: the widest merge, once
        copy.copyFrom(members);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (int i = 0; i < 10_000; i++) // the JIT compiles the loop before the measured one
        {
            sink += cycle(members, copy, random);
        }

        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++)
        {
            sink += cycle(members, copy, random);
        }
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(sink).isNotZero();
        // the measuring call itself may allocate a few bytes; new arrays per merge would be megabytes
        assertThat(allocated).isLessThan(1024);
    }

    private static long cycle(final CoalescedRequests members, final CoalescedRequests copy, final Random random)
    {
        members.clear();
        fill(members, 2 + random.nextInt(CoalescedRequests.MAX_MEMBERS - 1), random);
        copy.copyFrom(members);
        return copy.length(copy.count() - 1) + copy.count();
    }

    private static void fill(final CoalescedRequests members, final int n, final Random random)
    {
        for (int i = 0; i < n; i++)
        {
            members.add(i, null, i, 32 * 1024, random.nextInt(1000), i);
        }
    }
}
