package io.xferd.daemon.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Descriptors carry RDMA keys (Mooncake's {@code lkey}/{@code rkey}, one per device) only when RDMA runs: TCP
 * JSON is as before, and JSON written before keys existed still reads.
 */
@Timeout(10)
class SegmentDescriptorKeysTest
{
    @Test
    void shouldRoundTripKeysOnePerDeviceIncludingUnsigned32BitValues()
    {
        final SegmentDescriptor descriptor = new SegmentDescriptor(SegmentDescriptor.VERSION, "h:1/seg", "rdma",
            "h:1", 5, 9, List.of("mlx5_0", "mlx5_1"), null,
            List.of(new SegmentDescriptor.Buffer(0x7f00_0000_0000L, 4096, "cpu:0", List.of(1L, 2L),
                List.of(0xffff_fff0L, 7L))), null);

        final String json = descriptor.toJson();

        assertThat(json).contains("\"lkey\":[1,2]").contains("\"rkey\":[4294967280,7]");
        assertThat(SegmentDescriptor.fromJson(json)).isEqualTo(descriptor);
        assertThat((int)SegmentDescriptor.fromJson(json).buffers().get(0).rkey().get(0).longValue()).isEqualTo(-16);
    }

    @Test
    void shouldWriteTcpBuffersWithoutKeyFields()
    {
        final SegmentDescriptor descriptor = new SegmentDescriptor(SegmentDescriptor.VERSION, "h:1/seg", "tcp",
            "h:1", 5, 9, List.of(), null, List.of(new SegmentDescriptor.Buffer(4096, 8192, "cpu:0")), null);

        assertThat(descriptor.toJson())
            .contains("\"buffers\":[{\"addr\":4096,\"length\":8192,\"location\":\"cpu:0\"}]")
            .doesNotContain("lkey").doesNotContain("rkey");
    }

    @Test
    void shouldReadADescriptorWrittenBeforeKeysExisted()
    {
        final String old = "{\"version\":1,\"name\":\"h:1/seg\",\"protocol\":\"tcp\",\"rpc_address\":\"h:1\"," +
            "\"epoch\":5,\"handle\":9,\"devices\":[],\"buffers\":[{\"addr\":4096,\"length\":8192,\"location\":\"cpu:0\"}]}";

        final SegmentDescriptor.Buffer buffer = SegmentDescriptor.fromJson(old).buffers().get(0);

        assertThat(buffer).isEqualTo(new SegmentDescriptor.Buffer(4096, 8192, "cpu:0"));
        assertThat(buffer.rkey()).isNull();
    }

    @Test
    void shouldContainOnlyRangesInsideTheBufferWithoutOverflow()
    {
        final SegmentDescriptor.Buffer buffer = new SegmentDescriptor.Buffer(4096, 8192, "cpu:0");

        assertThat(buffer.contains(4096, 8192)).isTrue();
        assertThat(buffer.contains(4097, 8192)).isFalse();
        assertThat(buffer.contains(4095, 1)).isFalse();
        assertThat(buffer.contains(4096, 0)).isFalse();
        assertThat(buffer.contains(Long.MAX_VALUE, Long.MAX_VALUE)).isFalse();
    }
}
