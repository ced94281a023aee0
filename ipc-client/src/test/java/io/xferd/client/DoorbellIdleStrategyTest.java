package io.xferd.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The steps of {@link DoorbellIdleStrategy} before it asks its caller to sleep on the doorbell: spins, yields, then
 * parks of 1, 2, 4 .. 50 us until the park phase is spent; work starts it over.
 */
class DoorbellIdleStrategyTest
{
    @Test
    void shouldSpinYieldAndParkThroughItsPhaseBeforeSleeping()
    {
        // 2 spins, 1 yield, parks of 1 and 2 us (3 us asked in all), then sleep
        final DoorbellIdleStrategy idle = new DoorbellIdleStrategy(2, 1, 3_000, 1_000_000);

        assertThat(stepsBeforeSleep(idle)).isEqualTo(5);
        assertThat(idle.backOff(0)).as("and sleeps from then on").isTrue();

        assertThat(idle.backOff(1)).as("work starts it over").isFalse();
        assertThat(stepsBeforeSleep(idle)).isEqualTo(5);
    }

    @Test
    void shouldSleepRightAfterItsYieldsWithoutAParkPhase()
    {
        assertThat(stepsBeforeSleep(new DoorbellIdleStrategy(3, 2, 1_000_000))).isEqualTo(5);
    }

    @Test
    void shouldParkAtMostFiftyMicrosecondsAtATimeInALongPhase()
    {
        // 1 + 2 + 4 + 8 + 16 + 32 = 63 us, then 50 us each: 1,013 us reached after 6 + 19 parks
        assertThat(stepsBeforeSleep(new DoorbellIdleStrategy(0, 0, 1_000_000, 1_000_000))).isEqualTo(25);
    }

    @Test
    void shouldRefuseNegativeStepsAndAnEmptySleep()
    {
        assertThatThrownBy(() -> new DoorbellIdleStrategy(0, 0, -1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DoorbellIdleStrategy(0, 0, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static int stepsBeforeSleep(final DoorbellIdleStrategy idle)
    {
        int steps = 0;
        while (!idle.backOff(0))
        {
            steps++;
            assertThat(steps).as("bounded").isLessThan(10_000);
        }
        return steps;
    }
}
