/**
 * The shared-memory IPC protocol between the xferd daemon and its clients: file layouts, ring records and
 * control frames, each drawn in its class's Javadoc. The byte layout is the protocol; a client in any
 * language can be written from these documents (and {@code ringbuffer/PROTOCOL.md}, which gathers them).
 *
 * <h2>Files in the daemon's directory (default {@code /dev/shm/xferd})</h2>
 * <ul>
 *   <li>{@code xferd.lock}: held with an exclusive {@code flock} by the running daemon.</li>
 *   <li>{@code cnc.dat}: {@link io.xferd.ipc.CncFileDescriptor}: header, the to-daemon ring, counters.</li>
 *   <li>{@code xferd.sock}: the control channel, a Unix stream socket ({@link io.xferd.ipc.ControlFrame},
 *   {@link io.xferd.ipc.ControlMessages}).</li>
 * </ul>
 *
 * <h2>Rings</h2>
 * Both kinds are Agrona ring buffers: power-of-two capacity followed by a 768-byte trailer (tail, head cache,
 * head, correlation counter, consumer heartbeat, each on its own 128-byte line); records carry an 8-byte
 * header (int length including the header, negative while being written; int type) and are 8-byte aligned.
 * <ul>
 *   <li>To-daemon ring (many clients to one daemon, in {@code cnc.dat}): {@link io.xferd.ipc.RecordTypes#SUBMIT}
 *   records ({@link io.xferd.ipc.SubmitRequestFlyweight}). A producer that dies half-way through a record is
 *   skipped by the daemon (Agrona's {@code unblock}) once the ring has made no progress for a while.</li>
 *   <li>Completion ring (daemon to one client, a memfd passed in WELCOME): {@link io.xferd.ipc.RecordTypes#COMPLETION}
 *   ({@link io.xferd.ipc.CompletionFlyweight}) and {@link io.xferd.ipc.RecordTypes#NOTIFICATION}
 *   ({@link io.xferd.ipc.NotificationFlyweight}) records. One ring per client, so a slow client fills only
 *   its own ring. A client keeps at most WELCOME's "max requests in flight" requests outstanding, which
 *   the daemon sizes so completions always fit.</li>
 * </ul>
 *
 * <h2>Session</h2>
 * <ol>
 *   <li>Connect to {@code xferd.sock}, send HELLO with the segment name; receive WELCOME (slot, session
 *   token, own segment handle, completion ring fd). The daemon learns the client's pid from SO_PEERCRED.</li>
 *   <li>Map {@code cnc.dat}, check its header, wrap the to-daemon ring; map the completion ring fd.</li>
 *   <li>Share memory: create a memfd, map it, send REGISTER_MEMORY with the fd. Addresses in requests are
 *   always the owner's own virtual addresses of registered ranges.</li>
 *   <li>OPEN_SEGMENT by name for a segment handle; write SUBMIT records; read COMPLETION records.</li>
 *   <li>Close the socket: the daemon frees everything the client held. The daemon is gone when the socket
 *   reaches end-of-file or the heartbeat in {@code cnc.dat} is older than its liveness timeout.</li>
 * </ol>
 */
package io.xferd.ipc;
