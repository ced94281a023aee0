package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.transport.tcp.PeerConnectionLifecycle.State;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.xferd.daemon.transport.tcp.PeerConnectionLifecycle.MAX_RECONNECT_DELAY_NS;
import static io.xferd.daemon.transport.tcp.PeerConnectionLifecycle.MIN_RECONNECT_DELAY_NS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decisions of a pooled peer connection ({@link PeerConnectionLifecycle}), as a specification: every state and
 * transition, the answer deadline at exactly the timeout and 1 ns past it, the reconnect back-off (doubling, capped,
 * reset by a handshake), a channel given up only once, and closing in every state. No sockets, no threads: the test
 * reports the events {@link PeerConnection} would and moves time by hand.
 */
class PeerConnectionLifecycleTest
{
    private static final long TIMEOUT_NS = 5_000_000_000L;
    private static final long START_NS = 1_000_000_000_000L;

    private final PeerConnectionLifecycle<Object> lifecycle = new PeerConnectionLifecycle<>(TIMEOUT_NS);
    private final Object first = new Object();
    private final Object second = new Object();

    @Test
    void shouldStartIdleAndMayConnectAtOnce()
    {
        assertThat(lifecycle.state()).isEqualTo(State.IDLE);
        assertThat(lifecycle.channel()).isNull();
        assertThat(lifecycle.mayConnect(START_NS)).isTrue();
        assertThat(lifecycle.expire(Long.MAX_VALUE)).as("nothing to give up").isNull();
    }

    @Test
    void shouldGoThroughConnectingAndHandshakingToReady()
    {
        assertThat(lifecycle.connecting(first, START_NS)).isTrue();
        assertThat(lifecycle.state()).isEqualTo(State.CONNECTING);
        assertThat(lifecycle.channel()).isSameAs(first);
        assertThat(lifecycle.mayConnect(START_NS)).as("one connection at a time").isFalse();

        assertThat(lifecycle.handshaking(first)).isTrue();
        assertThat(lifecycle.state()).isEqualTo(State.HANDSHAKING);

        assertThat(lifecycle.ready(first)).isTrue();
        assertThat(lifecycle.state()).isEqualTo(State.READY);
        assertThat(lifecycle.channel()).isSameAs(first);
        assertThat(lifecycle.mayConnect(START_NS)).isFalse();
        assertThat(lifecycle.connecting(second, START_NS)).as("a second connect while one is current").isFalse();
        assertThat(lifecycle.channel()).isSameAs(first);
    }

    @Test
    void shouldNotSkipTheHandshake()
    {
        lifecycle.connecting(first, START_NS);

        assertThat(lifecycle.ready(first)).isFalse();
        assertThat(lifecycle.state()).isEqualTo(State.CONNECTING);
    }

    @Test
    void shouldNotAnswerForAChannelThatIsNotCurrent()
    {
        lifecycle.connecting(first, START_NS);

        assertThat(lifecycle.handshaking(second)).isFalse();
        assertThat(lifecycle.broken(second)).isFalse();
        assertThat(lifecycle.broken(null)).isFalse();
        assertThat(lifecycle.state()).isEqualTo(State.CONNECTING);
        assertThat(lifecycle.channel()).isSameAs(first);
    }

    @Test
    void shouldOweNoAnswerWhenReadyAndIdleWhateverTheTime()
    {
        connect(first, START_NS);

        assertThat(lifecycle.expire(START_NS + 100 * TIMEOUT_NS)).isNull();
        assertThat(lifecycle.state()).isEqualTo(State.READY);
    }

    @Test
    void shouldGiveUpAConnectThatTakesPastTheTimeoutAndNotAtExactlyTheTimeout()
    {
        lifecycle.connecting(first, START_NS);

        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS)).as("at exactly the deadline").isNull();
        assertThat(lifecycle.state()).isEqualTo(State.CONNECTING);
        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS + 1)).as("1 ns past it").isSameAs(first);
        assertThat(lifecycle.state()).isEqualTo(State.IDLE);
        assertThat(lifecycle.channel()).isNull();
    }

    @Test
    void shouldGiveUpAHandshakeThatTakesPastTheTimeoutCountedFromTheConnect()
    {
        lifecycle.connecting(first, START_NS);
        lifecycle.handshaking(first);

        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS)).isNull();
        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS + 1)).isSameAs(first);
        assertThat(lifecycle.ready(first)).as("a handshake finishing after it was given up").isFalse();
        assertThat(lifecycle.state()).isEqualTo(State.IDLE);
    }

    @Test
    void shouldGiveUpAConnectionWhoseOldestSliceWaitsPastTheTimeout()
    {
        connect(first, START_NS);
        final long sent = START_NS + 7;
        lifecycle.waitingSince(sent);

        assertThat(lifecycle.expire(sent + TIMEOUT_NS)).as("at exactly the deadline").isNull();
        assertThat(lifecycle.state()).isEqualTo(State.READY);
        assertThat(lifecycle.expire(sent + TIMEOUT_NS + 1)).as("1 ns past it").isSameAs(first);
        assertThat(lifecycle.state()).isEqualTo(State.IDLE);
        assertThat(lifecycle.expire(sent + 2 * TIMEOUT_NS)).as("given up once").isNull();
        assertThat(lifecycle.broken(first)).as("a break noticed afterwards is not a second one").isFalse();
    }

    @Test
    void shouldMoveTheDeadlineWithEachAnswerAndDropItWhenNothingIsInFlight()
    {
        connect(first, START_NS);
        lifecycle.waitingSince(START_NS);
        final long answered = START_NS + TIMEOUT_NS / 2;
        lifecycle.waitingSince(answered);

        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS + 1)).as("the next-oldest slice is younger").isNull();
        assertThat(lifecycle.expire(answered + TIMEOUT_NS + 1)).isSameAs(first);

        connect(second, answered + TIMEOUT_NS + 1);
        lifecycle.waitingSince(START_NS);
        lifecycle.waitingSince(0);
        assertThat(lifecycle.expire(Long.MAX_VALUE)).as("every slice answered").isNull();
    }

    @Test
    void shouldMayReconnectAtOnceAfterABreak()
    {
        connect(first, START_NS);
        lifecycle.waitingSince(START_NS);

        assertThat(lifecycle.broken(first)).isTrue();
        assertThat(lifecycle.broken(first)).as("given up once").isFalse();
        assertThat(lifecycle.state()).isEqualTo(State.IDLE);
        assertThat(lifecycle.channel()).isNull();
        assertThat(lifecycle.mayConnect(START_NS)).isTrue();
        assertThat(lifecycle.expire(Long.MAX_VALUE)).isNull();
    }

    @Test
    void shouldBackOffAfterAFailedConnectUntilExactlyTheDelayHasPassed()
    {
        lifecycle.connecting(first, START_NS);
        final long failed = START_NS + 3 * TIMEOUT_NS;

        lifecycle.connectFailed(failed);

        assertThat(lifecycle.state()).isEqualTo(State.BACKING_OFF);
        assertThat(lifecycle.channel()).isNull();
        assertThat(lifecycle.mayConnect(failed + MIN_RECONNECT_DELAY_NS - 1)).as("1 ns before").isFalse();
        assertThat(lifecycle.connecting(second, failed + MIN_RECONNECT_DELAY_NS - 1))
            .as("a connect the back-off forbids").isFalse();
        assertThat(lifecycle.state()).isEqualTo(State.BACKING_OFF);
    }

    @Test
    void shouldMayConnectAtExactlyTheEndOfTheBackOff()
    {
        lifecycle.connecting(first, START_NS);
        lifecycle.connectFailed(START_NS);

        assertThat(lifecycle.mayConnect(START_NS + MIN_RECONNECT_DELAY_NS - 1)).isFalse();
        assertThat(lifecycle.mayConnect(START_NS + MIN_RECONNECT_DELAY_NS)).isTrue();
        assertThat(lifecycle.state()).as("until a connect starts").isEqualTo(State.BACKING_OFF);
    }

    @Test
    void shouldDoubleTheBackOffUpToTheLongestDelay()
    {
        long now = START_NS;
        long expected = MIN_RECONNECT_DELAY_NS;
        for (int attempt = 0; attempt < 8; attempt++)
        {
            assertThat(lifecycle.connecting(first, now)).isTrue();
            lifecycle.connectFailed(now);

            assertThat(lifecycle.mayConnect(now + expected - 1)).as("attempt %d, 1 ns early", attempt).isFalse();
            assertThat(lifecycle.mayConnect(now + expected)).as("attempt %d, on time", attempt).isTrue();
            now += expected;
            expected = Math.min(MAX_RECONNECT_DELAY_NS, expected * 2);
        }
        assertThat(expected).isEqualTo(MAX_RECONNECT_DELAY_NS);
    }

    @Test
    void shouldBackOffFromTheShortestDelayAgainAfterAHandshakePassed()
    {
        long now = START_NS;
        for (int attempt = 0; attempt < 4; attempt++)
        {
            assertThat(lifecycle.connecting(first, now)).isTrue();
            lifecycle.connectFailed(now);
            now += MAX_RECONNECT_DELAY_NS;
        }
        connect(first, now);
        lifecycle.broken(first);

        assertThat(lifecycle.connecting(second, now)).isTrue();
        lifecycle.connectFailed(now);

        assertThat(lifecycle.mayConnect(now + MIN_RECONNECT_DELAY_NS - 1)).isFalse();
        assertThat(lifecycle.mayConnect(now + MIN_RECONNECT_DELAY_NS)).isTrue();
    }

    @Test
    void shouldBackOffWhenAConnectGivenUpByTheWatchdogThenFails()
    {
        lifecycle.connecting(first, START_NS);
        assertThat(lifecycle.expire(START_NS + TIMEOUT_NS + 1)).isSameAs(first);

        lifecycle.connectFailed(START_NS + TIMEOUT_NS + 2);

        assertThat(lifecycle.state()).isEqualTo(State.BACKING_OFF);
        assertThat(lifecycle.mayConnect(START_NS + TIMEOUT_NS + 2 + MIN_RECONNECT_DELAY_NS - 1)).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = State.class, names = {"IDLE", "CONNECTING", "HANDSHAKING", "READY", "BACKING_OFF"})
    void shouldCloseForGoodInEveryState(final State from)
    {
        bringTo(from);
        final Object current = lifecycle.channel();

        assertThat(lifecycle.close()).as("the channel to close, if any").isSameAs(current);

        assertThat(lifecycle.state()).isEqualTo(State.CLOSED);
        assertThat(lifecycle.channel()).isNull();
        assertThat(lifecycle.close()).as("closing twice").isNull();
        assertThat(lifecycle.mayConnect(Long.MAX_VALUE)).isFalse();
        assertThat(lifecycle.connecting(second, START_NS)).isFalse();
        assertThat(lifecycle.handshaking(first)).isFalse();
        assertThat(lifecycle.ready(first)).isFalse();
        assertThat(lifecycle.broken(first)).isFalse();
        assertThat(lifecycle.expire(Long.MAX_VALUE)).isNull();
        lifecycle.connectFailed(START_NS);
        assertThat(lifecycle.state()).as("a connect failing after the close").isEqualTo(State.CLOSED);
    }

    private void bringTo(final State state)
    {
        switch (state)
        {
            case IDLE ->
            {
            }
            case CONNECTING -> lifecycle.connecting(first, START_NS);
            case HANDSHAKING ->
            {
                lifecycle.connecting(first, START_NS);
                lifecycle.handshaking(first);
            }
            case READY ->
            {
                connect(first, START_NS);
                lifecycle.waitingSince(START_NS);
            }
            case BACKING_OFF ->
            {
                lifecycle.connecting(first, START_NS);
                lifecycle.connectFailed(START_NS);
            }
            default -> throw new IllegalArgumentException(state.name());
        }
        assertThat(lifecycle.state()).isEqualTo(state);
    }

    private void connect(final Object channel, final long nowNs)
    {
        assertThat(lifecycle.connecting(channel, nowNs)).isTrue();
        assertThat(lifecycle.handshaking(channel)).isTrue();
        assertThat(lifecycle.ready(channel)).isTrue();
    }
}
