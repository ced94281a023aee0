package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The consumer's filter: it is done when every layer of the timed pass said "layer N", and nothing else counts
 * towards that: not a warm-up pass's "warm-up layer N", not a layer it does not have, not the same layer twice.
 */
class TimedPassNotificationsTest
{
    private final TimedPassNotifications notifications = new TimedPassNotifications(3);

    @Test
    void shouldBeCompleteWhenEveryLayerOfTheTimedPassNotified()
    {
        assertThat(notifications.offer("layer 2")).isTrue();
        assertThat(notifications.offer("layer 0")).isTrue();
        assertThat(notifications.complete()).isFalse();
        assertThat(notifications.offer("layer 1")).isTrue();

        assertThat(notifications.complete()).isTrue();
        assertThat(notifications.count()).isEqualTo(3);
    }

    @Test
    void shouldPassOverWarmUpNotifications()
    {
        for (int layer = 0; layer < 3; layer++)
        {
            assertThat(notifications.offer("warm-up layer " + layer)).isFalse();
        }

        assertThat(notifications.count()).isZero();
    }

    @Test
    void shouldCountALayerOnce()
    {
        notifications.offer("layer 1");
        notifications.offer("layer 1");
        notifications.offer("layer 01");

        assertThat(notifications.count()).as("a repeat or another spelling of layer 1 is not layer 0 or 2").isOne();
    }

    @Test
    void shouldPassOverLayersItDoesNotHaveAndMalformedMessages()
    {
        for (final String message : new String[]{"layer 3", "layer 99", "layer -1", "layer ", "layer", "layer x",
            "layer 1 ", "layer 1x", "layer 99999999999", "Layer 0", " layer 0", ""})
        {
            assertThat(notifications.offer(message)).as(message).isFalse();
        }

        assertThat(notifications.count()).isZero();
    }
}
