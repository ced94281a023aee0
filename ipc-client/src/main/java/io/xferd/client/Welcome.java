package io.xferd.client;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;

/**
 * What the daemon told this client in WELCOME: its limits, its own segment, and the rings file it made for it.
 *
 * @param clientSlot           the daemon's slot for this client.
 * @param maxInFlight          the most requests (a batch record counts as one) this client may have unanswered.
 * @param segmentHandle        the handle of this client's own segment.
 * @param maxRequestLength     the longest single request the daemon accepts.
 * @param maxBatchEntries      the most entries one SUBMIT_BATCH record may carry.
 * @param segmentRpcPort       this segment's own RPC port when HELLO asked LISTEN, else 0.
 * @param segmentName          the full segment name, {@code host:port/name}.
 * @param completionRingLength the completion ring's length with its trailer, at offset 0 of the rings file.
 * @param submitRingLength     the submit ring's length with its trailer, after the completion ring.
 * @param ringsFd              the rings file's descriptor, now this process's to map and close.
 */
record Welcome(
    int clientSlot,
    int maxInFlight,
    long segmentHandle,
    long maxRequestLength,
    int maxBatchEntries,
    int segmentRpcPort,
    String segmentName,
    int completionRingLength,
    int submitRingLength,
    int ringsFd)
{
    /**
     * @param frame a frame of type {@link ControlMessages#WELCOME}.
     */
    static Welcome decode(final ControlFrame frame, final int ringsFd)
    {
        return new Welcome(
            frame.getInt(ControlMessages.WELCOME_CLIENT_SLOT),
            frame.getInt(ControlMessages.WELCOME_MAX_IN_FLIGHT),
            frame.getLong(ControlMessages.WELCOME_SEGMENT_HANDLE),
            frame.getLong(ControlMessages.WELCOME_MAX_REQUEST_LENGTH),
            frame.getInt(ControlMessages.WELCOME_MAX_BATCH_ENTRIES),
            frame.getInt(ControlMessages.WELCOME_SEGMENT_RPC_PORT),
            frame.getString(ControlMessages.WELCOME_SEGMENT_NAME),
            frame.getInt(ControlMessages.WELCOME_COMPLETION_RING_LENGTH),
            frame.getInt(ControlMessages.WELCOME_SUBMIT_RING_LENGTH),
            ringsFd);
    }
}
