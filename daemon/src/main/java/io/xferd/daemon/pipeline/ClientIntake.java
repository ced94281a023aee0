package io.xferd.daemon.pipeline;

import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;

/**
 * What intake keeps about one connected client between duty cycles: its batch trackers (made at its first batch)
 * and the batch it is half-way through publishing when the pipeline filled up. Intake thread only.
 */
final class ClientIntake
{
    final ClientSession session;
    BatchTrackerPool batchTrackers;
    BatchTracker partialBatch;

    ClientIntake(final ClientSession session)
    {
        this.session = session;
    }
}
