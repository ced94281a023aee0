package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Serves one connection from a peer daemon: handshake, then each request in order. Every WRITE, READ and
 * NOTIFY is checked against the target segment's registered regions; bytes go straight between the socket and
 * the target's mapping (the region is borrowed for the duration, so its owner's death cannot unmap it), or for
 * GPU and process memory through this thread's {@link StagingBuffer}, a chunk per copy.
 */
final class PeerSessionHandler implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(PeerSessionHandler.class);
    // a slice travels in one frame whose length is an int, and lands through one ByteBuffer (the request may be
    // larger, up to the configured maximum, but not one slice of it)
    static final long MAX_SLICE_LENGTH =
        Integer.MAX_VALUE - Math.max(PeerProtocol.REQUEST_FIELDS_LENGTH, PeerProtocol.ACK_FIELDS_LENGTH);

    private final SocketChannel channel;
    private final PeerServer server;
    private final SessionTable registry;
    private final CompletionSender sender;
    // made once the peer is admitted: nothing bigger than the handshake's frames is spent on a stranger
    private BufferedChannel buffered;
    private final long acceptedNanos;
    private volatile boolean admitted;
    private volatile boolean cutOff;
    // the flags of the initiator's HELLO
    private int initiatorFlags;
    private Thread thread;
    private ByteBuffer fields;
    // the session's keys, once the handshake is done: checks of what the initiator sends, tags of what goes back
    private FrameMac in;
    private FrameMac out;
    private final byte[] notifySource = new byte[ControlFrame.MAX_STRING_LENGTH];
    private final UnsafeBuffer notifyMessage = new UnsafeBuffer(new byte[SubmitRequestFlyweight.MAX_NOTIFY_LENGTH]);
    private final RegionWindows landing = new RegionWindows(1);
    // queued READ answers hold their windows until the batch is sent, at most MAX_ANSWERS of them
    private final RegionWindows answerWindows = new RegionWindows(BufferedChannel.MAX_ANSWERS + 1);
    private StagingBuffer staging;
    private FileSegmentResponder files;
    private final AtomicCounter refused;
    private final AtomicCounter bytesReceived;
    private final AtomicCounter bytesSent;
    // the segment whose own port accepted this connection (descriptor fetches name it whatever they ask), or null
    private final ClientSession pinned;

    PeerSessionHandler(
        final SocketChannel channel,
        final PeerServer server,
        final SessionTable registry,
        final CompletionSender sender,
        final SystemCounters counters,
        final long acceptedNanos)
    {
        this(channel, server, registry, sender, counters, acceptedNanos, null);
    }

    PeerSessionHandler(
        final SocketChannel channel,
        final PeerServer server,
        final SessionTable registry,
        final CompletionSender sender,
        final SystemCounters counters,
        final long acceptedNanos,
        final ClientSession pinned)
    {
        this.pinned = pinned;
        this.channel = channel;
        this.acceptedNanos = acceptedNanos;
        this.server = server;
        this.registry = registry;
        this.sender = sender;
        this.refused = counters.get(SystemCounter.REMOTE_ACCESS_REFUSED);
        this.bytesReceived = counters.get(SystemCounter.REMOTE_BYTES_RECEIVED);
        this.bytesSent = counters.get(SystemCounter.REMOTE_BYTES_SENT);
        counters.get(SystemCounter.PEER_CONNECTIONS_IN).increment();
    }

    @Override
    public void run()
    {
        String peer = "?";
        boolean inHandshake = true;
        try
        {
            peer = String.valueOf(channel.getRemoteAddress());
            final PeerSession session = PeerHandshake.asResponder(channel, server.authenticator(),
                flags -> initiatorFlags = flags);
            inHandshake = false;
            server.handshakeEnded(this);
            if (session == null)
            {
                LOG.warn("refused peer {} in the handshake (refused, or it could not prove the cluster token)", peer);
                return;
            }
            in = session.in();
            out = session.out();
            buffered = new BufferedChannel(channel, server.clock(), 256 * 1024,
                PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
            buffered.signAnswersWith(out);
            if ((initiatorFlags & PeerProtocol.FLAG_ANSWERS_BY_ID) != 0)
            {
                buffered.answerInAnyOrder();
            }
            staging = StagingBuffer.create(server.context(), server.counters());
            final int bufferSize = server.context().stagingBufferSize();
            files = new FileSegmentResponder(buffered, server::storageStage, new FileAnswers(
                FileSegmentResponder.answerCount(bufferSize, FileSegmentResponder.CONNECTION_BUDGET_BYTES),
                bufferSize, server.fileBuffers()), server.counters(), answerWindows, landing);
            admitted = true;
            while (true)
            {
                // one frame a call: a method of its own is compiled after a few thousand frames, where the body of
                // this loop ran interpreted until on-stack replacement, ~60,000 frames in
                serveFrame();
            }
        }
        catch (final EOFException ex)
        {
            LOG.debug("peer {} closed its connection", peer);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (!cutOff)
            {
                LOG.info("peer connection from {} ended: {}", peer, ex.toString());
            }
        }
        finally
        {
            if (inHandshake)
            {
                server.handshakeEnded(this);
            }
            if (buffered != null)
            {
                buffered.discard();
            }
            if (staging != null)
            {
                staging.close();
            }
            if (files != null)
            {
                files.close(); // after discard(): waits for requests still in flight into its buffers
            }
            close();
            server.closed(this);
        }
    }

    /**
     * Read the next frame's header and serve the frame.
     */
    private void serveFrame() throws IOException
    {
        buffered.frameDone();
        final ByteBuffer header = buffered.require(PeerProtocol.HEADER_LENGTH);
        buffered.frameStarted(server.clock().nanoTime());
        final int length = header.getInt();
        final int type = header.getInt();
        switch (type)
        {
            case PeerProtocol.GET_SEGMENT -> onGetSegment(length);
            case PeerProtocol.WRITE -> onWrite(length);
            case PeerProtocol.READ -> onRead(length);
            case PeerProtocol.NOTIFY -> onNotify(length);
            case PeerProtocol.CONNECT_QP -> onTransportRequest(type, length);
            default -> throw new IOException("unknown peer frame type " + type);
        }
    }

    private void onGetSegment(final int length) throws IOException
    {
        if (length < PeerProtocol.TAG_LENGTH || length - PeerProtocol.TAG_LENGTH > ControlFrame.MAX_STRING_LENGTH)
        {
            throw new IOException("GET_SEGMENT of " + length + " bytes");
        }
        final ByteBuffer name = readControlBody(PeerProtocol.GET_SEGMENT, length);
        final String segmentName = FrameIo.utf8(name);
        final ClientSession session = pinned != null ? pinned : registry.byName(segmentName);
        final byte[] answer;
        final int status;
        if (session == null || session.isClosed())
        {
            status = TransferStatus.UNKNOWN_SEGMENT;
            answer = (pinned != null ? "the segment of this port is gone" : segmentName.isEmpty() ?
                server.advertisedAddress() + " is the RPC port of a daemon serving many segments: name one as " +
                "host:port/name, or use the segment's own port" :
                "no segment named " + segmentName + " at " + server.advertisedAddress())
                .getBytes(StandardCharsets.UTF_8);
            refused.increment();
        }
        else
        {
            status = TransferStatus.OK;
            answer = describe(session).toJson().getBytes(StandardCharsets.UTF_8);
        }
        final ByteBuffer body = FrameIo.newBuffer(4 + answer.length);
        body.putInt(status).put(answer).flip();
        final byte[] bytes = new byte[body.remaining()];
        body.get(bytes);
        buffered.flush();
        FrameIo.sendFrame(channel, out, PeerProtocol.DESCRIPTOR, bytes);
    }

    /**
     * The body of a control frame, its tag checked.
     *
     * @return the body without its tag.
     */
    private ByteBuffer readControlBody(final int type, final int length) throws IOException
    {
        final ByteBuffer body = FrameIo.newBuffer(length);
        buffered.readFully(body);
        final int end = length - PeerProtocol.TAG_LENGTH;
        if (!in.verify(length, type, body, 0, end))
        {
            throw new FrameAuthenticationException(type);
        }
        return body.position(0).limit(end);
    }

    /**
     * The fixed fields of a data frame (in the input buffer, at its position), their tag checked; the position is
     * left on the first field.
     */
    private void readSignedFields(final int bodyLength, final int type, final int signedLength) throws IOException
    {
        fields = buffered.require(signedLength + PeerProtocol.TAG_LENGTH);
        final int from = fields.position();
        if (!in.verify(bodyLength, type, fields, from, from + signedLength))
        {
            throw new FrameAuthenticationException(type);
        }
    }

    private void skipTag()
    {
        fields.position(fields.position() + PeerProtocol.TAG_LENGTH);
    }

    /**
     * A request a transport serves (the RDMA QP exchange): answered with the handler's body, or refused with
     * its reason; the connection stays usable either way.
     */
    private void onTransportRequest(final int type, final int length) throws IOException
    {
        if (length < PeerProtocol.TAG_LENGTH || length > PeerProtocol.MAX_CONTROL_BODY)
        {
            throw new IOException("request of type " + type + " with " + length + " bytes");
        }
        final ByteBuffer body = readControlBody(type, length);
        final byte[] request = new byte[body.remaining()];
        body.get(request);
        final PeerRequestHandler handler = server.handler(type);
        byte[] answer;
        int answerType = type + 1;
        if (handler == null)
        {
            answerType = PeerProtocol.REFUSE;
            answer = ("daemon at " + server.advertisedAddress() + " does not serve request type " + type +
                " (its transport is " + server.context().protocol() + ")").getBytes(StandardCharsets.UTF_8);
        }
        else
        {
            try
            {
                answer = handler.answer(request);
            }
            catch (final RuntimeException ex)
            {
                answerType = PeerProtocol.REFUSE;
                answer = String.valueOf(ex.getMessage()).getBytes(StandardCharsets.UTF_8);
                refused.increment();
            }
        }
        buffered.flush();
        FrameIo.sendFrame(channel, out, answerType, answer);
    }

    private SegmentDescriptor describe(final ClientSession session)
    {
        return server.describe(session);
    }

    private void onWrite(final int bodyLength) throws IOException
    {
        readSignedFields(bodyLength, PeerProtocol.WRITE, PeerProtocol.REQUEST_SIGNED_LENGTH);
        final long sliceId = fields.getLong();
        final long handle = fields.getLong();
        final long address = fields.getLong();
        final long length = fields.getLong();
        final long requestAddress = fields.getLong();
        final long requestLength = fields.getLong();
        skipTag();
        if (bodyLength != PeerProtocol.REQUEST_FIELDS_LENGTH + Math.max(0, length))
        {
            // the frame carries a payload of another size than the slice claims: no skip can keep it in step
            throw new IOException("WRITE frame of " + bodyLength + " bytes for a slice of " + length);
        }
        // the slice that ends its request is what the initiator's client waits for (a batch of small requests
        // coalesced into one, its last): its answer leaves before the next read, not once the next slice was read
        final boolean endsRequest = address + length == requestAddress + requestLength;
        final ClientSession target = registry.segment(handle);
        final int check = check(target, address, length, requestAddress, requestLength);
        int status = check;
        if (check == TransferStatus.OK)
        {
            final Region region = target.regions().find(address, length);
            if (region != null && region.tryAcquire())
            {
                final MemorySegment pages = region.isFile() ? filePages(region, true) : null;
                if (pages != null)
                {
                    // a file on tmpfs, received into as memory: the responder answers and releases the borrow
                    files.receiveIntoPages(pages, sliceId, region, address, length, endsRequest);
                    bytesReceived.getAndAdd(length);
                    return;
                }
                if (region.isFile() && fileWrite(sliceId, region, address, length))
                {
                    // the answer owns the borrow and carries the write's status once the stage has written it
                    bytesReceived.getAndAdd(length);
                    return;
                }
                int placed = TransferStatus.OK;
                try
                {
                    if (region.isMapped())
                    {
                        buffered.readFully(landing.window(region, region.offsetOf(address), length));
                    }
                    else
                    {
                        // device or process memory: a copy that fails leaves the rest of the payload read and
                        // dropped, so the stream stays in step
                        placed = staging.receive(buffered, region, address, length);
                    }
                    bytesReceived.getAndAdd(length);
                }
                finally
                {
                    region.release();
                }
                status = placed != TransferStatus.OK ? placed :
                    target.isClosed() ? TransferStatus.TARGET_GONE : TransferStatus.OK;
            }
            else
            {
                status = TransferStatus.TARGET_GONE;
                buffered.skip(length);
            }
        }
        else if (length > 0)
        {
            buffered.skip(length);
        }
        sendAck(sliceId, status, Math.max(0, length), endsRequest);
    }

    private void onRead(final int bodyLength) throws IOException
    {
        readSignedFields(bodyLength, PeerProtocol.READ, PeerProtocol.REQUEST_SIGNED_LENGTH);
        final long sliceId = fields.getLong();
        final long handle = fields.getLong();
        final long address = fields.getLong();
        final long length = fields.getLong();
        final long requestAddress = fields.getLong();
        final long requestLength = fields.getLong();
        skipTag();
        if (bodyLength != PeerProtocol.REQUEST_FIELDS_LENGTH)
        {
            throw new IOException("READ frame of " + bodyLength + " bytes");
        }
        final ClientSession target = registry.segment(handle);
        final int check = check(target, address, length, requestAddress, requestLength);
        if (check != TransferStatus.OK)
        {
            sendAck(sliceId, check, 0, false);
            return;
        }
        // the header first: taking it may flush earlier answers, which must not happen with the region borrowed
        ByteBuffer header = buffered.nextAnswerHeader();
        final Region region = target.regions().find(address, length);
        if (region == null || !region.tryAcquire())
        {
            header.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                .putLong(sliceId).putInt(TransferStatus.TARGET_GONE).putInt(0).putLong(0);
            buffered.answer(null, null);
            return;
        }
        if (region.isFile())
        {
            final MemorySegment pages = filePages(region, false);
            if (pages != null && files.answerFromPages(header, pages, sliceId, region, address, length))
            {
                return; // a file on tmpfs, answered from as memory: the borrow is the channel's or released
            }
            if (fileRead(sliceId, region, address, length))
            {
                return; // its bytes are counted by the file responder, as they leave
            }
            // the attempt may have sent answers and compacted the queue: the header taken above is stale now
            header = buffered.nextAnswerHeader();
        }
        if (!region.isMapped())
        {
            answerStaged(header, sliceId, region, address, length);
            return;
        }
        header.putInt(PeerProtocol.ACK_FIELDS_LENGTH + (int)length).putInt(PeerProtocol.ACK)
            .putLong(sliceId).putInt(TransferStatus.OK).putInt(0).putLong(length);
        final ByteBuffer payload;
        try
        {
            payload = answerWindows.window(region, region.offsetOf(address), length);
        }
        catch (final RuntimeException ex)
        {
            region.release();
            throw ex;
        }
        // from here the channel owns the borrow: it releases the region once the bytes have left (or failed to)
        buffered.answer(payload, region);
        bytesSent.getAndAdd(length);
    }

    /**
     * @return the file region's pages when they are served as memory ({@link FileSegmentResponder#pagesOf}); the
     * borrow is released here if mapping them throws.
     */
    private static MemorySegment filePages(final Region region, final boolean write)
    {
        try
        {
            return FileSegmentResponder.pagesOf(region, write);
        }
        catch (final RuntimeException ex)
        {
            region.release();
            throw ex;
        }
    }

    /**
     * A WRITE into a file region through the storage stage ({@link FileSegmentResponder}); the borrow is released
     * here if the connection fails before the stage took it.
     */
    private boolean fileWrite(final long sliceId, final Region region, final long address, final long length)
        throws IOException
    {
        try
        {
            return files.write(sliceId, region, address, length);
        }
        catch (final IOException | RuntimeException ex)
        {
            region.release();
            throw ex;
        }
    }

    /**
     * A READ of a file region through the storage stage ({@link FileSegmentResponder}), as {@link #fileWrite}.
     */
    private boolean fileRead(final long sliceId, final Region region, final long address, final long length)
        throws IOException
    {
        try
        {
            return files.read(sliceId, region, address, length);
        }
        catch (final IOException | RuntimeException ex)
        {
            region.release();
            throw ex;
        }
    }

    /**
     * A READ of GPU or process memory cannot wait in the output queue (the staging buffer is reused), so it goes
     * now: earlier answers and its header, then the payload a chunk at a time. The first chunk is staged before the
     * header, so a copy that fails there is answered with its status; one that fails later cannot take back the
     * promised length, so the connection is closed and the initiator fails the slice.
     */
    private void answerStaged(
        final ByteBuffer header, final long sliceId, final Region region, final long address, final long length)
        throws IOException
    {
        try
        {
            int staged;
            try
            {
                staged = staging.stage(region, address, (int)Math.min(staging.capacity(), length));
            }
            catch (final RuntimeException ex)
            {
                LOG.warn("no staging memory for a READ of {}: {}", region, ex.toString());
                staged = TransferStatus.TRANSPORT_ERROR;
            }
            if (staged != TransferStatus.OK)
            {
                header.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
                    .putLong(sliceId).putInt(staged).putInt(0).putLong(0);
                buffered.answer(null, null);
                return;
            }
            header.putInt(PeerProtocol.ACK_FIELDS_LENGTH + (int)length).putInt(PeerProtocol.ACK)
                .putLong(sliceId).putInt(TransferStatus.OK).putInt(0).putLong(length);
            buffered.answer(null, null);
            buffered.flush();
            if (staging.send(channel, region, address, length, true) < length)
            {
                throw new IOException("copy from " + region + " failed in the middle of a READ answer");
            }
            bytesSent.getAndAdd(length);
        }
        finally
        {
            region.release();
        }
    }

    private void onNotify(final int bodyLength) throws IOException
    {
        fields = buffered.require(PeerProtocol.NOTIFY_FIELDS_LENGTH);
        final int from = fields.position();
        // the tag covers source and message too: check it once they are read, before anything is delivered
        in.start(bodyLength, PeerProtocol.NOTIFY);
        in.update(fields, from, from + PeerProtocol.NOTIFY_SIGNED_LENGTH);
        final ByteBuffer tag = FrameIo.newBuffer(PeerProtocol.TAG_LENGTH);
        for (int i = 0; i < PeerProtocol.TAG_LENGTH; i++)
        {
            tag.put(i, fields.get(from + PeerProtocol.NOTIFY_SIGNED_LENGTH + i));
        }
        final long sliceId = fields.getLong();
        final long handle = fields.getLong();
        final long traceId = fields.getLong();
        final int sourceLength = fields.getInt();
        final int messageLength = fields.getInt();
        skipTag();
        if (sourceLength < 0 || sourceLength > notifySource.length || messageLength < 0 ||
            messageLength > SubmitRequestFlyweight.MAX_NOTIFY_LENGTH ||
            bodyLength != PeerProtocol.NOTIFY_FIELDS_LENGTH + sourceLength + messageLength)
        {
            throw new IOException("malformed NOTIFY");
        }
        final ByteBuffer body = FrameIo.newBuffer(sourceLength + messageLength);
        buffered.readFully(body);
        in.update(body, 0, body.capacity());
        if (!in.finishAndCheck(tag, 0))
        {
            throw new FrameAuthenticationException(PeerProtocol.NOTIFY);
        }
        body.flip();
        final byte[] source = new byte[sourceLength];
        body.get(source);
        final byte[] message = new byte[messageLength];
        body.get(message);
        notifyMessage.putBytes(0, message);
        final ClientSession target = registry.segment(handle);
        int status = TransferStatus.UNKNOWN_SEGMENT;
        if (target != null && target.tryAcquire())
        {
            try
            {
                sender.notify(target, traceId, source, notifyMessage, messageLength);
                status = TransferStatus.OK;
            }
            finally
            {
                target.release();
            }
        }
        sendAck(sliceId, status, 0, false);
    }

    /**
     * The slice must lie inside its request, and the whole request inside one registered region: a request
     * that reaches past it is refused in every slice, so no part of it is written or read.
     */
    private int check(
        final ClientSession target,
        final long address,
        final long length,
        final long requestAddress,
        final long requestLength)
    {
        final int status;
        if (target == null || target.isClosed())
        {
            status = TransferStatus.UNKNOWN_SEGMENT;
        }
        else if (length <= 0 || length > MAX_SLICE_LENGTH || requestLength < length ||
            requestLength > server.context().maxRequestLength() ||
            address < requestAddress || address - requestAddress > requestLength - length)
        {
            status = TransferStatus.INVALID_LENGTH;
        }
        else
        {
            final Region region = target.regions().find(requestAddress, requestLength);
            if (region == null)
            {
                status = TransferStatus.TARGET_RANGE_NOT_REGISTERED;
            }
            else
            {
                return TransferStatus.OK;
            }
        }
        refused.increment();
        return status;
    }

    /**
     * Queue an answer; answers leave together once no request is waiting, or when enough bytes are queued, or,
     * when {@code endsRequest}, before the next read from the socket (see {@link BufferedChannel#answerEndingRequest}).
     */
    private void sendAck(final long sliceId, final int status, final long writeBytes, final boolean endsRequest)
        throws IOException
    {
        buffered.nextAnswerHeader().putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK)
            .putLong(sliceId).putInt(status).putInt(0).putLong(0);
        if (endsRequest)
        {
            buffered.answerEndingRequest(writeBytes);
        }
        else
        {
            buffered.answer(null, null, writeBytes);
        }
    }

    ClientSession pinned()
    {
        return pinned;
    }

    /**
     * @return how many gathering writes of answers this connection made (tests), 0 before it was admitted.
     */
    long answerWrites()
    {
        return admitted ? buffered.flushes() : 0;
    }

    /**
     * Cut the connection off when its handshake, or a frame in the middle of which it stalls, has taken longer than
     * {@code timeoutNanos}: the serving thread wakes with an error, answers nothing for that frame and releases what
     * it borrowed. Called by the deadline thread.
     */
    void checkDeadline(final long nowNanos, final long timeoutNanos)
    {
        if (cutOff)
        {
            return;
        }
        final String why;
        if (!admitted)
        {
            why = nowNanos - acceptedNanos > timeoutNanos ? "did not finish the handshake" : null;
        }
        else
        {
            final BufferedChannel current = buffered;
            final long since = current == null ? 0 : current.busySinceNanos();
            why = since != 0 && nowNanos - since > timeoutNanos ? "stalled in the middle of a frame" : null;
        }
        if (why != null)
        {
            cutOff = true;
            String peer = "?";
            try
            {
                peer = String.valueOf(channel.getRemoteAddress());
            }
            catch (final IOException ignore)
            {
                // closed already
            }
            LOG.warn("peer {} {} within {} ms: connection closed (a WRITE cut short is not acknowledged)",
                peer, why, timeoutNanos / 1_000_000);
            close();
        }
    }

    void thread(final Thread thread)
    {
        this.thread = thread;
    }

    /**
     * Wait (at most {@code timeoutMs}) for the serving thread to end.
     */
    void awaitEnd(final long timeoutMs)
    {
        final Thread serving = thread;
        if (serving == null || serving == Thread.currentThread())
        {
            return;
        }
        try
        {
            serving.join(timeoutMs);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    void close()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ignore)
        {
            // already closing
        }
    }
}
