package io.xferd.daemon.tools.bench;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KvPromptLogTest
{
    @Test
    void aPromptWithNothingElseInFlightRanAlone()
    {
        final KvPromptLog log = new KvPromptLog(4);
        log.record(1, 0, 0, 10, 10, 100);
        log.record(2, 0, 100, 100, 100, 180); // starts as the first ends: touching is not sharing the wire
        log.record(3, 0, 190, 200, 200, 260);

        for (int prompt = 0; prompt < 3; prompt++)
        {
            assertTrue(log.alone(prompt));
            assertEquals(0, log.others(prompt));
            assertEquals(0, log.overlappedNanos(prompt));
        }
        assertEquals(3, log.transferTimes(true).getTotalCount());
        assertEquals(0, log.transferTimes(false).getTotalCount());
        assertEquals(90, log.transferNanos(0));
        assertEquals(10, log.queueNanos(0));
        assertEquals(0, log.submitSpanNanos(0));
    }

    @Test
    void overlapCountsEachMomentOnceWhateverManyOthersShareIt()
    {
        final KvPromptLog log = new KvPromptLog(4);
        log.record(1, 0, 0, 0, 0, 100);
        log.record(2, 0, 20, 20, 20, 50);  // inside the first
        log.record(3, 0, 30, 40, 40, 70);  // overlaps the second: [20, 70] of the first is shared, once
        log.record(4, 0, 90, 90, 90, 200); // the first's last 10

        assertEquals(60, log.overlappedNanos(0));
        assertEquals(3, log.others(0));
        assertEquals(30, log.overlappedNanos(1));
        assertEquals(10, log.overlappedNanos(3));
        assertFalse(log.alone(3));
        assertEquals(4, log.transferTimes(false).getTotalCount());
    }

    @Test
    void slowestComeFirstWithTheirArrivalNumbers()
    {
        final KvPromptLog log = new KvPromptLog(8);
        final SplittableRandom random = new SplittableRandom(7);
        final long[] durations = {50, 400, 20, 300, 10};
        long at = 0;
        for (int prompt = 0; prompt < durations.length; prompt++)
        {
            at += 1_000 + random.nextInt(100);
            log.record(prompt + 1, 100 + prompt, at, at, at, at + durations[prompt]);
        }

        final int[] slowest = log.slowest(3);
        assertArrayEquals(new int[] {2, 4, 1},
            new int[] {log.ordinal(slowest[0]), log.ordinal(slowest[1]), log.ordinal(slowest[2])});
        assertEquals(400, log.transferTimes(true).getMaxValue());
        assertEquals(101, log.traceId(slowest[0]));
    }

    @Test
    void recordsNoMoreThanItsCapacity()
    {
        final KvPromptLog log = new KvPromptLog(1);
        log.record(1, 0, 0, 0, 0, 10);
        log.record(2, 0, 0, 0, 0, 10);
        assertEquals(1, log.count());
        log.clear();
        assertEquals(0, log.count());
    }
}
