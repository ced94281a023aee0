package io.xferd.ipc;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProcessMemoryRegistrationTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(ControlFrame.MAX_FRAME_LENGTH));

    @Test
    void shouldRoundTripAtTheDocumentedOffsets()
    {
        final ControlFrame frame = new ControlFrame().wrap(buffer, 0);
        new ProcessMemoryRegistration(5, 0x7f00_1234_0000L, 1 << 20, "cpu:1").encode(frame);

        assertThat(frame.type()).isEqualTo(6);
        assertThat(frame.length()).isEqualTo(8 + 24 + 4 + 5);
        final ByteBuffer raw = buffer.byteBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        assertThat(raw.getLong(8)).isEqualTo(5);
        assertThat(raw.getLong(16)).isEqualTo(0x7f00_1234_0000L);
        assertThat(raw.getLong(24)).isEqualTo(1 << 20);
        assertThat(raw.getInt(32)).isEqualTo(5);
        assertThat(ProcessMemoryRegistration.decode(new ControlFrame().wrap(buffer, 0)))
            .isEqualTo(new ProcessMemoryRegistration(5, 0x7f00_1234_0000L, 1 << 20, "cpu:1"));
    }

    @Test
    void shouldRefuseTrailingBytes()
    {
        final ControlFrame frame = new ControlFrame().wrap(buffer, 0);
        new ProcessMemoryRegistration(5, 0x1000, 4096, "*").encode(frame);
        frame.putInt(40, 0);

        assertThatThrownBy(() -> ProcessMemoryRegistration.decode(new ControlFrame().wrap(buffer, 0)))
            .isInstanceOf(MalformedFrameException.class);
    }
}
