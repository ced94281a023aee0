package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CncFileDescriptorTest
{
    private static final int RING = 64 * 1024;
    private static final int COUNTERS = 64 * 128;

    @Test
    void shouldDescribeAConsistentFile()
    {
        final UnsafeBuffer cnc = new UnsafeBuffer(
            ByteBuffer.allocateDirect((int)CncFileDescriptor.fileLength(RING, COUNTERS)));
        CncFileDescriptor.writeHeader(cnc, RING, COUNTERS, 1234, 1_700_000_000_000L, 2000);

        CncFileDescriptor.checkHeader(cnc);
        assertThat(CncFileDescriptor.daemonPid(cnc)).isEqualTo(1234);
        assertThat(CncFileDescriptor.livenessTimeoutMs(cnc)).isEqualTo(2000);
        assertThat(CncFileDescriptor.toDaemonBuffer(cnc).capacity()).isEqualTo(RING + 768);
        assertThat(CncFileDescriptor.countersMetadataBuffer(cnc).capacity()).isEqualTo(COUNTERS * 4);
        assertThat(CncFileDescriptor.countersValuesBuffer(cnc).capacity()).isEqualTo(COUNTERS);

        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(CncFileDescriptor.toDaemonBuffer(cnc));
        ring.consumerHeartbeatTime(1_700_000_000_123L);
        assertThat(CncFileDescriptor.heartbeatMs(cnc)).isEqualTo(1_700_000_000_123L);
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
            ByteBuffer.allocateDirect((int)CncFileDescriptor.fileLength(RING, COUNTERS)));
        CncFileDescriptor.writeHeader(big, RING, COUNTERS, 1, 1, 1);
        final UnsafeBuffer truncated = new UnsafeBuffer(big, 0, 1024);

        assertThatThrownBy(() -> CncFileDescriptor.checkHeader(truncated))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("truncated");
    }
}
