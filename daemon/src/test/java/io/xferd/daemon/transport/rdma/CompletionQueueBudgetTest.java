package io.xferd.daemon.transport.rdma;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CompletionQueueBudgetTest
{
    @Test
    void shouldRefuseASendQueueThatWouldLetTheSharedCompletionQueueOverrun()
    {
        final CompletionQueueBudget budget = new CompletionQueueBudget("mlx5_0", 300);
        budget.reserve(128);
        budget.reserve(128);

        assertThatThrownBy(() -> budget.reserve(128))
            .isInstanceOf(RdmaConnectException.class)
            .hasMessageContaining("mlx5_0")
            .hasMessageContaining("completion queue of 300 entries (256 taken");
        assertThat(budget.reserved()).isEqualTo(256);

        budget.release(128); // a QP destroyed gives its share back
        budget.reserve(128);
        assertThat(budget.reserved()).isEqualTo(256);
    }
}
