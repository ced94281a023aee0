package io.xferd.daemon.transport.tcp;

import org.junit.jupiter.api.Test;

import static io.xferd.daemon.transport.tcp.PathPause.MAX_PAUSE_NS;
import static io.xferd.daemon.transport.tcp.PathPause.MIN_PAUSE_NS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A path's pause after a failure ({@link PathPause}), as a specification: usable until it fails, paused until
 * exactly the end of the pause, a back-off doubling up to its cap, not lengthened by failures during a pause, and
 * reset by a successful answer. Time moves by hand.
 */
class PathPauseTest
{
    private static final long START_NS = 1_000_000_000_000L;

    private final PathPause pause = new PathPause();

    @Test
    void shouldBeUsableUntilItFails()
    {
        assertThat(pause.isOver(0)).isTrue();
        assertThat(pause.isOver(START_NS)).isTrue();
        assertThat(pause.pausedUntilNs()).isZero();
    }

    @Test
    void shouldPauseUntilExactlyTheEndOfThePause()
    {
        assertThat(pause.failed(START_NS)).isEqualTo(MIN_PAUSE_NS);

        assertThat(pause.isOver(START_NS)).isFalse();
        assertThat(pause.isOver(START_NS + MIN_PAUSE_NS - 1)).as("1 ns before the end").isFalse();
        assertThat(pause.isOver(START_NS + MIN_PAUSE_NS)).as("at exactly the end").isTrue();
        assertThat(pause.pausedUntilNs()).isEqualTo(START_NS + MIN_PAUSE_NS);
    }

    @Test
    void shouldNotLengthenAPauseForFailuresDuringIt()
    {
        pause.failed(START_NS);

        assertThat(pause.failed(START_NS + MIN_PAUSE_NS - 1)).as("a failure during the pause").isZero();

        assertThat(pause.pausedUntilNs()).isEqualTo(START_NS + MIN_PAUSE_NS);
        assertThat(pause.failed(START_NS + MIN_PAUSE_NS)).as("the next pause doubles once, not twice")
            .isEqualTo(2 * MIN_PAUSE_NS);
    }

    @Test
    void shouldDoubleEachPauseUpToTheLongest()
    {
        long now = START_NS;
        long expected = MIN_PAUSE_NS;
        for (int failure = 0; failure < 10; failure++)
        {
            assertThat(pause.failed(now)).as("failure %d", failure).isEqualTo(expected);
            assertThat(pause.isOver(now + expected - 1)).isFalse();
            assertThat(pause.isOver(now + expected)).isTrue();
            now += expected;
            expected = Math.min(MAX_PAUSE_NS, expected * 2);
        }
        assertThat(pause.failed(now)).as("capped").isEqualTo(MAX_PAUSE_NS);
    }

    @Test
    void shouldPauseForTheShortestTimeAgainAfterAnAnswerSucceeded()
    {
        long now = START_NS;
        for (int failure = 0; failure < 4; failure++)
        {
            now += pause.failed(now);
        }

        pause.resumed();

        assertThat(pause.failed(now)).isEqualTo(MIN_PAUSE_NS);
    }
}
