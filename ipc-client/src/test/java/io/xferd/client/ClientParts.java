package io.xferd.client;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;

/**
 * The client's data-plane parts wired as {@link XferClient} wires them, over a {@link FakeDaemon}, on clocks the
 * test moves. Waiting is deterministic: every idle of a waiting part runs {@link #daemonStep} (what the daemon does
 * meanwhile, if anything) and then moves the monotonic clock on by {@link #IDLE_STEP_NS}.
 */
final class ClientParts implements AutoCloseable
{
    static final long TIMEOUT_MS = 50;
    static final long CHECK_INTERVAL_NS = 1_000_000;
    static final long IDLE_STEP_NS = 1_000_000;
    static final long START_MS = 1_764_000_000_000L;

    final FakeDaemon daemon;
    final CachedNanoClock nanoClock = new CachedNanoClock();
    final CachedEpochClock epochClock = new CachedEpochClock();
    final DaemonProxy proxy;
    final ClientRings rings;
    final BatchTable batches;
    final DaemonHeartbeat heartbeat;
    final DaemonLiveness liveness;
    final CompletionPoller poller;
    final TransferSubmitter submitter;
    final SyncTransfers syncTransfers;
    Runnable daemonStep = () -> {};
    int idles;

    final IdleStrategy idle = new IdleStrategy()
    {
        public void idle(final int workCount)
        {
            if (workCount == 0)
            {
                idle();
            }
        }

        public void idle()
        {
            idles++;
            daemonStep.run();
            nanoClock.advance(IDLE_STEP_NS);
        }

        public void reset()
        {
        }
    };

    ClientParts(final Path directory, final int maxInFlight, final int maxBatchEntries)
    {
        epochClock.update(START_MS);
        daemon = new FakeDaemon(directory, START_MS);
        proxy = daemon.connectProxy();
        rings = daemon.mapClientRings();
        batches = new BatchTable(4);
        heartbeat = new DaemonHeartbeat(daemon.cnc(), epochClock, FakeDaemon.LIVENESS_TIMEOUT_MS);
        liveness = new DaemonLiveness(proxy, heartbeat, batches, nanoClock, CHECK_INTERVAL_NS);
        poller = new CompletionPoller(rings.completionRing(), batches, liveness, nanoClock, idle);
        submitter = new TransferSubmitter(rings.submitRing(), batches, poller, liveness, nanoClock, idle, TIMEOUT_MS,
            maxInFlight, maxBatchEntries);
        syncTransfers = new SyncTransfers(batches, submitter, poller, TIMEOUT_MS, maxBatchEntries);
    }

    @Override
    public void close()
    {
        poller.close();
        rings.close();
        proxy.close();
        daemon.close();
    }
}
