package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a path's connections share the slices of each flow: every flow's slices take the connections in turn, however
 * the slices of other flows interleave with them, so no connection carries more of a prompt than another by more than
 * one slice.
 */
class FlowSpreadTest
{
    private final FlowSpread spread = new FlowSpread();

    @Test
    void shouldSplitEveryFlowEvenlyOverTheConnectionsWhateverInterleavesWithIt()
    {
        final int connections = 2;
        final long[][] perConnection = new long[3][connections];
        final int[] slots = {0, 1, 1};
        final long[] traceIds = {7, 8, 9};
        final SplittableRandom random = new SplittableRandom(16);
        for (int i = 0; i < 10_001; i++)
        {
            final int flow = random.nextInt(3); // a long prompt and two short ones, slices in a random interleaving
            perConnection[flow][spread.next(slots[flow], traceIds[flow], connections)]++;
        }

        for (int flow = 0; flow < 3; flow++)
        {
            assertThat(Math.abs(perConnection[flow][0] - perConnection[flow][1])).as("flow %d: %d against %d", flow,
                perConnection[flow][0], perConnection[flow][1]).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void shouldTellApartFlowsWhoseTraceIdsDifferOnlyInTheirHighBits()
    {
        final java.util.Set<Integer> high = new java.util.HashSet<>();
        final java.util.Set<Integer> upper = new java.util.HashSet<>();
        for (long k = 1; k < 1000; k++)
        {
            high.add(FlowSpread.flowOf(0, k << 36));
            upper.add(FlowSpread.flowOf(0, k << 32));
        }
        assertThat(high).as("ids k << 36").hasSizeGreaterThan(FlowSpread.FLOWS / 2);
        assertThat(upper).as("ids k << 32").hasSizeGreaterThan(FlowSpread.FLOWS / 2);
    }

    @Test
    void shouldTakeEachOfThreeConnectionsInTurn()
    {
        final int[] taken = new int[6];
        for (int i = 0; i < taken.length; i++)
        {
            taken[i] = spread.next(3, 42, 3);
        }

        assertThat(taken).containsExactly(taken[0], (taken[0] + 1) % 3, (taken[0] + 2) % 3, taken[0],
            (taken[0] + 1) % 3, (taken[0] + 2) % 3);
    }

    @Test
    void shouldSendEverythingOnTheOnlyConnection()
    {
        for (int i = 0; i < 10; i++)
        {
            assertThat(spread.next(i, i, 1)).isZero();
        }
    }
}
