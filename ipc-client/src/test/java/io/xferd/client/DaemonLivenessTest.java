package io.xferd.client;

import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.xferd.client.ClientParts.CHECK_INTERVAL_NS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The client counts the daemon gone when its control socket ends or its heartbeat goes stale, looks at most once per
 * check interval of the injected clock, and once gone fails every pending task and every later call.
 */
@Timeout(30)
class DaemonLivenessTest
{
    @TempDir
    Path directory;

    private ClientParts parts;
    private DaemonLiveness liveness;

    @BeforeEach
    void connect()
    {
        parts = new ClientParts(directory, 8, 8);
        liveness = parts.liveness;
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldCheckAtOnceAndThenAtMostOncePerInterval()
    {
        assertThat(liveness.checkIfDue()).isTrue();
        assertThat(liveness.checkIfDue()).isFalse();
        parts.nanoClock.advance(CHECK_INTERVAL_NS - 1);
        assertThat(liveness.checkIfDue()).isFalse();
        parts.nanoClock.advance(1);
        assertThat(liveness.checkIfDue()).isTrue();
        assertThat(liveness.isGone()).isFalse();
    }

    @Test
    void shouldNoticeAClosedSocketAtTheNextCheckAndFailEveryPendingTask()
    {
        final BatchTable.Batch batch = parts.batches.batch(parts.batches.allocate(2));
        parts.batches.start(batch, 0);
        liveness.checkIfDue();

        parts.daemon.closeConnection();
        parts.nanoClock.advance(CHECK_INTERVAL_NS - 1);
        liveness.checkIfDue();
        assertThat(liveness.isGone()).as("not looked yet").isFalse();
        parts.nanoClock.advance(1);
        liveness.checkIfDue();

        assertThat(liveness.isGone()).isTrue();
        assertThat(batch.state[0]).isEqualTo(TaskStatus.FAILED);
        assertThat(batch.status[0]).isEqualTo(TransferStatus.DAEMON_GONE);
        assertThat(batch.pending).isZero();
        assertThat(parts.batches.inFlight()).isZero();
        assertThatThrownBy(liveness::checkAlive).isInstanceOf(DaemonGoneException.class)
            .hasMessage("daemon closed the connection");
    }

    @Test
    void shouldCountTheDaemonGoneWhenItsHeartbeatIsOlderThanTheTimeoutThoughItsSocketIsOpen()
    {
        parts.daemon.heartbeat(ClientParts.START_MS);
        parts.epochClock.update(ClientParts.START_MS + FakeDaemon.LIVENESS_TIMEOUT_MS);
        liveness.checkIfDue();
        assertThat(liveness.isGone()).isFalse();

        parts.epochClock.advance(1);
        parts.nanoClock.advance(CHECK_INTERVAL_NS);
        liveness.checkIfDue();

        assertThat(liveness.isGone()).isTrue();
        assertThatThrownBy(liveness::checkAlive).hasMessageContaining("heartbeat is 5001 ms old");
    }

    @Test
    void shouldKeepTheFirstReasonAndStayGone()
    {
        liveness.markGone("no answer from the daemon within 5000 ms");
        liveness.markGone("daemon closed the connection");
        parts.daemon.heartbeat(ClientParts.START_MS);
        parts.nanoClock.advance(CHECK_INTERVAL_NS);
        liveness.checkIfDue();

        assertThatThrownBy(liveness::checkAlive).hasMessage("no answer from the daemon within 5000 ms");
    }
}
