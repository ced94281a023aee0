package io.xferd.daemon.tools.demo;

import org.agrona.concurrent.NanoClock;

/**
 * How many passes the demo pushes before its timed one. Three JVMs compile the transfer path as it runs (the
 * producer, the consumer and the daemon), and on a small machine their JIT takes several passes to settle: a fixed
 * two passes measured the compilers, not the transfer. So after the passes asked for, warm-up goes on while passes
 * still get faster, and ends when {@link #PATIENCE} passes in a row did not beat the best before them by more than
 * {@link #IMPROVEMENT}, or when the time budget is spent (checked before each pass: the last may end past it). The
 * timed pass that follows is measured on its own; nothing here touches it.
 */
final class WarmUp
{
    /** A pass improves on the best before it when it is faster by more than this fraction. */
    static final double IMPROVEMENT = 0.05;
    /** Passes in a row that do not improve, after which warm-up ends. */
    static final int PATIENCE = 3;

    /** Runs warm-up pass {@code pass} (from 1) and tells its GB/s. */
    @FunctionalInterface
    interface PassRunner
    {
        double run(int pass);
    }

    /** Why warm-up ended. */
    enum End
    {
        /** No budget: exactly the passes asked for. */
        FIXED("the passes asked for"),
        /** The passes stopped getting faster. */
        SETTLED(PATIENCE + " passes in a row not " + Math.round(IMPROVEMENT * 100) + "% faster than the best"),
        /** The time budget ran out while passes were still getting faster. */
        BUDGET("the time budget, still improving");

        private final String reason;

        End(final String reason)
        {
            this.reason = reason;
        }

        String reason()
        {
            return reason;
        }
    }

    /**
     * @param passes      warm-up passes run.
     * @param end         why they ended.
     * @param bestGbps    the fastest of them (0 when none ran).
     * @param elapsedNanos from the start of the first to the end of the last.
     */
    record Outcome(int passes, End end, double bestGbps, long elapsedNanos)
    {
    }

    private final int minPasses;
    private final long budgetNanos;
    private final NanoClock clock;

    /**
     * @param minPasses   passes run whatever their figures (the user's {@code --passes} less the timed one).
     * @param budgetNanos the longest warm-up goes on past them while passes improve; 0: exactly {@code minPasses}.
     * @param clock       the clock the budget is kept by.
     */
    WarmUp(final int minPasses, final long budgetNanos, final NanoClock clock)
    {
        if (minPasses < 0 || budgetNanos < 0)
        {
            throw new IllegalArgumentException("minPasses and budgetNanos must not be negative");
        }
        this.minPasses = minPasses;
        this.budgetNanos = budgetNanos;
        this.clock = clock;
    }

    Outcome run(final PassRunner runner)
    {
        final long start = clock.nanoTime();
        double best = 0;
        int notImproved = 0;
        int passes = 0;
        while (true)
        {
            if (passes >= minPasses)
            {
                if (budgetNanos == 0)
                {
                    return new Outcome(passes, End.FIXED, best, clock.nanoTime() - start);
                }
                if (notImproved >= PATIENCE)
                {
                    return new Outcome(passes, End.SETTLED, best, clock.nanoTime() - start);
                }
                final long elapsed = clock.nanoTime() - start;
                if (elapsed >= budgetNanos)
                {
                    return new Outcome(passes, End.BUDGET, best, elapsed);
                }
            }
            final double gbps = runner.run(++passes);
            notImproved = gbps > best * (1 + IMPROVEMENT) ? 0 : notImproved + 1;
            best = Math.max(best, gbps);
        }
    }
}
