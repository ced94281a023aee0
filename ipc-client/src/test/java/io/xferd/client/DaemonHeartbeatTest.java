package io.xferd.client;

import io.xferd.ipc.CncFileDescriptor;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hung daemon is told from a live one by its heartbeat's age alone, judged on the injected clock: the test ages
 * the heartbeat by moving the clock, never by waiting.
 */
class DaemonHeartbeatTest
{
    private static final long TIMEOUT_MS = 5_000;

    private final UnsafeBuffer cnc = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
    private final CachedEpochClock clock = new CachedEpochClock();
    private final DaemonHeartbeat heartbeat = new DaemonHeartbeat(cnc, clock, TIMEOUT_MS);

    @Test
    void shouldCountTheDaemonAliveUpToTheTimeoutAndGoneOneMillisecondAfter()
    {
        CncFileDescriptor.heartbeatMs(cnc, 1_000_000);

        clock.update(1_000_000);
        assertThat(heartbeat.staleReason()).isNull();
        clock.update(1_000_000 + TIMEOUT_MS);
        assertThat(heartbeat.staleReason()).isNull();
        clock.update(1_000_000 + TIMEOUT_MS + 1);
        assertThat(heartbeat.staleReason()).isEqualTo("daemon heartbeat is 5001 ms old (timeout 5000 ms)");
    }

    @Test
    void shouldCountTheDaemonAliveAgainOnceItsHeartbeatMoves()
    {
        CncFileDescriptor.heartbeatMs(cnc, 1_000);
        clock.update(1_000 + 2 * TIMEOUT_MS);
        assertThat(heartbeat.staleReason()).isNotNull();

        CncFileDescriptor.heartbeatMs(cnc, clock.time() - 100);

        assertThat(heartbeat.staleReason()).isNull();
    }

    @Test
    void shouldCountADaemonThatNeverBeatAsGone()
    {
        clock.update(1_764_000_000_000L); // a real epoch time; the heartbeat field is still 0
        assertThat(heartbeat.staleReason()).contains("ms old");
    }

    @Test
    void shouldInjectTheClockThroughTheContext()
    {
        final CachedEpochClock injected = new CachedEpochClock();
        assertThat(new ClientContext().epochClock(injected).epochClock()).isSameAs(injected);
        assertThat(new ClientContext().epochClock().time()).isPositive();
    }
}
