package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The daemon's budget of file buffers: taken whole or not at all, never below zero, given back.
 */
class FileBufferBudgetTest
{
    @Test
    void shouldTakeWhatIsLeftAndRefuseMore()
    {
        final FileBufferBudget budget = new FileBufferBudget(3 << 20);

        assertThat(budget.tryTake(1 << 20)).isTrue();
        assertThat(budget.tryTake(2 << 20)).isTrue();
        assertThat(budget.tryTake(1)).as("spent").isFalse();
        assertThat(budget.left()).isZero();

        budget.giveBack(1 << 20);
        assertThat(budget.tryTake(2 << 20)).as("not a part of it").isFalse();
        assertThat(budget.tryTake(1 << 20)).isTrue();
    }

    @Test
    void shouldBoundAConnectionsBuffersByItsBudgetAndTheChannelsQueue()
    {
        assertThat(FileSegmentResponder.answerCount(1 << 20, 64L << 20)).isEqualTo(BufferedChannel.MAX_ANSWERS - 1);
        assertThat(FileSegmentResponder.answerCount(4 << 20, 64L << 20)).isEqualTo(16);
        assertThat(FileSegmentResponder.answerCount(64 << 20, 64L << 20)).isEqualTo(1);
    }
}
