/**
 * The transfer journal: every request's lifecycle with nanosecond timestamps, recorded off the hot path.
 * <h2>For the data plane: {@link io.xferd.daemon.journal.TransferJournal}</h2>
 * Transports call it with primitives only; a call never allocates, locks or waits (a full journal ring drops the
 * event and counts it in {@code SystemCounter.JOURNAL_DROPPED}). With the journal off they get
 * {@link io.xferd.daemon.journal.TransferJournal#DISABLED}, whose methods return at once.
 * <pre>
 *   onSubmitted  intake accepted the request          (client slot, request id, trace id, opcode, length,
 *                                                      client submit ns, daemon intake ns)
 *   onSliced     the request was cut into N slices     (slice count, sliced ns)            transports that slice
 *   onSlice      one slice was sent and acknowledged   (slice index, peer id, NIC id, slice length, sent ns,
 *                                                      ack ns, status)
 *   onCompleted  its completion was written            (status, length, bytes moved, peer id, NIC id, and every
 *                                                      timestamp again: submit, intake, complete)
 * </pre>
 * Timestamps are CLOCK_MONOTONIC ns ({@code System.nanoTime()}; the client's submit time uses the same clock on
 * the same host). The trace id is the client's own ({@code TransferRequest.traceId}): set it to follow one request
 * through the journal ({@code xferd profile --trace}) and the slow-request log line. Peers and NICs are ints:
 * {@link io.xferd.daemon.journal.TransferJournal#nameId(String)} interns a name ("10.0.0.2:12001", "mlx5_0") on the
 * control plane, once per peer or NIC; local transfers use
 * {@link io.xferd.daemon.journal.TransferJournal#PEER_LOCAL} ("local") and
 * {@link io.xferd.daemon.journal.TransferJournal#NIC_SHM} ("shm"). COMPLETED carries everything the profile and
 * the metrics need, so a dropped SUBMITTED or SLICE record costs nothing but that record.
 * <h2>Behind it</h2>
 * {@link io.xferd.daemon.journal.JournalRecorder} writes fixed-size records
 * ({@link io.xferd.daemon.journal.JournalRecordDescriptor}) into an in-process Agrona many-to-one ring;
 * {@link io.xferd.daemon.journal.JournalAgent}, on its own mostly-parked thread, appends them to a Chronicle
 * Queue (rolling cycle files, oldest deleted beyond the retention), feeds the metrics' per-(op, peer, NIC) totals
 * and latency histograms ({@link io.xferd.daemon.journal.TransferStats}) and logs slow requests.
 * {@link io.xferd.daemon.journal.JournalReader} reads a journal back for {@code xferd profile}.
 */
package io.xferd.daemon.journal;
