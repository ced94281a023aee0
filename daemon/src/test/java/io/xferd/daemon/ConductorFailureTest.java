package io.xferd.daemon;

import io.xferd.daemon.control.ConductorListener;
import io.xferd.daemon.agent.AgentWatch;
import io.xferd.ipc.CncFileDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A daemon whose conductor thread dies does not go on holding its directory with nobody to accept, answer or beat
 * the heart: it reports the failure (the command then exits non-zero for its supervisor to restart it) and closes
 * cleanly, leaving the directory free for the next daemon. The same holds when any other daemon thread ends (a data
 * plane agent, the journal, a peer acceptor): the conductor notices within {@link XferDaemon#AGENT_CHECK_PERIOD_MS}.
 */
@Tag("integration")
@Timeout(120)
class ConductorFailureTest
{
    private final Path directory = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;

    @AfterEach
    void stopDaemon()
    {
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldReportADeadConductorAndLeaveTheDirectoryToTheNextDaemon() throws InterruptedException
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        final CountDownLatch failed = new CountDownLatch(1);
        daemon.onFailure(failed::countDown);
        daemon.conductor().operations(new ConductorListener()
        {
            public void onHousekeeping(final long nowMs)
            {
                throw new IllegalStateException("a bug in housekeeping");
            }
        });

        assertThat(failed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the failure is reported").isTrue();
        assertThat(daemon.failure()).hasMessage("a bug in housekeeping");
        daemon.close();
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).doesNotExist();

        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        assertThat(daemon.failure()).isNull();
        try (var client = io.xferd.client.XferClient.connect(SystemTests.clientContext(directory, "next")))
        {
            assertThat(client.isDaemonGone()).isFalse();
        }
    }

    @Test
    void shouldStopWhenADataPlaneThreadEndsInsteadOfServingWithNobodyToCopy() throws InterruptedException
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        final CountDownLatch failed = new CountDownLatch(1);
        daemon.onFailure(failed::countDown);
        final Thread dataPlane = Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.getName().contains("xferd-transfer-0")).findFirst().orElseThrow();

        dataPlane.interrupt(); // an agent runner ends its loop when interrupted: the thread is gone
        dataPlane.join(WAIT.toMillis());

        assertThat(failed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the failure is reported").isTrue();
        assertThat(daemon.failure()).isInstanceOf(AgentWatch.AgentDiedException.class)
            .hasMessageContaining("xferd-transfer-0");
        daemon.close();
        assertThat(directory.resolve(CncFileDescriptor.CNC_FILE)).doesNotExist();

        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        assertThat(daemon.failure()).isNull();
    }
}
