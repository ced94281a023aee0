package io.xferd.client;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.SubmitRequestFlyweight;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The reusable request objects a hot loop fills: a batch grows to the largest it held and starts over clean on
 * reset; a request's set clears what the previous use attached.
 */
class TransferBatchTest
{
    @Test
    void shouldGrowPastItsInitialCapacityKeepingEveryEntry()
    {
        final TransferBatch batch = new TransferBatch(0).reset(Opcode.READ, 42);
        for (int i = 0; i < 100; i++)
        {
            batch.add(0x1000 + i, 0x9000 + i, i + 1);
        }

        assertThat(batch.size()).isEqualTo(100);
        assertThat(batch.localAddress(99)).isEqualTo(0x1000 + 99);
        assertThat(batch.targetAddress(0)).isEqualTo(0x9000);
        assertThat(batch.totalLength()).isEqualTo(100 * 101 / 2);
        assertThat(batch.opcode()).isEqualTo(Opcode.READ);
        assertThat(batch.segment()).isEqualTo(42);
    }

    @Test
    void shouldStartOverCleanOnReset()
    {
        final TransferBatch batch = new TransferBatch(2).reset(Opcode.WRITE, 1).traceId(9).notify(new byte[]{1});
        batch.add(1, 2, 3);

        batch.reset(Opcode.READ, 2);

        assertThat(batch.size()).isZero();
        assertThat(batch.totalLength()).isZero();
        assertThat(batch.traceId()).isZero();
        assertThat(batch.notifyMessage()).isNull();
    }

    @Test
    void shouldRefuseANotifyLongerThanARecordCarries()
    {
        final TransferBatch batch = new TransferBatch(1);
        batch.notify(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH]);
        assertThatThrownBy(() -> batch.notify(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + 1]))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldClearTheNotifyAndTraceOfARequestWhenItIsSetAgain()
    {
        final TransferRequest request = TransferRequest.write(1, 2, 3, 4).notify(new byte[]{5}).traceId(6);

        request.set(Opcode.READ, 10, 20, 30, 40);

        assertThat(request.opcode()).isEqualTo(Opcode.READ);
        assertThat(request.localAddress()).isEqualTo(10);
        assertThat(request.segment()).isEqualTo(20);
        assertThat(request.targetAddress()).isEqualTo(30);
        assertThat(request.length()).isEqualTo(40);
        assertThat(request.notifyMessage()).isNull();
        assertThat(request.traceId()).isZero();
    }
}
