package io.xferd.daemon.agent;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DozingBackoffIdleStrategyTest
{
    private final DozingBackoffIdleStrategy idle = new DozingBackoffIdleStrategy(2, 1, 1_000, 10_000, 10, 20_000);

    @Test
    void backsOffFirstAndDozesOnlyAfterALongQuietStretch()
    {
        for (int i = 0; i < 9; i++)
        {
            idle.idle(0);
            assertFalse(idle.isDozing(), "still backing off after " + (i + 1) + " idle calls");
        }
        idle.idle(0);
        assertTrue(idle.isDozing());
        idle.idle(0);
        assertTrue(idle.isDozing(), "keeps dozing while nothing comes");
    }

    @Test
    void workWakesItBackToTheShortBackOff()
    {
        for (int i = 0; i < 10; i++)
        {
            idle.idle();
        }
        assertTrue(idle.isDozing());
        idle.idle(1);
        assertFalse(idle.isDozing());
        for (int i = 0; i < 10; i++)
        {
            idle.idle(0);
        }
        idle.reset();
        assertFalse(idle.isDozing());
    }

    @Test
    void dozesDeeperOnlyAfterTheLongerQuietStretchAndWakesBackOnWork()
    {
        // 3 back-off idles, then 1 ns dozes until 6 idles in all, then 2 ns deep dozes (tiny parks: no real wait)
        final DozingBackoffIdleStrategy deep = new DozingBackoffIdleStrategy(1, 1, 1, 1, 3, 1, 6, 2);
        for (int i = 0; i < 5; i++)
        {
            deep.idle(0);
            assertFalse(deep.isDozingDeeply(), "not deep after " + (i + 1) + " idle calls");
        }
        assertTrue(deep.isDozing());
        deep.idle(0);
        assertTrue(deep.isDozingDeeply());
        deep.idle(0);
        assertTrue(deep.isDozingDeeply(), "stays deep while nothing comes");
        deep.idle(1);
        assertFalse(deep.isDozing());
        assertFalse(deep.isDozingDeeply());
    }

    @Test
    void withoutADeepDozeItNeverGoesDeep()
    {
        for (int i = 0; i < 100; i++)
        {
            idle.idle(0);
        }
        assertTrue(idle.isDozing());
        assertFalse(idle.isDozingDeeply());
    }

    @Test
    void spinsThroughTheWindowAfterWorkAndBacksOffOnlyOnceItEnded()
    {
        final org.agrona.concurrent.CachedNanoClock clock = new org.agrona.concurrent.CachedNanoClock();
        final DozingBackoffIdleStrategy spinning =
            new DozingBackoffIdleStrategy(2, 1, 1_000, 10_000, 10, 20_000, Long.MAX_VALUE, 20_000, 50_000, clock);
        spinning.idle(1);
        for (int i = 0; i < 100; i++)
        {
            spinning.idle(0);
        }
        assertFalse(spinning.isDozing(), "idle calls inside the window only spin: the back-off has not begun");

        clock.advance(50_000);
        for (int i = 0; i < 10; i++)
        {
            spinning.idle(0);
        }
        assertTrue(spinning.isDozing(), "after the window it backs off as before");

        spinning.idle(1);
        spinning.idle(0);
        assertFalse(spinning.isDozing(), "work opens a new window");
    }

    @Test
    void armsTheDoorbellThenLooksOnceMoreBeforeSleepingAndDisarmsOnWork()
    {
        final RecordingDoorbell doorbell = new RecordingDoorbell(true);
        // 1 back-off idle, 1 doze, then the doorbell instead of the deep doze (1 ns parks: no real wait)
        final DozingBackoffIdleStrategy idle = new DozingBackoffIdleStrategy(1, 1, 1, 1, 1, 1, 2, 1)
            .doorbell(doorbell, 7_000);
        idle.idle(0);
        idle.idle(0);
        assertEquals("", doorbell.calls.toString(), "backs off and dozes first");
        idle.idle(0);
        assertEquals("arm ", doorbell.calls.toString(), "arms, then returns for one more duty cycle");
        idle.idle(0);
        assertEquals("arm await(7000) ", doorbell.calls.toString(), "nothing came: sleeps");
        idle.idle(0);
        assertEquals("arm await(7000) arm ", doorbell.calls.toString(), "marks again before the next sleep");
        idle.idle(1);
        assertEquals("arm await(7000) arm disarm ", doorbell.calls.toString(), "work clears the marks");
        idle.idle(1);
        assertEquals("arm await(7000) arm disarm ", doorbell.calls.toString(), "once");
    }

    @Test
    void dozesWhenTheDoorbellRefusesToArm()
    {
        final RecordingDoorbell doorbell = new RecordingDoorbell(false);
        final DozingBackoffIdleStrategy idle = new DozingBackoffIdleStrategy(1, 1, 1, 1, 1, 1, 2, 1)
            .doorbell(doorbell, 7_000);
        for (int i = 0; i < 5; i++)
        {
            idle.idle(0);
        }
        assertEquals("arm arm arm ", doorbell.calls.toString(), "asks each time, never waits");
        idle.idle(1);
        assertEquals("arm arm arm ", doorbell.calls.toString(), "nothing marked, nothing to clear");
    }

    @Test
    void sleepsOnTheDoorbellOnceTheSpinsAndYieldsFoundNothingNotAfterTheBackOffsParks()
    {
        final RecordingDoorbell doorbell = new RecordingDoorbell(true);
        // 2 spins and 1 yield, then parks (1 ns: no real wait) until 10 idles, no deep doze
        final DozingBackoffIdleStrategy idle = new DozingBackoffIdleStrategy(2, 1, 1, 1, 10, 1);
        idle.doorbell(doorbell, 7_000).sleepOnDoorbellAfter(idle.idlesBeforeParking());
        assertEquals(3, idle.idlesBeforeParking());
        for (int i = 0; i < 3; i++)
        {
            idle.idle(0);
        }
        assertEquals("", doorbell.calls.toString(), "spins and yields first");
        idle.idle(0);
        assertEquals("arm ", doorbell.calls.toString(), "where it would park: arms, one more duty cycle");
        idle.idle(0);
        assertEquals("arm await(7000) ", doorbell.calls.toString(), "then sleeps until a producer rings");
        idle.idle(1);
        idle.idle(0);
        assertEquals("arm await(7000) disarm ", doorbell.calls.toString(), "work: marks cleared, spins again");
    }

    @Test
    void parksAsBeforeWhereTheDoorbellWillNotArmEarly()
    {
        final RecordingDoorbell doorbell = new RecordingDoorbell(false);
        final DozingBackoffIdleStrategy idle = new DozingBackoffIdleStrategy(2, 1, 1, 1, 10, 1);
        idle.doorbell(doorbell, 7_000).sleepOnDoorbellAfter(idle.idlesBeforeParking());
        for (int i = 0; i < 9; i++)
        {
            idle.idle(0);
            assertFalse(idle.isDozing(), "backing off after " + (i + 1) + " idle calls, asking the doorbell");
        }
        idle.idle(0);
        assertTrue(idle.isDozing(), "dozes after as many idle calls as without a doorbell");
        assertEquals("arm arm arm arm arm arm arm ", doorbell.calls.toString(), "asked at each park, never waited");
    }

    private static final class RecordingDoorbell implements Doorbell
    {
        private final boolean arms;
        private final StringBuilder calls = new StringBuilder();

        RecordingDoorbell(final boolean arms)
        {
            this.arms = arms;
        }

        @Override
        public boolean arm()
        {
            calls.append("arm ");
            return arms;
        }

        @Override
        public void await(final long timeoutNs)
        {
            calls.append("await(").append(timeoutNs).append(") ");
        }

        @Override
        public void disarm()
        {
            calls.append("disarm ");
        }
    }
}
