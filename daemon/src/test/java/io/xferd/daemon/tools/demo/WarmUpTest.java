package io.xferd.daemon.tools.demo;

import org.agrona.concurrent.NanoClock;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The demo's warm-up: the passes asked for, then more while passes still get faster, within a time budget. Passes
 * are scripted figures and the clock moves only when a pass runs, so nothing here depends on this machine's speed.
 */
class WarmUpTest
{
    private static final long PASS_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final StepClock clock = new StepClock();
    private final List<Integer> ran = new ArrayList<>();

    @Test
    void shouldRunExactlyThePassesAskedForWithoutABudget()
    {
        final WarmUp.Outcome outcome = new WarmUp(2, 0, clock).run(passes(0.5, 1.0, 2.0, 4.0));

        assertThat(ran).containsExactly(1, 2);
        assertThat(outcome.passes()).isEqualTo(2);
        assertThat(outcome.end()).isEqualTo(WarmUp.End.FIXED);
        assertThat(outcome.bestGbps()).isEqualTo(1.0);
    }

    @Test
    void shouldRunNoPassWhenNoneIsAskedForAndThereIsNoBudget()
    {
        final WarmUp.Outcome outcome = new WarmUp(0, 0, clock).run(passes(1.0));

        assertThat(ran).isEmpty();
        assertThat(outcome.passes()).isZero();
        assertThat(outcome.bestGbps()).isZero();
    }

    @Test
    void shouldGoOnWhilePassesGetFasterAndEndWhenTheyStopImproving()
    {
        // the JIT of three processes: slow, faster, faster, then level (within 5% of the best) three times
        final WarmUp.Outcome outcome = new WarmUp(2, TimeUnit.SECONDS.toNanos(10), clock)
            .run(passes(0.5, 1.2, 2.8, 4.6, 4.7, 4.5, 4.8, 9.9));

        assertThat(ran).as("4.7, 4.5 and 4.8 are not 5% faster than 4.6").containsExactly(1, 2, 3, 4, 5, 6, 7);
        assertThat(outcome.end()).isEqualTo(WarmUp.End.SETTLED);
        assertThat(outcome.bestGbps()).isEqualTo(4.8);
        assertThat(outcome.elapsedNanos()).isEqualTo(7 * PASS_NANOS);
    }

    @Test
    void shouldCountAPassThatImprovesAsAFreshStartOfPatience()
    {
        final WarmUp.Outcome outcome = new WarmUp(1, TimeUnit.SECONDS.toNanos(10), clock)
            .run(passes(2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 9.9));

        assertThat(ran).as("3.0 beat 2.0 after two level passes: three more level ones end it")
            .containsExactly(1, 2, 3, 4, 5, 6, 7);
        assertThat(outcome.end()).isEqualTo(WarmUp.End.SETTLED);
    }

    @Test
    void shouldEndAtTheBudgetWhilePassesStillImprove()
    {
        final double[] faster = new double[100];
        for (int i = 0; i < faster.length; i++)
        {
            faster[i] = Math.pow(1.1, i);
        }

        final WarmUp.Outcome outcome = new WarmUp(2, TimeUnit.SECONDS.toNanos(1), clock).run(passes(faster));

        assertThat(ran).as("four passes of 250 ms fill the budget of 1 s").hasSize(4);
        assertThat(outcome.end()).isEqualTo(WarmUp.End.BUDGET);
        assertThat(outcome.bestGbps()).isEqualTo(faster[3]);
    }

    @Test
    void shouldRunThePassesAskedForEvenPastTheBudget()
    {
        final WarmUp.Outcome outcome = new WarmUp(6, TimeUnit.MILLISECONDS.toNanos(100), clock)
            .run(passes(1, 2, 3, 4, 5, 6, 7, 8));

        assertThat(ran).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(outcome.end()).isEqualTo(WarmUp.End.BUDGET);
    }

    @Test
    void shouldRefuseANegativeCountOrBudget()
    {
        assertThatThrownBy(() -> new WarmUp(-1, 0, clock)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new WarmUp(0, -1, clock)).isInstanceOf(IllegalArgumentException.class);
    }

    /** Scripted passes: pass n reports figures[n - 1] and takes {@link #PASS_NANOS} of the clock. */
    private WarmUp.PassRunner passes(final double... figures)
    {
        return pass ->
        {
            assertThat(pass).as("more passes than scripted").isLessThanOrEqualTo(figures.length);
            ran.add(pass);
            clock.nanos += PASS_NANOS;
            return figures[pass - 1];
        };
    }

    private static final class StepClock implements NanoClock
    {
        long nanos = 1_000_000_000L;

        @Override
        public long nanoTime()
        {
            return nanos;
        }
    }
}
