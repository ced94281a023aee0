package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CncFileDescriptorTest
{
    private static final int COUNTERS = 64 * 128;

    @Test
    void shouldDescribeAConsistentFile()
    {
        final UnsafeBuffer cnc = new UnsafeBuffer(
            ByteBuffer.allocateDirect((int)CncFileDescriptor.fileLength(COUNTERS)));
        CncFileDescriptor.writeHeader(cnc, COUNTERS, 1234, 1_700_000_000_000L, 2000);

        CncFileDescriptor.checkHeader(cnc);
        assertThat(CncFileDescriptor.daemonPid(cnc)).isEqualTo(1234);
        assertThat(CncFileDescriptor.livenessTimeoutMs(cnc)).isEqualTo(2000);
        assertThat(CncFileDescriptor.heartbeatMs(cnc)).as("starts at the start time").isEqualTo(1_700_000_000_000L);
        assertThat(CncFileDescriptor.countersMetadataBuffer(cnc).capacity()).isEqualTo(COUNTERS * 4);
        assertThat(CncFileDescriptor.countersValuesBuffer(cnc).capacity()).isEqualTo(COUNTERS);
        assertThat(CncFileDescriptor.fileLength(COUNTERS)).isEqualTo(128 + COUNTERS * 5L);

        CncFileDescriptor.heartbeatMs(cnc, 1_700_000_000_123L);
        assertThat(CncFileDescriptor.heartbeatMs(cnc)).isEqualTo(1_700_000_000_123L);
    }

    @Test
    void shouldPlaceTheHeaderAtTheDocumentedLittleEndianOffsets()
    {
        final UnsafeBuffer cnc = new UnsafeBuffer(
            ByteBuffer.allocateDirect((int)CncFileDescriptor.fileLength(COUNTERS)));
        CncFileDescriptor.writeHeader(cnc, COUNTERS, 4321, 1000L, 3000);
        CncFileDescriptor.heartbeatMs(cnc, 5000L);
        final ByteBuffer raw = cnc.byteBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);

        assertThat(raw.getInt(0)).isEqualTo(0x44524658);
        assertThat(raw.getInt(4)).isEqualTo(2);
        assertThat(raw.getInt(12)).isEqualTo(COUNTERS * 4);
        assertThat(raw.getInt(16)).isEqualTo(COUNTERS);
        assertThat(raw.getLong(24)).isEqualTo(4321);
        assertThat(raw.getLong(32)).isEqualTo(1000);
        assertThat(raw.getLong(40)).isEqualTo(3000);
        assertThat(raw.getLong(48)).isEqualTo(5000);
    }

    @Test
    void shouldRejectAFileWhoseMagicIsNotYetWritten()
    {
        final UnsafeBuffer cnc = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));

        assertThatThrownBy(() -> CncFileDescriptor.checkHeader(cnc))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("not ready");
    }

    @Test
    void shouldRejectATruncatedFile()
    {
        final UnsafeBuffer big = new UnsafeBuffer(
            ByteBuffer.allocateDirect((int)CncFileDescriptor.fileLength(COUNTERS)));
        CncFileDescriptor.writeHeader(big, COUNTERS, 1, 1, 1);
        final UnsafeBuffer truncated = new UnsafeBuffer(big, 0, 1024);

        assertThatThrownBy(() -> CncFileDescriptor.checkHeader(truncated))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("truncated");
    }
}
