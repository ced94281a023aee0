package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What one connection keeps in flight: it shuts at its number of slices or at its bytes, whichever comes first, and
 * reopens only once a refill's worth of both has been answered; a slice larger than the whole window still goes,
 * alone.
 */
class SendWindowTest
{
    private static final long MIB = 1 << 20;

    private final SendWindow window = new SendWindow(64, 8 * MIB, 16, 2 * MIB);

    @Test
    void shouldKeepOneSliceOnItsWayWhileAnotherIsAnsweredWhateverTheSliceSize()
    {
        for (final long slice : new long[] {512 * 1024, 3 * MIB, 4 * MIB, 64 * MIB})
        {
            final SendWindow sized = new SendWindow(64, PeerConnection.windowBytes(slice), 16,
                PeerConnection.windowRefillBytes(slice));
            sized.sent(slice);
            assertThat(sized.isFull(1)).as("%d bytes a slice: one in flight", slice).isFalse();
            sized.sent(slice);
            sized.left(slice);
            assertThat(sized.hasReopened(1)).as("%d bytes a slice: one answered of two", slice).isTrue();
        }
        assertThat(PeerConnection.windowBytes(512 * 1024)).isEqualTo(PeerConnection.WINDOW_BYTES);
    }

    @Test
    void shouldShutAtItsBytesLongBeforeItsSlicesWhenSlicesAreLarge()
    {
        int slices = 0;
        while (!window.isFull(slices))
        {
            window.sent(512 * 1024);
            slices++;
        }

        assertThat(slices).as("16 slices of 512 KiB make 8 MiB").isEqualTo(16);
        assertThat(window.bytesInFlight()).isEqualTo(8 * MIB);
    }

    @Test
    void shouldShutAtItsSlicesWhenSlicesAreSmall()
    {
        int slices = 0;
        while (!window.isFull(slices))
        {
            window.sent(4096);
            slices++;
        }

        assertThat(slices).isEqualTo(64);
    }

    @Test
    void shouldReopenOnlyOnceARefillOfBytesHasLeft()
    {
        int slices = 16;
        window.sent(8 * MIB);
        for (int answered = 0; answered < 3; answered++)
        {
            window.left(512 * 1024);
            slices--;
            assertThat(window.hasReopened(slices)).as("after %d answers", answered + 1).isFalse();
        }
        window.left(512 * 1024);
        slices--;

        assertThat(window.hasReopened(slices)).as("2 MiB answered").isTrue();
        assertThat(window.isFull(slices)).isFalse();
    }

    @Test
    void shouldReopenOnlyOnceARefillOfSlicesHasLeft()
    {
        window.sent(64 * 4096);

        assertThat(window.hasReopened(49)).isFalse();
        window.left(15 * 4096);
        assertThat(window.hasReopened(49)).isFalse();
        window.left(4096);
        assertThat(window.hasReopened(48)).isTrue();
    }

    @Test
    void shouldLetASliceLargerThanTheWindowGoAlone()
    {
        assertThat(window.isFull(0)).isFalse();
        window.sent(32 * MIB);

        assertThat(window.isFull(1)).isTrue();
        window.left(32 * MIB);
        assertThat(window.hasReopened(0)).isTrue();
    }

    @Test
    void shouldRefuseARefillLargerThanTheWindow()
    {
        assertThatThrownBy(() -> new SendWindow(64, MIB, 16, 2 * MIB)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SendWindow(8, MIB, 16, MIB / 2)).isInstanceOf(IllegalArgumentException.class);
    }
}
