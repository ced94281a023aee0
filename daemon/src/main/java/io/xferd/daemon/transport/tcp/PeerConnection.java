package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * One pooled TCP connection to a peer daemon. A sender thread takes slices from this connection's queue and
 * writes them (bytes straight from registered memory), keeping up to a window of slices in flight; a receiver
 * thread reads the answers, in whatever order the peer sends them (each names its slice, see
 * {@link InFlightSlices}), and completes the slices (a READ's bytes land straight in registered memory). GPU and
 * process memory cross each thread's {@link StagingBuffer} instead. When the connection
 * breaks or its oldest slice waits past the transfer timeout, every slice on it fails with a typed status and
 * the connection is re-established for the next slice.
 */
final class PeerConnection implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);
    private static final int WINDOW = 64;
    // a full window reopens for the sender once this many slices are answered: it then sends them back to back, in
    // one gathering write, instead of one write per answer that trickles in
    static final int WINDOW_REFILL = 16;
    // bytes in flight, which a slice queued now waits behind whatever the scheduler decides: 8 slices of 512 KiB,
    // reopening at 3 MiB; the peer answers at least every MiB received (BufferedChannel.ANSWER_BATCH_BYTES), so the
    // window reopens while 2-3 MiB are still on their way and the wire does not idle while the sender wakes
    static final long WINDOW_BYTES = 4L << 20;
    static final long WINDOW_REFILL_BYTES = 1L << 20;
    private static final long WINDOW_PARK_NS = 1_000_000L;

    /**
     * @return the bytes a connection keeps in flight: {@link #WINDOW_BYTES}, or two slices where slices are larger
     * (so that one is always on its way while the other's answer comes back, never one slice at a time).
     */
    static long windowBytes(final long sliceSize)
    {
        return Math.max(WINDOW_BYTES, 2 * sliceSize);
    }

    /**
     * @return the bytes answered after which a full window reopens: {@link #WINDOW_REFILL_BYTES}, or one slice.
     */
    static long windowRefillBytes(final long sliceSize)
    {
        return Math.max(WINDOW_REFILL_BYTES, sliceSize);
    }
    // spins, then yields, then sleep until a slice is offered (the producer unparks): no timed parks in between,
    // each of which costs a futex and a timer, and a stream of small requests idles between every batch of them
    private static final int IDLE_SPINS = 50;
    private static final int IDLE_YIELDS = 10;
    private static final int IDLES_BEFORE_SLEEP = IDLE_SPINS + IDLE_YIELDS;
    private static final long MAX_SLEEP_NS = 10_000_000L;
    // with nothing in flight there is nothing to strand: only an offer or close (both unpark) has work for it
    private static final long IDLE_SLEEP_NS = 500_000_000L;
    // the largest WRITE slice a submitting thread sends itself when the connection is idle: small enough that an idle
    // socket takes it without blocking (a READ's request is a header whatever its length)
    static final long INLINE_MAX_WRITE_BYTES = 16 * 1024;

    private final PeerLink link;
    private final PeerPath path;
    private final int number;
    private final TcpTransport transport;
    private final NanoClock clock;
    // when to connect, back off and give up; which channel is current (the decisions, apart from the I/O here)
    private final PeerConnectionLifecycle<SocketChannel> lifecycle;
    private final ManyToOneConcurrentArrayQueue<Slice> sendQueue = new ManyToOneConcurrentArrayQueue<>(4096);
    // the sender's order over what was queued: the smallest flow so far first (sender thread only)
    private final SliceScheduler scheduler = new SliceScheduler();
    // after a slice, the sender spins this long before backing off (idle strategy spin-backoff; else 0): the next
    // small request of a client that waits for each answer (a READ answered in tens of us) finds it awake
    private final long spinAfterSendNanos;
    // the receiver takes answered slices by the id their answer names, and whoever notices a break fails the rest
    private final InFlightSlices inFlight = new InFlightSlices(2 * WINDOW);
    private final SendWindow window;
    private static final int MAX_GATHER = 16;
    private static final long MAX_GATHER_BYTES = 1 << 20;
    private final ByteBuffer notifyHeader =
        FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.NOTIFY_FIELDS_LENGTH);
    // tags of the frames sent on the current connection (sender thread only; replaced at each handshake)
    private FrameMac out;
    // requests queued back to back leave in one gathering write: headers from this pool, payloads as views
    private final ByteBuffer[] headers = new ByteBuffer[MAX_GATHER];
    private final ByteBuffer[] gather = new ByteBuffer[2 * MAX_GATHER];
    private final RegionWindows payloadWindows = new RegionWindows(MAX_GATHER + 1);
    private final StagingBuffer staging;
    // a staged (GPU or process memory) WRITE being sent, as send() took it before the slice went in flight (sender
    // thread only): the region with the sender's own borrow (null when it could not be borrowed), where and how
    // much, and which use of it
    private io.xferd.daemon.memory.Region stagedRegion;
    private long stagedAddress;
    private long stagedLength;
    private int stagedGeneration;
    private int gatherCount;
    private int gatherSlices;
    private long gatherBytes;
    private SocketChannel gatherChannel;
    private final Thread sender;
    // set while the sender waits for the window to reopen, so that the receiver wakes it when it has (Dekker style,
    // as senderAsleep)
    private volatile boolean senderAwaitsWindow;
    // set while the sender sleeps on an empty queue, so that whoever queues a slice wakes it (Dekker style:
    // the sender sets it and then looks at the queue, the producer queues and then looks at it)
    private volatile boolean senderAsleep;
    // who may write requests on the socket and touch the sender's state (scheduler, gather, frame tags): the sender
    // thread, except while it sleeps on an empty queue, when a submitting thread may take it to send one slice
    private final AtomicBoolean sending = new AtomicBoolean();
    private volatile long inlineSends;
    private volatile long epoch;
    private volatile boolean running = true;

    PeerConnection(final PeerLink link, final PeerPath path, final int number, final TcpTransport transport)
    {
        this.link = link;
        this.path = path;
        this.number = number;
        this.transport = transport;
        this.clock = transport.clock();
        this.window = new SendWindow(WINDOW, windowBytes(transport.sliceSize()), WINDOW_REFILL,
            windowRefillBytes(transport.sliceSize()));
        this.lifecycle = new PeerConnectionLifecycle<>(transport.timeoutMs() * 1_000_000L);
        this.staging = transport.newStagingBuffer();
        this.spinAfterSendNanos = transport.spinAfterWorkNanos();
        this.sender = new Thread(this::sendLoop, "xferd-peer-out-" + path.remoteHost() + "-" + number);
        this.sender.setDaemon(true);
        this.sender.start();
    }

    /**
     * Queue a slice; false when the queue is full (the caller retries).
     */
    boolean offer(final Slice slice)
    {
        if (!sendQueue.offer(slice))
        {
            return false;
        }
        if (senderAsleep)
        {
            LockSupport.unpark(sender);
        }
        return true;
    }

    /**
     * Send a small slice from the calling thread, when nothing else is queued or in flight on this connection and
     * its sender sleeps: a lone READ then skips the hand-off to the sender thread (a futex wake-up, tens of
     * microseconds, on a round trip a TCP ping-pong makes in about 40). Never connects, never waits for the window.
     *
     * @return true when the slice was sent (or failed) here; false when the caller must {@link #offer} it.
     */
    boolean trySendInline(final Slice slice)
    {
        if (!senderAsleep || slice.kind != Slice.DATA || (slice.transfer.opcode == Opcode.WRITE &&
            (slice.length > INLINE_MAX_WRITE_BYTES || !slice.transfer.local.isMapped())) ||
            !sending.compareAndSet(false, true))
        {
            return false;
        }
        try
        {
            final SocketChannel current = lifecycle.channel();
            if (!senderAsleep || current == null || lifecycle.state() != PeerConnectionLifecycle.State.READY ||
                !sendQueue.isEmpty() || !scheduler.isEmpty() || !inFlight.isEmpty() || gatherCount != 0)
            {
                return false;
            }
            inlineSends++;
            sendOn(current, slice);
            flushGather();
            return true;
        }
        finally
        {
            sending.set(false);
        }
    }

    /**
     * @return how many slices submitting threads sent themselves (tests).
     */
    long inlineSends()
    {
        return inlineSends;
    }

    boolean isSenderAsleep()
    {
        return senderAsleep;
    }

    private void acquireSending()
    {
        while (!sending.compareAndSet(false, true))
        {
            Thread.onSpinWait();
        }
    }

    private void sendLoop()
    {
        acquireSending();
        for (int i = 0; i < MAX_GATHER; i++)
        {
            headers[i] = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH);
        }
        // a short back-off keeps a busy stream off the futex; after it the sender sleeps until a slice comes
        final IdleStrategy idle = new BackoffIdleStrategy(IDLE_SPINS, IDLE_YIELDS, 1_000, 50_000);
        int idles = 0;
        long spinUntilNanos = 0;
        while (running)
        {
            final Slice slice = nextSlice();
            if (slice == null)
            {
                flushGather();
                if (lifecycle.channel() == null && !inFlight.isEmpty())
                {
                    failStranded();
                }
                if (idles == 0 && spinAfterSendNanos > 0 && System.nanoTime() - spinUntilNanos < 0)
                {
                    Thread.onSpinWait();
                }
                else if (idles < IDLES_BEFORE_SLEEP)
                {
                    idles++;
                    idle.idle();
                }
                else
                {
                    sleepUntilOffered();
                }
                continue;
            }
            idles = 0;
            idle.reset();
            send(slice);
            if (spinAfterSendNanos > 0)
            {
                spinUntilNanos = System.nanoTime() + spinAfterSendNanos;
            }
            if (scheduler.isEmpty() && sendQueue.isEmpty())
            {
                flushGather();
            }
        }
        flushGather();
        staging.close();
        Slice slice;
        while ((slice = nextSlice()) != null)
        {
            transport.finishSlice(slice, TransferStatus.SHUTTING_DOWN, path);
        }
        sending.set(false);
    }

    /**
     * @return the slice to send next among all queued so far (see {@link SliceScheduler}), or null when none is.
     */
    private Slice nextSlice()
    {
        Slice queued;
        while ((queued = sendQueue.poll()) != null)
        {
            scheduler.add(queued);
        }
        return scheduler.poll();
    }

    private void sleepUntilOffered()
    {
        if (inFlight.isEmpty())
        {
            // nothing queued, nothing on the wire: what the flows were sent no longer says who is under way
            scheduler.forgetIdleFlows();
        }
        senderAsleep = true;
        sending.set(false);
        if (sendQueue.isEmpty() && running)
        {
            // bounded, so stranded slices of a broken connection are still noticed without a producer
            LockSupport.parkNanos(inFlight.isEmpty() ? IDLE_SLEEP_NS : MAX_SLEEP_NS);
        }
        senderAsleep = false;
        acquireSending();
    }

    private void send(final Slice slice)
    {
        final SocketChannel current = connectedChannel();
        if (current == null)
        {
            transport.finishSlice(slice, TransferStatus.TRANSPORT_ERROR, path);
            return;
        }
        sendOn(current, slice);
    }

    private void sendOn(final SocketChannel current, final Slice slice)
    {
        final RemoteTransfer transfer = slice.transfer;
        if (epoch != transfer.target.epoch())
        {
            // the peer restarted since the segment was opened: its handles mean nothing now
            transport.finishSlice(slice, TransferStatus.UNKNOWN_SEGMENT, path);
            return;
        }
        if (window.isFull(inFlight.size()) || !inFlight.hasRoom())
        {
            flushGather();
            awaitWindow(current);
        }
        if (lifecycle.channel() != current)
        {
            transport.finishSlice(slice, TransferStatus.TRANSPORT_ERROR, path);
            return;
        }
        if (!inFlight.hasRoom())
        {
            // the wait ended without room (closing): the slice is failed here, not half sent
            transport.finishSlice(slice, running ? TransferStatus.TRANSPORT_ERROR : TransferStatus.SHUTTING_DOWN, path);
            return;
        }
        slice.sentNanos = clock.nanoTime();
        if (inFlight.isEmpty())
        {
            lifecycle.waitingSince(slice.sentNanos);
        }
        if (slice.kind == Slice.DATA && transfer.opcode == Opcode.WRITE && !transfer.local.isMapped())
        {
            // the request's borrow can end as soon as the slice is in flight (a break fails it): copies out of the
            // device memory hold a borrow of their own; a slice still ours has its request's, so this only fails
            // once the owner has let the region go
            stagedRegion = transfer.local.tryAcquire() ? transfer.local : null;
            stagedAddress = transfer.localAddress + slice.offset;
            stagedLength = slice.length;
            stagedGeneration = slice.generation;
            // a slice retried here after its copy failed on a path that then broke starts clean
            slice.stagingFailure = TransferStatus.OK;
        }
        window.sent(slice.length);
        inFlight.add(slice);
        try
        {
            writeRequest(current, slice, transfer);
        }
        catch (final IOException | RuntimeException ex)
        {
            // also a runtime failure (no pinned memory for a GPU slice): its frame may be cut short
            resetGather();
            broken(current, "send failed: " + ex);
        }
        finally
        {
            final io.xferd.daemon.memory.Region borrowed = stagedRegion;
            if (borrowed != null)
            {
                stagedRegion = null;
                borrowed.release();
            }
        }
        if (lifecycle.channel() != current)
        {
            resetGather();
            failStranded();
        }
    }

    /**
     * The window is full: sleep (no spinning, on a small host the receiver needs the CPU) until the receiver has
     * taken {@link #WINDOW_REFILL} answers and {@link #WINDOW_REFILL_BYTES} bytes, the connection breaks, or the
     * transport closes; bounded, so nothing is missed for long.
     */
    private void awaitWindow(final SocketChannel current)
    {
        senderAwaitsWindow = true;
        while (!(window.hasReopened(inFlight.size()) && inFlight.hasRoom()) && running &&
            lifecycle.channel() == current)
        {
            LockSupport.parkNanos(WINDOW_PARK_NS);
        }
        senderAwaitsWindow = false;
    }

    /**
     * A slice left the window (answered or failed): wake the sender if it waits for the window to reopen.
     */
    private void windowFreed()
    {
        if (senderAwaitsWindow && window.hasReopened(inFlight.size()) && inFlight.hasRoom())
        {
            LockSupport.unpark(sender);
        }
    }

    private void flushGather()
    {
        final SocketChannel current = gatherChannel;
        if (gatherCount == 0 || current == null)
        {
            return;
        }
        try
        {
            long remaining = 0;
            for (int i = 0; i < gatherCount; i++)
            {
                remaining += gather[i].remaining();
            }
            while (remaining > 0)
            {
                remaining -= current.write(gather, 0, gatherCount);
            }
            transport.bytesSent(gatherBytes);
        }
        catch (final IOException ex)
        {
            broken(current, "send failed: " + ex);
        }
        finally
        {
            resetGather();
        }
    }

    private void resetGather()
    {
        for (int i = 0; i < gatherCount; i++)
        {
            gather[i] = null;
        }
        gatherCount = 0;
        gatherSlices = 0;
        gatherBytes = 0;
        gatherChannel = null;
    }

    /**
     * The path cannot be reached now: hand every queued slice back at once (the transport retries each on
     * another path) instead of letting them wait here for connect attempts one by one.
     */
    private void failQueued()
    {
        Slice slice;
        while ((slice = nextSlice()) != null)
        {
            transport.finishSlice(slice, TransferStatus.TRANSPORT_ERROR, path);
        }
    }

    /**
     * Fail slices left in flight by a connection that broke while they were being queued.
     */
    private void failStranded()
    {
        Slice slice;
        while ((slice = takeInFlight()) != null)
        {
            transport.finishSlice(slice, TransferStatus.TRANSPORT_ERROR, path);
        }
    }

    /**
     * @return a slice in flight, taken out of it (and out of the window's bytes), or null when none is.
     */
    private Slice takeInFlight()
    {
        final Slice slice = inFlight.takeAny();
        if (slice != null)
        {
            window.left(slice.length);
        }
        return slice;
    }

    /**
     * @return the slice in flight that the answer with {@code wireId} answers, taken out of it (and out of the
     * window's bytes), or null when none is (an unknown id, or one answered already).
     */
    private Slice takeAnswered(final long wireId)
    {
        final Slice slice = inFlight.take(wireId);
        if (slice != null)
        {
            window.left(slice.length);
        }
        return slice;
    }

    private void writeRequest(final SocketChannel current, final Slice slice, final RemoteTransfer transfer)
        throws IOException
    {
        if (slice.kind == Slice.NOTIFY)
        {
            flushGather();
            final byte[] source = transfer.submitter.segmentNameUtf8();
            final int bodyLength = PeerProtocol.NOTIFY_FIELDS_LENGTH + source.length + transfer.notifyLength;
            notifyHeader.clear();
            notifyHeader.putInt(bodyLength).putInt(PeerProtocol.NOTIFY)
                .putLong(slice.inFlightId).putLong(transfer.target.remoteHandle()).putLong(transfer.traceId)
                .putInt(source.length).putInt(transfer.notifyLength);
            final int tagAt = PeerProtocol.HEADER_LENGTH + PeerProtocol.NOTIFY_SIGNED_LENGTH;
            out.start(bodyLength, PeerProtocol.NOTIFY);
            out.update(notifyHeader, PeerProtocol.HEADER_LENGTH, tagAt);
            out.update(source, 0, source.length);
            out.update(transfer.notify, 0, transfer.notifyLength);
            out.finishInto(notifyHeader, tagAt);
            notifyHeader.position(tagAt + PeerProtocol.TAG_LENGTH).flip();
            FrameIo.writeFully(current, notifyHeader);
            FrameIo.writeFully(current, ByteBuffer.wrap(source));
            FrameIo.writeFully(current, ByteBuffer.wrap(transfer.notify, 0, transfer.notifyLength));
            return;
        }
        if (gatherChannel != null && gatherChannel != current)
        {
            resetGather();
        }
        gatherChannel = current;
        final boolean write = transfer.opcode == Opcode.WRITE;
        final ByteBuffer header = headers[gatherSlices++];
        final int bodyLength = PeerProtocol.REQUEST_FIELDS_LENGTH + (write ? (int)slice.length : 0);
        final int type = write ? PeerProtocol.WRITE : PeerProtocol.READ;
        final int tagAt = PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_SIGNED_LENGTH;
        header.clear();
        header.putInt(bodyLength)
            .putInt(type)
            .putLong(slice.inFlightId)
            .putLong(transfer.target.remoteHandle())
            .putLong(transfer.targetAddress + slice.offset)
            .putLong(slice.length)
            .putLong(transfer.targetAddress)
            .putLong(transfer.length);
        out.sign(bodyLength, type, header, PeerProtocol.HEADER_LENGTH, tagAt);
        header.position(tagAt + PeerProtocol.TAG_LENGTH).flip();
        gather[gatherCount++] = header;
        if (write && !transfer.local.isMapped())
        {
            flushGather();
            if (lifecycle.channel() == current)
            {
                writeStaged(current, slice);
            }
            return;
        }
        if (write)
        {
            gather[gatherCount++] = payloadWindows.window(transfer.local,
                transfer.local.offsetOf(transfer.localAddress) + slice.offset, slice.length);
            gatherBytes += slice.length;
        }
        if (gatherSlices == MAX_GATHER || gatherBytes >= MAX_GATHER_BYTES)
        {
            flushGather();
        }
    }

    /**
     * A WRITE from GPU or process memory, after its header: chunk by chunk through the staging buffer. A failed copy
     * cannot take back the header, so the frame is completed with zeros and the slice fails when its answer comes.
     */
    private void writeStaged(final SocketChannel current, final Slice slice) throws IOException
    {
        // the slice is in flight, so a break noticed by another thread (the receiver, the watchdog) may fail it,
        // finish its request and recycle both: only what send() took before the slice went in flight is used here
        final long sent = stagedRegion == null ? 0 :
            staging.send(current, stagedRegion, stagedAddress, stagedLength, false);
        if (sent < stagedLength)
        {
            if (slice.generation == stagedGeneration)
            {
                slice.stagingFailure = stagedRegion == null ? TransferStatus.TRANSPORT_ERROR :
                    staging.lastSendFailure();
            }
            staging.pad(current, stagedLength - sent);
        }
        transport.bytesSent(stagedLength);
    }

    private void receiveLoop(final SocketChannel current, final FrameMac in)
    {
        final BufferedChannel answers = new BufferedChannel(current, clock, 64 * 1024, 0);
        final RegionWindows landing = new RegionWindows(1);
        final StagingBuffer landingStaging = transport.newStagingBuffer();
        // the slice whose answer is being read, for the failure path (made once per connection, not per answer)
        final Slice[] answering = new Slice[1];
        try
        {
            while (running && lifecycle.channel() == current)
            {
                // one answer a call: a method of its own is compiled after a few thousand answers, where the body of
                // this loop ran interpreted until on-stack replacement, ~60,000 answers (a minute of traffic) in
                receiveAnswer(answers, in, landing, landingStaging, answering);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (answering[0] != null)
            {
                // its answer was being read when the connection failed: it is no longer in flight anywhere
                transport.finishSlice(answering[0], TransferStatus.TRANSPORT_ERROR, path);
            }
            broken(current, ex.toString());
        }
        finally
        {
            landingStaging.close();
        }
    }

    /**
     * Read one answer and finish the slice it answers (its READ payload landed first); {@code answering[0]} holds
     * that slice while its answer is being read.
     */
    private void receiveAnswer(final BufferedChannel answers, final FrameMac in, final RegionWindows landing,
        final StagingBuffer landingStaging, final Slice[] answering) throws IOException
    {
        final ByteBuffer ackHeader = answers.require(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
        final int base = ackHeader.position();
        final int bodyLength = ackHeader.getInt();
        final int type = ackHeader.getInt();
        if (!in.verify(bodyLength, type, ackHeader, base + PeerProtocol.HEADER_LENGTH,
            base + PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH))
        {
            throw new FrameAuthenticationException(type);
        }
        final long wireId = ackHeader.getLong();
        final int status = ackHeader.getInt();
        ackHeader.getInt();
        final long length = ackHeader.getLong();
        ackHeader.position(base + PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
        if (type != PeerProtocol.ACK || bodyLength != PeerProtocol.ACK_FIELDS_LENGTH + length)
        {
            throw new IOException("answer out of step with the requests (type " + type + ", slice " +
                wireId + " length " + length + " body " + bodyLength + ")");
        }
        final boolean oldest = inFlight.isOldest(wireId);
        final Slice slice = takeAnswered(wireId);
        if (slice == null)
        {
            // an id never sent, or answered twice: nothing on this connection can be trusted to be in step
            throw new IOException("answer to slice " + wireId + ", which is not in flight on this connection");
        }
        windowFreed();
        answering[0] = slice;
        // the peer owes the oldest slice's answer longest: its clock restarts only when that one is answered
        // (in order, that is every answer); answers to younger slices do not hide a stalled one
        if (inFlight.oldestSentNanos() == InFlightSlices.NONE_IN_FLIGHT)
        {
            lifecycle.waitingSince(0);
        }
        else if (oldest)
        {
            lifecycle.waitingSince(clock.nanoTime());
        }
        final RemoteTransfer transfer = slice.transfer;
        // a READ answered OK carries exactly its slice's bytes; every other answer carries none: an OK
        // with fewer (none at all), more, or bytes where none belong fails the slice, never completes it
        final long expected = status == TransferStatus.OK && slice.kind == Slice.DATA &&
            transfer.opcode == Opcode.READ ? slice.length : 0;
        if (length != expected)
        {
            answering[0] = null;
            transport.finishSlice(slice, TransferStatus.TRANSPORT_ERROR, path);
            throw new IOException("answer with a payload of " + length + " bytes to a slice expecting " +
                expected);
        }
        if (length > 0)
        {
            if (!transfer.local.isMapped())
            {
                final int landed = landingStaging.receive(answers, transfer.local,
                    transfer.localAddress + slice.offset, length);
                if (landed != TransferStatus.OK)
                {
                    transport.bytesReceived(length);
                    answering[0] = null;
                    transport.failStaging(slice, path, landed);
                    return;
                }
            }
            else
            {
                answers.readFully(landing.window(transfer.local,
                    transfer.local.offsetOf(transfer.localAddress) + slice.offset, length));
            }
            transport.bytesReceived(length);
        }
        else if (!transfer.local.isMapped() && slice.stagingFailure != TransferStatus.OK)
        {
            answering[0] = null;
            transport.failStaging(slice, path, slice.stagingFailure);
            return;
        }
        answering[0] = null;
        transport.finishSlice(slice, status, path);
    }

    private SocketChannel connectedChannel()
    {
        final SocketChannel current = lifecycle.channel();
        if (current != null)
        {
            return current;
        }
        final long now = clock.nanoTime();
        if (!lifecycle.mayConnect(now))
        {
            return null;
        }
        failStranded();
        SocketChannel fresh = null;
        try
        {
            fresh = SocketChannel.open();
            fresh.setOption(StandardSocketOptions.TCP_NODELAY, true);
            fresh.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            transport.socketTuning().apply(fresh, path.remoteHost());
            if (!lifecycle.connecting(fresh, now))
            {
                throw new IOException("connection closed");
            }
            if (path.bindAddress() != null)
            {
                // leave through this path's NIC
                fresh.bind(new InetSocketAddress(path.bindAddress(), 0));
            }
            fresh.socket().connect(new InetSocketAddress(path.remoteHost(), path.remotePort()),
                (int)transport.timeoutMs());
            if (!lifecycle.handshaking(fresh))
            {
                throw new IOException("connection given up while connecting");
            }
            // answers are matched to requests by id (InFlightSlices): the peer may send each as soon as it is ready
            final PeerSession session = PeerHandshake.asInitiator(fresh, transport.authenticator(),
                PeerProtocol.FLAG_ANSWERS_BY_ID);
            epoch = session.peerEpoch();
            out = session.out();
            if (!lifecycle.ready(fresh))
            {
                throw new IOException("connection given up during the handshake");
            }
            link.connected(this, epoch);
            final SocketChannel established = fresh;
            final FrameMac in = session.in();
            final Thread receiver = new Thread(() -> receiveLoop(established, in),
                "xferd-peer-ack-" + path.remoteHost() + "-" + number);
            receiver.setDaemon(true);
            receiver.start();
            return fresh;
        }
        catch (final IOException | RuntimeException ex)
        {
            // back off from the moment the attempt failed (a connect can take the whole timeout)
            lifecycle.connectFailed(clock.nanoTime());
            closeQuietly(fresh);
            link.connectFailed(this, ex);
            path.failed("cannot connect: " + ex);
            failQueued();
            return null;
        }
    }

    /**
     * Close the connection when it has waited on its peer longer than the timeout: the blocked threads wake with
     * an error and fail their slices. Called by the transport's watchdog.
     */
    void checkTimeout(final long nowNanos)
    {
        final SocketChannel late = lifecycle.expire(nowNanos);
        if (late != null)
        {
            transport.sliceTimedOut();
            givenUp(late, "no answer for " + transport.timeoutMs() + " ms");
        }
    }

    private void broken(final SocketChannel which, final String reason)
    {
        if (lifecycle.broken(which))
        {
            givenUp(which, reason);
        }
        else if (lifecycle.channel() == null)
        {
            // already broken by another thread: slices queued since then must not wait for an answer
            failStranded();
        }
    }

    private void givenUp(final SocketChannel which, final String reason)
    {
        closeQuietly(which);
        path.failed(reason);
        failStranded();
        if (senderAwaitsWindow)
        {
            // only a sender waiting for the window: one inside a copy or a write must not be woken from its own park
            LockSupport.unpark(sender);
        }
        link.lost(this, reason);
    }

    long epoch()
    {
        return epoch;
    }

    private static void closeQuietly(final SocketChannel channel)
    {
        if (channel != null)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignore)
            {
                // closing anyway
            }
        }
    }

    @Override
    public void close()
    {
        running = false;
        LockSupport.unpark(sender);
        final SocketChannel current = lifecycle.close();
        if (current != null)
        {
            givenUp(current, "daemon shutting down");
        }
        try
        {
            sender.join(2000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
