package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class SubmitBatchFlyweightTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));

    @Test
    void shouldLayOutHeaderPaddedNotifyAndEntriesAsDocumented()
    {
        buffer.setMemory(0, 4096, (byte)0x5A);
        final byte[] notify = "hello".getBytes(StandardCharsets.UTF_8);
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(buffer, 0)
            .header(77, Opcode.WRITE, 2, 0x1_0000_0002L, 9, 123, new UnsafeBuffer(notify), 0, notify.length)
            .entry(0, 0x1000, 0x2000, 64)
            .entry(1, 0x3000, 0x4000, 128);
        final ByteBuffer raw = buffer.byteBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);

        assertThat(raw.getLong(0)).isEqualTo(77);
        assertThat(raw.getInt(8)).isEqualTo(Opcode.WRITE);
        assertThat(raw.getInt(12)).isEqualTo(2);
        assertThat(raw.getLong(16)).isEqualTo(0x1_0000_0002L);
        assertThat(raw.getLong(24)).isEqualTo(9);
        assertThat(raw.getLong(32)).isEqualTo(123);
        assertThat(raw.getInt(40)).isEqualTo(5);
        assertThat(raw.getInt(44)).isZero();
        assertThat(raw.get(48)).isEqualTo((byte)'h');
        assertThat(raw.get(53)).as("notify padding is zero").isZero();
        assertThat(raw.get(55)).isZero();
        assertThat(raw.getLong(56)).as("first entry after align8(5)").isEqualTo(0x1000);
        assertThat(raw.getLong(64)).isEqualTo(0x2000);
        assertThat(raw.getLong(72)).isEqualTo(64);
        assertThat(raw.getLong(80)).isEqualTo(0x3000);
        assertThat(raw.getLong(96)).isEqualTo(128);
        assertThat(SubmitBatchFlyweight.bodyLength(2, 5)).isEqualTo(48 + 8 + 48);
        assertThat(batch.entryOffset(5, 1)).isEqualTo(80);
        assertThat(batch.entryCount()).isEqualTo(2);
        assertThat(batch.notifyLength()).isEqualTo(5);
    }

    @Test
    void shouldWriteEntriesWhereTheHeaderPutThemWithoutReadingTheRecordBack()
    {
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight().wrap(buffer, 64)
            .header(1, Opcode.READ, 1, 2, 0, 3, new UnsafeBuffer(new byte[9]), 0, 9);
        buffer.putInt(64 + SubmitBatchFlyweight.NOTIFY_LENGTH_OFFSET, 0); // the ring's reader may zero it meanwhile

        batch.entry(0, 0x1000, 0x2000, 64);

        assertThat(buffer.getLong(64 + 48 + 16)).as("after the header's align8(9) notify").isEqualTo(0x1000);
        assertThat(buffer.getLong(64 + 48 + 16 + 16)).isEqualTo(64);
    }

    @Test
    void shouldWriteEntriesOfAWrappedRecordAfterTheNotifyItsFieldNames()
    {
        buffer.setMemory(0, 4096, (byte)0);
        buffer.putInt(128 + SubmitBatchFlyweight.NOTIFY_LENGTH_OFFSET, 3);
        final SubmitBatchFlyweight batch = new SubmitBatchFlyweight()
            .wrap(buffer, 0).header(1, Opcode.WRITE, 1, 2, 0, 3, null, 0, 0)
            .wrap(buffer, 128); // a wrap forgets the last header's offset

        batch.entry(1, 0x5000, 0x6000, 32);

        assertThat(buffer.getLong(128 + 48 + 8 + 24)).isEqualTo(0x5000);
        assertThat(buffer.getLong(128 + 48 + 8 + 24 + 8)).isEqualTo(0x6000);
    }

    @Test
    void shouldNeedNoPaddingWithoutNotify()
    {
        assertThat(SubmitBatchFlyweight.bodyLength(1, 0)).isEqualTo(72);
        assertThat(SubmitBatchFlyweight.entriesOffset(0)).isEqualTo(48);
        assertThat(SubmitBatchFlyweight.entriesOffset(256)).isEqualTo(304);
    }
}
