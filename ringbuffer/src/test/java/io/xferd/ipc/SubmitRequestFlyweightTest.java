package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class SubmitRequestFlyweightTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(1024));
    private final SubmitRequestFlyweight request = new SubmitRequestFlyweight();

    @Test
    void shouldRoundTripEveryField()
    {
        final byte[] notify = "layer-3 done".getBytes(StandardCharsets.UTF_8);
        request.wrap(buffer, 8)
            .clearReserved().opcode(Opcode.WRITE).requestId(42)
            .segmentHandle(0x1_0000_0003L).localAddress(0x7f00_0000_1000L).targetAddress(0x7e00_0000_2000L)
            .length(1 << 20).traceId(99).submitNanos(123_456_789L).putNotify(notify, 0, notify.length);

        final SubmitRequestFlyweight read = new SubmitRequestFlyweight().wrap(buffer, 8);
        assertThat(read.opcode()).isEqualTo(Opcode.WRITE);
        assertThat(read.requestId()).isEqualTo(42);
        assertThat(read.segmentHandle()).isEqualTo(0x1_0000_0003L);
        assertThat(read.localAddress()).isEqualTo(0x7f00_0000_1000L);
        assertThat(read.targetAddress()).isEqualTo(0x7e00_0000_2000L);
        assertThat(read.length()).isEqualTo(1 << 20);
        assertThat(read.traceId()).isEqualTo(99);
        assertThat(read.submitNanos()).isEqualTo(123_456_789L);
        assertThat(read.notifyLength()).isEqualTo(notify.length);
        final byte[] copy = new byte[notify.length];
        buffer.getBytes(read.notifyOffset(), copy);
        assertThat(copy).isEqualTo(notify);
    }

    @Test
    void shouldPlaceFieldsAtTheDocumentedLittleEndianOffsets()
    {
        buffer.setMemory(0, 16, (byte)0x5A);
        request.wrap(buffer, 0).clearReserved().opcode(Opcode.READ).requestId(0x0102030405060708L).length(4096)
            .noNotify();
        final ByteBuffer raw = buffer.byteBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);

        assertThat(raw.getInt(0)).as("reserved, zero").isZero();
        assertThat(raw.getInt(4)).isEqualTo(Opcode.READ);
        assertThat(raw.getLong(8)).as("reserved, zero: no secret in shared memory").isZero();
        assertThat(raw.getLong(16)).isEqualTo(0x0102030405060708L);
        assertThat(raw.getLong(48)).isEqualTo(4096);
        assertThat(raw.getInt(72)).isZero();
        assertThat(SubmitRequestFlyweight.recordLength(0)).isEqualTo(80);
        assertThat(SubmitRequestFlyweight.MAX_LENGTH).isEqualTo(336);
    }
}
