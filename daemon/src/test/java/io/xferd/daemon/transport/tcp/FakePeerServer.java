package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.TransferStatus;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A peer daemon that passes the handshake (it has the cluster token) and then answers as a broken or hostile one
 * would: every READ gets an ACK with status OK and a payload of the wrong size (or, per {@link ReadAnswer}, the right
 * one or none at all), every WRITE is refused as outside the segment. For tests of the initiator, which must fail such
 * slices, never complete them.
 */
public final class FakePeerServer implements AutoCloseable
{
    /** What an OK answer to a READ of n bytes carries. */
    public enum ReadAnswer
    {
        /** no bytes at all */
        EMPTY,
        /** n / 2 bytes */
        SHORT,
        /** 2n bytes */
        OVERSIZE,
        /** the n bytes asked for, byte i of the buffer being (byte)i: an honest peer */
        EXACT,
        /** no answer at all: a peer that stalls (the READ is only counted, see {@link #readsReceived()}) */
        NONE,
        /**
         * the exact bytes, but answers held until {@link #REVERSED_BATCH} READs came and then sent newest first (as
         * a daemon answers when its older reads wait for the device); only to an initiator that offered
         * {@code FLAG_ANSWERS_BY_ID}, else the connection is closed
         */
        REVERSED,
        /** the first READ of a connection answered exactly, twice over, before any other */
        DUPLICATE,
        /** every READ answered exactly but under an id one higher than asked (no such slice is in flight) */
        UNKNOWN_ID
    }

    /**
     * @return byte {@code offset} of a {@link ReadAnswer#REVERSED} peer's buffer: no two slices of a power-of-two
     * size up to 64 KiB alike, so bytes landing in another slice's place show.
     */
    public static byte unevenByte(final long offset)
    {
        return (byte)(offset + (offset >>> 8));
    }

    /** READs a {@link ReadAnswer#REVERSED} peer holds before it answers them, newest first. */
    public static final int REVERSED_BATCH = 4;

    public static final long BUFFER_ADDRESS = 0x100000;
    public static final long BUFFER_LENGTH = 1 << 20;

    private final ServerSocketChannel listener;
    private final PeerAuthenticator authenticator;
    private final ReadAnswer answer;
    private final Thread thread;
    private final AtomicInteger readsAnswered = new AtomicInteger();
    private final AtomicInteger readsReceived = new AtomicInteger();
    private final AtomicInteger notifiesReceived = new AtomicInteger();
    private volatile int helloFlags = -1;
    private final String address;
    private final String describedSegment;
    private final List<SegmentDescriptor.Nic> nics;

    public FakePeerServer(final String token, final ReadAnswer answer) throws IOException
    {
        this(token, answer, null, List.of());
    }

    /**
     * An honest peer whose descriptor lists {@code nics} (where it does not necessarily listen).
     */
    public static FakePeerServer withNics(final String token, final List<SegmentDescriptor.Nic> nics)
        throws IOException
    {
        return new FakePeerServer(token, ReadAnswer.EXACT, null, nics);
    }

    /**
     * A peer that answers every GET_SEGMENT with the descriptor of {@code segment}, whatever was asked.
     */
    public static FakePeerServer answeringFor(final String token, final String segment) throws IOException
    {
        return new FakePeerServer(token, ReadAnswer.EMPTY, segment, List.of());
    }

    private FakePeerServer(
        final String token, final ReadAnswer answer, final String describedSegment,
        final List<SegmentDescriptor.Nic> nics) throws IOException
    {
        this.describedSegment = describedSegment;
        this.nics = nics;
        this.listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        this.address = "127.0.0.1:" + ((InetSocketAddress)listener.getLocalAddress()).getPort();
        this.authenticator = PeerAuthenticator.withToken(token, 5);
        this.answer = answer;
        this.thread = new Thread(this::acceptLoop, "fake-peer-server");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * @return host:port of this fake daemon.
     */
    public String address()
    {
        return address;
    }

    public int readsAnswered()
    {
        return readsAnswered.get();
    }

    public int readsReceived()
    {
        return readsReceived.get();
    }

    /**
     * @return the flags of the last initiator's HELLO, -1 before any.
     */
    public int helloFlags()
    {
        return helloFlags;
    }

    /**
     * @return NOTIFY frames received (each is acknowledged OK); every WRITE is refused as outside the segment.
     */
    public int notifiesReceived()
    {
        return notifiesReceived.get();
    }

    private void acceptLoop()
    {
        while (listener.isOpen())
        {
            try (SocketChannel channel = listener.accept())
            {
                serve(channel);
            }
            catch (final IOException | RuntimeException ex)
            {
                // the initiator cut the connection, as it should: take the next one
            }
        }
    }

    private void serve(final SocketChannel channel) throws IOException
    {
        final PeerSession session = PeerHandshake.asResponder(channel, authenticator, flags -> helloFlags = flags);
        if (session == null)
        {
            return;
        }
        final java.util.ArrayDeque<ByteBuffer> held = new java.util.ArrayDeque<>();
        boolean duplicated = false;
        while (true)
        {
            final ByteBuffer header = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH);
            FrameIo.readFully(channel, header);
            final int length = header.getInt(0);
            final int type = header.getInt(4);
            final ByteBuffer body = FrameIo.newBuffer(length);
            FrameIo.readFully(channel, body);
            if (type == PeerProtocol.GET_SEGMENT)
            {
                final String name = StandardCharsets.UTF_8.decode(
                    body.position(0).limit(length - PeerProtocol.TAG_LENGTH)).toString();
                final SegmentDescriptor descriptor = new SegmentDescriptor(SegmentDescriptor.VERSION,
                    address + "/" + (describedSegment != null ? describedSegment : name), "tcp", address, 5, 1, List.of(), nics,
                    List.of(new SegmentDescriptor.Buffer(BUFFER_ADDRESS, BUFFER_LENGTH, "cpu:0")), null);
                final byte[] json = descriptor.toJson().getBytes(StandardCharsets.UTF_8);
                final ByteBuffer answerBody = ByteBuffer.allocate(4 + json.length)
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(TransferStatus.OK).put(json);
                FrameIo.sendFrame(channel, session.out(), PeerProtocol.DESCRIPTOR, answerBody.array());
            }
            else if (type == PeerProtocol.WRITE)
            {
                sendEmptyAck(channel, session, body.getLong(0), TransferStatus.TARGET_RANGE_NOT_REGISTERED);
            }
            else if (type == PeerProtocol.NOTIFY)
            {
                notifiesReceived.incrementAndGet();
                sendEmptyAck(channel, session, body.getLong(0), TransferStatus.OK);
            }
            else if (type == PeerProtocol.READ && answer == ReadAnswer.NONE)
            {
                readsReceived.incrementAndGet();
            }
            else if (type == PeerProtocol.READ)
            {
                readsReceived.incrementAndGet();
                final long sliceId = body.getLong(0);
                final long sliceAddress = body.getLong(16);
                final long sliceLength = body.getLong(24);
                final long payload = switch (answer)
                {
                    case EMPTY -> 0;
                    case SHORT -> sliceLength / 2;
                    case OVERSIZE -> sliceLength * 2;
                    case EXACT, REVERSED, DUPLICATE, UNKNOWN_ID -> sliceLength;
                    case NONE -> throw new IllegalStateException("a stalled peer does not answer");
                };
                final int bodyLength = PeerProtocol.ACK_FIELDS_LENGTH + (int)payload;
                final ByteBuffer ack = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH +
                    (int)payload);
                ack.putInt(bodyLength).putInt(PeerProtocol.ACK)
                    .putLong(answer == ReadAnswer.UNKNOWN_ID ? sliceId + 1 : sliceId).putInt(TransferStatus.OK).putInt(0)
                    .putLong(payload);
                final int payloadAt = PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH;
                for (int i = 0; i < payload; i++)
                {
                    final long offset = sliceAddress - BUFFER_ADDRESS + i;
                    ack.put(payloadAt + i, answer == ReadAnswer.REVERSED ? unevenByte(offset) : (byte)offset);
                }
                if (answer == ReadAnswer.REVERSED)
                {
                    if ((helloFlags & PeerProtocol.FLAG_ANSWERS_BY_ID) == 0)
                    {
                        return; // it would answer out of order an initiator that did not say it takes that
                    }
                    // tags follow the order frames leave in: sign each only when it goes
                    held.push(ack);
                    if (held.size() == REVERSED_BATCH)
                    {
                        while (!held.isEmpty())
                        {
                            sendAck(channel, session, held.pop());
                        }
                    }
                    continue;
                }
                sendAck(channel, session, ack);
                if (answer == ReadAnswer.DUPLICATE && !duplicated)
                {
                    duplicated = true;
                    sendAck(channel, session, ack);
                }
            }
            else
            {
                return;
            }
        }
    }

    private void sendAck(final SocketChannel channel, final PeerSession session, final ByteBuffer ack)
        throws IOException
    {
        session.out().sign(ack.getInt(0), PeerProtocol.ACK, ack, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH);
        ack.position(0).limit(ack.capacity());
        readsAnswered.incrementAndGet();
        FrameIo.writeFully(channel, ack);
    }

    private static void sendEmptyAck(
        final SocketChannel channel, final PeerSession session, final long sliceId, final int status) throws IOException
    {
        final ByteBuffer ack = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
        ack.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK).putLong(sliceId).putInt(status).putInt(0)
            .putLong(0);
        session.out().sign(PeerProtocol.ACK_FIELDS_LENGTH, PeerProtocol.ACK, ack, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH);
        ack.position(0).limit(ack.capacity());
        FrameIo.writeFully(channel, ack);
    }

    @Override
    public void close() throws Exception
    {
        listener.close();
        thread.join(5000);
    }
}
