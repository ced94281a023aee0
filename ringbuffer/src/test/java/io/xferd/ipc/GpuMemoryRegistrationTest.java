package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuMemoryRegistrationTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[ControlFrame.MAX_FRAME_LENGTH]);

    private static byte[] handle()
    {
        final byte[] handle = new byte[64];
        for (int i = 0; i < handle.length; i++)
        {
            handle[i] = (byte)(0xA0 + i);
        }
        return handle;
    }

    @Test
    void shouldRoundTripEveryField()
    {
        final GpuMemoryRegistration sent = new GpuMemoryRegistration(42, 0x7f00_0010_0000L, 1L << 30, 4096, handle(),
            "0000:1b:00.0", "cuda:3");
        sent.encode(new ControlFrame().wrap(buffer, 0));

        final ControlFrame frame = new ControlFrame().wrap(buffer, 0);
        assertThat(frame.type()).isEqualTo(ControlMessages.REGISTER_GPU_MEMORY);
        assertThat(frame.length()).isEqualTo(GpuMemoryRegistration.frameLength(6)).isEqualTo(8 + 112 + 4 + 6);
        final GpuMemoryRegistration read = GpuMemoryRegistration.decode(frame);
        assertThat(read.correlationId()).isEqualTo(42);
        assertThat(read.devicePointer()).isEqualTo(0x7f00_0010_0000L);
        assertThat(read.length()).isEqualTo(1L << 30);
        assertThat(read.allocationOffset()).isEqualTo(4096);
        assertThat(read.ipcHandle()).isEqualTo(handle());
        assertThat(read.pciBusId()).isEqualTo("0000:1b:00.0");
        assertThat(read.location()).isEqualTo("cuda:3");
    }

    @Test
    void shouldCarryAnAbsentPciBusIdAsEmpty()
    {
        new GpuMemoryRegistration(1, 0x1000, 64, 0, handle(), "", "cuda:0").encode(new ControlFrame().wrap(buffer, 0));

        assertThat(GpuMemoryRegistration.decode(new ControlFrame().wrap(buffer, 0)).pciBusId()).isEmpty();
    }

    @Test
    void shouldRejectAFrameCutShortOrWithBytesAfterTheLocation()
    {
        new GpuMemoryRegistration(1, 0x1000, 64, 0, handle(), "", "cuda:0").encode(new ControlFrame().wrap(buffer, 0));
        final int length = buffer.getInt(ControlFrame.FRAME_LENGTH_OFFSET);

        buffer.putInt(ControlFrame.FRAME_LENGTH_OFFSET, length + 8);
        assertThatThrownBy(() -> GpuMemoryRegistration.decode(new ControlFrame().wrap(buffer, 0)))
            .isInstanceOf(MalformedFrameException.class).hasMessageContaining("its layout says " + length);

        buffer.putInt(ControlFrame.FRAME_LENGTH_OFFSET, ControlFrame.HEADER_LENGTH + 40);
        assertThatThrownBy(() -> GpuMemoryRegistration.decode(new ControlFrame().wrap(buffer, 0)))
            .isInstanceOf(MalformedFrameException.class).hasMessageContaining("beyond frame length");
    }

    @Test
    void shouldRefuseAHandleThatIsNotSixtyFourBytes()
    {
        assertThatThrownBy(() -> new GpuMemoryRegistration(1, 0x1000, 64, 0, new byte[63], "", "cuda:0"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("64 bytes, not 63");
    }

    @Test
    void shouldReadTheOrdinalOfACudaLocationOnly()
    {
        assertThat(GpuMemoryRegistration.cudaOrdinal("cuda:0")).isZero();
        assertThat(GpuMemoryRegistration.cudaOrdinal("cuda:12")).isEqualTo(12);
        assertThat(GpuMemoryRegistration.cudaOrdinal("cpu:0")).isEqualTo(-1);
        assertThat(GpuMemoryRegistration.cudaOrdinal("cuda:")).isEqualTo(-1);
        assertThat(GpuMemoryRegistration.cudaOrdinal("cuda:1a")).isEqualTo(-1);
        assertThat(GpuMemoryRegistration.cudaOrdinal("cuda:-1")).isEqualTo(-1);
    }
}
