package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker's borrow of a region across the requests of one duty cycle: one borrow for a run, given back when another
 * region comes or at release, and never a way to keep copying through a region that was unregistered meanwhile.
 */
class RegionBorrowTest
{
    private final Arena arena = Arena.ofShared();
    private final RegionBorrow borrow = new RegionBorrow();

    @AfterEach
    void close()
    {
        arena.close();
    }

    private Region region(final long ownerAddress)
    {
        final var memory = arena.allocate(4096);
        return new Region(ownerAddress, 4096, "cpu:0", memory, memory);
    }

    /** Closes the region (as an unregister does) and says whether nobody borrows it any more. */
    private static boolean unborrowedOnceClosed(final Region region)
    {
        region.markClosed();
        return region.isReclaimable();
    }

    @Test
    void shouldBorrowARegionOnceForARunOfRequestsAndGiveItBackAtRelease()
    {
        final Region region = region(0x1000);
        assertThat(borrow.borrow(region)).isTrue();
        assertThat(borrow.borrow(region)).isTrue();
        assertThat(borrow.borrow(region)).isTrue();

        borrow.release();
        assertThat(unborrowedOnceClosed(region)).as("three requests, one borrow, given back").isTrue();
        borrow.release(); // nothing held: nothing happens
    }

    @Test
    void shouldGiveTheOldRegionBackWhenARequestUsesAnother()
    {
        final Region first = region(0x1000);
        final Region second = region(0x2000);
        assertThat(borrow.borrow(first)).isTrue();
        assertThat(borrow.borrow(second)).isTrue();

        assertThat(unborrowedOnceClosed(first)).isTrue();
        assertThat(second.isClosed()).isFalse();
        borrow.release();
        assertThat(unborrowedOnceClosed(second)).isTrue();
    }

    @Test
    void shouldRefuseARegionUnregisteredBetweenTwoRequestsAndGiveItsBorrowBack()
    {
        final Region region = region(0x1000);
        assertThat(borrow.borrow(region)).isTrue();
        region.markClosed();

        assertThat(borrow.borrow(region)).as("closed since the last request").isFalse();
        assertThat(region.isReclaimable()).as("the conductor may free it now").isTrue();
        assertThat(borrow.borrow(region)).isFalse();
    }
}
