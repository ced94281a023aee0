package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker's borrow of a region across requests and duty cycles: one borrow for a stream of requests, given back when
 * another region comes, at the end of the cycle in which the region was closed, after an idle spell or at release,
 * and never a way to keep copying through a region that was unregistered meanwhile.
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

    @Test
    void shouldKeepTheBorrowAcrossDutyCyclesWhileRequestsUseIt()
    {
        final Region region = region(0x1000);
        for (int cycle = 0; cycle < 3 * RegionBorrow.IDLE_CYCLES; cycle++)
        {
            assertThat(borrow.borrow(region)).isTrue();
            borrow.endCycle();
        }
        assertThat(borrow.isHeld()).as("one borrow for every cycle's request").isTrue();

        region.markClosed();
        assertThat(region.isReclaimable()).as("held: the conductor may not free it yet").isFalse();
        borrow.endCycle();
        assertThat(region.isReclaimable()).as("given back at the end of the cycle after the close").isTrue();
    }

    @Test
    void shouldGiveTheBorrowBackAtTheEndOfTheCycleInWhichItsRegionClosed()
    {
        final Region region = region(0x1000);
        assertThat(borrow.borrow(region)).isTrue();
        region.markClosed(); // an unregister while the cycle's copy runs: the copy still holds it

        assertThat(region.isReclaimable()).isFalse();
        borrow.endCycle();
        assertThat(region.isReclaimable()).isTrue();
        assertThat(borrow.isHeld()).isFalse();
        assertThat(borrow.borrow(region)).as("and it is never borrowed again").isFalse();
    }

    @Test
    void shouldGiveAnUnusedBorrowBackAfterAnIdleSpellSoThatAnIdleThreadHoldsNothing()
    {
        final Region region = region(0x1000);
        assertThat(borrow.borrow(region)).isTrue();
        borrow.endCycle(); // the cycle that used it
        for (int cycle = 1; cycle < RegionBorrow.IDLE_CYCLES; cycle++)
        {
            borrow.endCycle();
            assertThat(borrow.isHeld()).as("idle cycle %d", cycle).isTrue();
        }

        borrow.endCycle();
        assertThat(borrow.isHeld()).isFalse();
        assertThat(unborrowedOnceClosed(region)).as("nothing left for an unregister to wait on").isTrue();
    }

    @Test
    void shouldCountTheIdleSpellFromTheLastRequest()
    {
        final Region region = region(0x1000);
        assertThat(borrow.borrow(region)).isTrue();
        for (int cycle = 0; cycle < RegionBorrow.IDLE_CYCLES - 1; cycle++)
        {
            borrow.endCycle();
        }
        assertThat(borrow.borrow(region)).as("a request just before the spell ends").isTrue();
        borrow.endCycle();
        for (int cycle = 1; cycle < RegionBorrow.IDLE_CYCLES; cycle++)
        {
            borrow.endCycle();
        }
        assertThat(borrow.isHeld()).isTrue();
        borrow.endCycle();
        assertThat(borrow.isHeld()).isFalse();
    }

    @Test
    void shouldGiveAnIdleBorrowBackBeforeTheDataPlaneMaySleepOnItsDoorbells()
    {
        // intake sleeps on its clients' doorbells (up to 100 ms) once its spins and yields found nothing: an
        // unregister must not wait out that sleep for a borrow the worker kept
        for (final String idle : java.util.List.of("backoff", "spin-backoff"))
        {
            final org.agrona.concurrent.IdleStrategy strategy =
                new io.xferd.daemon.config.DaemonContext().idleStrategy(idle).newIdleStrategy();
            assertThat(strategy).isInstanceOf(io.xferd.daemon.agent.DozingBackoffIdleStrategy.class);
            assertThat((long)RegionBorrow.IDLE_CYCLES).as(idle)
                .isLessThan(((io.xferd.daemon.agent.DozingBackoffIdleStrategy)strategy).idlesBeforeParking());
        }
    }
}
