package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The handshake over real loopback sockets: who proves first, what a stranger learns, and what each refusal
 * looks like from both ends.
 */
@Timeout(30)
class PeerHandshakeTest
{
    private static final String TOKEN = "handshake-test-token-0123456789abcdef";
    private static final String OTHER_TOKEN = "another-cluster-token-0123456789abcdef";

    private final ExecutorService responderThread = Executors.newSingleThreadExecutor();
    private final ServerSocketChannel listener = listen();

    private static ServerSocketChannel listen()
    {
        try
        {
            return ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    @AfterEach
    void close() throws Exception
    {
        responderThread.shutdownNow();
        responderThread.awaitTermination(5, TimeUnit.SECONDS);
        listener.close();
    }

    /** A responder with {@code authenticator} on the next connection; null when it refused. */
    private CompletableFuture<PeerSession> respond(final PeerAuthenticator authenticator)
    {
        return CompletableFuture.supplyAsync(() ->
        {
            try (SocketChannel channel = listener.accept())
            {
                return PeerHandshake.asResponder(channel, authenticator);
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }, responderThread);
    }

    private SocketChannel connect() throws IOException
    {
        return SocketChannel.open(listener.getLocalAddress());
    }

    @Test
    void shouldAdmitAnInitiatorWithTheTokenAndAgreeOnBothFrameKeys() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            final PeerSession initiator = PeerHandshake.asInitiator(channel, PeerAuthenticator.withToken(TOKEN, 11));
            final PeerSession responded = responder.get(10, TimeUnit.SECONDS);
            assertThat(initiator.peerEpoch()).isEqualTo(22);
            assertThat(responded.peerEpoch()).isEqualTo(11);

            // what one side tags, the other accepts, in both directions; a direction's key is not the other's
            assertThat(tagThenCheck(initiator.out(), responded.in())).isTrue();
            assertThat(tagThenCheck(responded.out(), initiator.in())).isTrue();
            assertThat(tagThenCheck(initiator.out(), initiator.in())).isFalse();
        }
    }

    @Test
    void shouldCloseOnAWrongProofWithoutAReasonAndWithoutHavingShownAProofOfItsOwn() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            // by hand: HELLO, then CHALLENGE, which carries the nonce and the epoch only
            final ByteBuffer hello = ByteBuffer.allocate(PeerProtocol.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            hello.putInt(PeerProtocol.MAGIC).putInt(PeerProtocol.VERSION).putInt(0).putInt(0)
                .put(new byte[PeerProtocol.NONCE_LENGTH]).putLong(1);
            FrameIo.sendFrame(channel, PeerProtocol.HELLO, hello.array());
            final ByteBuffer challenge = FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE, 4096);
            assertThat(challenge.remaining()).isEqualTo(PeerProtocol.NONCE_LENGTH + 8);

            // an all-zero proof (what a daemon without a token used to send): the responder closes, says nothing
            FrameIo.sendFrame(channel, PeerProtocol.PROOF, new byte[PeerProtocol.PROOF_LENGTH]);
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
            assertThat(channel.read(ByteBuffer.allocate(1))).isEqualTo(-1);
        }
    }

    @Test
    void shouldRefuseAnInitiatorWithAnotherToken() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            assertThatThrownBy(() -> PeerHandshake.asInitiator(channel, PeerAuthenticator.withToken(OTHER_TOKEN, 11)))
                .isInstanceOf(PeerRefusedException.class)
                .hasMessageContaining("another cluster token");
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void shouldRefuseAnInitiatorWithoutAToken() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            assertThatThrownBy(() -> PeerHandshake.asInitiator(channel, PeerAuthenticator.unauthenticated(11)))
                .isInstanceOf(PeerRefusedException.class)
                .hasMessageContaining("requires peer authentication");
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void shouldRefuseAResponderThatCannotProveTheToken() throws Exception
    {
        // a responder that accepts every proof and answers with its own, made with another token
        final CompletableFuture<PeerSession> responder = CompletableFuture.supplyAsync(() ->
        {
            try (SocketChannel channel = listener.accept())
            {
                final ByteBuffer hello = FrameIo.receiveFrame(channel, PeerProtocol.HELLO, 4096);
                final ByteBuffer challenge = ByteBuffer.allocate(PeerProtocol.NONCE_LENGTH + 8)
                    .order(ByteOrder.LITTLE_ENDIAN).put(new byte[PeerProtocol.NONCE_LENGTH]).putLong(5);
                FrameIo.sendFrame(channel, PeerProtocol.CHALLENGE, challenge.array());
                FrameIo.receiveFrame(channel, PeerProtocol.PROOF, 4096);
                final byte[] nonce = new byte[PeerProtocol.NONCE_LENGTH];
                hello.position(16).get(nonce);
                final byte[] transcript = PeerAuthenticator.transcript(nonce, new byte[PeerProtocol.NONCE_LENGTH],
                    hello.getLong(16 + PeerProtocol.NONCE_LENGTH), 5, hello.getInt(8));
                FrameIo.sendFrame(channel, PeerProtocol.ACCEPT,
                    PeerAuthenticator.withToken(OTHER_TOKEN, 5).responderProof(transcript));
                return null;
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }, responderThread);
        try (SocketChannel channel = connect())
        {
            assertThatThrownBy(() -> PeerHandshake.asInitiator(channel, PeerAuthenticator.withToken(TOKEN, 11)))
                .isInstanceOf(PeerRefusedException.class)
                .hasMessageContaining("could not prove the cluster token");
            responder.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldProveBothSidesWithAnHmacOverBothNoncesBothEpochsTheHelloFlagsAndTheRole() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 0x2222_3333L));
        try (SocketChannel channel = connect())
        {
            // an initiator by hand, its proof computed here from the protocol's definition, not by PeerAuthenticator
            final byte[] initiatorNonce = new byte[PeerProtocol.NONCE_LENGTH];
            java.util.Arrays.fill(initiatorNonce, (byte)0x5a);
            final long initiatorEpoch = 0x1111_4444L;
            final int flags = PeerProtocol.FLAG_ANSWERS_BY_ID;
            final ByteBuffer challenge = helloAndChallenge(channel, initiatorNonce, initiatorEpoch, flags);
            final byte[] responderNonce = new byte[PeerProtocol.NONCE_LENGTH];
            challenge.get(responderNonce);
            final long responderEpoch = challenge.getLong();
            assertThat(responderEpoch).isEqualTo(0x2222_3333L);

            FrameIo.sendFrame(channel, PeerProtocol.PROOF,
                hmac("xferd/4 initiator", initiatorNonce, responderNonce, initiatorEpoch, responderEpoch, flags));
            final ByteBuffer accept = FrameIo.receiveFrame(channel, PeerProtocol.ACCEPT, 4096);
            final byte[] responderProof = new byte[accept.remaining()];
            accept.get(responderProof);

            assertThat(responderProof)
                .isEqualTo(hmac("xferd/4 responder", initiatorNonce, responderNonce, initiatorEpoch, responderEpoch,
                    flags));
            assertThat(responder.get(10, TimeUnit.SECONDS).peerEpoch()).isEqualTo(initiatorEpoch);
        }
    }

    @Test
    void shouldRefuseAProofOverAnotherEpochThanTheHelloAnnounced() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            final byte[] initiatorNonce = new byte[PeerProtocol.NONCE_LENGTH];
            final ByteBuffer challenge = helloAndChallenge(channel, initiatorNonce, 1);
            final byte[] responderNonce = new byte[PeerProtocol.NONCE_LENGTH];
            challenge.get(responderNonce);
            final long responderEpoch = challenge.getLong();

            // a proof recorded when this initiator had epoch 2 does not admit it with epoch 1
            FrameIo.sendFrame(channel, PeerProtocol.PROOF,
                hmac("xferd/4 initiator", initiatorNonce, responderNonce, 2, responderEpoch, 0));
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
            assertThat(channel.read(ByteBuffer.allocate(1))).isEqualTo(-1);
        }
    }

    @Test
    void shouldRefuseAProofOverOtherFlagsThanTheHelloCarried() throws Exception
    {
        final List<Integer> flagsSeen = new java.util.concurrent.CopyOnWriteArrayList<>();
        final CompletableFuture<PeerSession> responder = CompletableFuture.supplyAsync(() ->
        {
            try (SocketChannel channel = listener.accept())
            {
                return PeerHandshake.asResponder(channel, PeerAuthenticator.withToken(TOKEN, 22), flagsSeen::add);
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }, responderThread);
        try (SocketChannel channel = connect())
        {
            // the initiator offered answers by id; on the way, the bit was cleared from its HELLO (the proof over
            // the flags it sent no longer admits it)
            final byte[] initiatorNonce = new byte[PeerProtocol.NONCE_LENGTH];
            final ByteBuffer challenge = helloAndChallenge(channel, initiatorNonce, 1, 0);
            final byte[] responderNonce = new byte[PeerProtocol.NONCE_LENGTH];
            challenge.get(responderNonce);
            final long responderEpoch = challenge.getLong();

            FrameIo.sendFrame(channel, PeerProtocol.PROOF, hmac("xferd/4 initiator", initiatorNonce, responderNonce,
                1, responderEpoch, PeerProtocol.FLAG_ANSWERS_BY_ID));
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
            assertThat(channel.read(ByteBuffer.allocate(1))).isEqualTo(-1);
            assertThat(flagsSeen).isEmpty();
        }
    }

    @Test
    void shouldRefuseAResponderThatReflectsTheInitiatorsOwnProof() throws Exception
    {
        // a responder without the token that answers the initiator's proof with that same proof
        final CompletableFuture<PeerSession> responder = CompletableFuture.supplyAsync(() ->
        {
            try (SocketChannel channel = listener.accept())
            {
                FrameIo.receiveFrame(channel, PeerProtocol.HELLO, 4096);
                final ByteBuffer challenge = ByteBuffer.allocate(PeerProtocol.NONCE_LENGTH + 8)
                    .order(ByteOrder.LITTLE_ENDIAN).put(new byte[PeerProtocol.NONCE_LENGTH]).putLong(5);
                FrameIo.sendFrame(channel, PeerProtocol.CHALLENGE, challenge.array());
                final ByteBuffer proof = FrameIo.receiveFrame(channel, PeerProtocol.PROOF, 4096);
                final byte[] reflected = new byte[proof.remaining()];
                proof.get(reflected);
                FrameIo.sendFrame(channel, PeerProtocol.ACCEPT, reflected);
                return null;
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }, responderThread);
        try (SocketChannel channel = connect())
        {
            assertThatThrownBy(() -> PeerHandshake.asInitiator(channel, PeerAuthenticator.withToken(TOKEN, 11)))
                .isInstanceOf(PeerRefusedException.class)
                .hasMessageContaining("could not prove the cluster token");
            responder.get(10, TimeUnit.SECONDS);
        }
    }

    /** Send a HELLO of this version by hand, without flags; return the CHALLENGE's body (nonce, epoch). */
    private static ByteBuffer helloAndChallenge(final SocketChannel channel, final byte[] nonce, final long epoch)
        throws IOException
    {
        return helloAndChallenge(channel, nonce, epoch, 0);
    }

    private static ByteBuffer helloAndChallenge(
        final SocketChannel channel, final byte[] nonce, final long epoch, final int flags) throws IOException
    {
        final ByteBuffer hello = ByteBuffer.allocate(PeerProtocol.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        hello.putInt(PeerProtocol.MAGIC).putInt(PeerProtocol.VERSION).putInt(flags).putInt(0).put(nonce)
            .putLong(epoch);
        FrameIo.sendFrame(channel, PeerProtocol.HELLO, hello.array());
        final ByteBuffer challenge = FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE, 4096);
        assertThat(challenge.remaining()).isEqualTo(PeerProtocol.NONCE_LENGTH + 8);
        return challenge;
    }

    /**
     * The proof by definition: HMAC-SHA256(token, role | nonce_i | nonce_r | epoch_i | epoch_r | flags), epochs
     * int64 and the HELLO's flags int32, little-endian.
     */
    private static byte[] hmac(
        final String role,
        final byte[] initiatorNonce,
        final byte[] responderNonce,
        final long initiatorEpoch,
        final long responderEpoch,
        final int helloFlags) throws IOException
    {
        try
        {
            final javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(
                TOKEN.getBytes(java.nio.charset.StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update(role.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            mac.update(initiatorNonce);
            mac.update(responderNonce);
            mac.update(ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(initiatorEpoch).putLong(responderEpoch).putInt(helloFlags).array());
            return mac.doFinal();
        }
        catch (final java.security.GeneralSecurityException ex)
        {
            throw new IOException(ex);
        }
    }

    @Test
    void shouldRefuseAnotherProtocolVersionNamingBoth() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            // a version 3 HELLO: magic, version, 16-byte nonce
            final ByteBuffer hello = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
            hello.putInt(PeerProtocol.MAGIC).putInt(3);
            FrameIo.sendFrame(channel, PeerProtocol.HELLO, hello.array());
            assertThatThrownBy(() -> FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE, 4096))
                .isInstanceOf(PeerRefusedException.class)
                .hasMessageContaining("peer protocol version 3, this daemon speaks " + PeerProtocol.VERSION);
            assertThat(responder.get(10, TimeUnit.SECONDS)).isNull();
        }
    }

    @Test
    void shouldNotReadAnOversizedHello() throws Exception
    {
        final CompletableFuture<PeerSession> responder = respond(PeerAuthenticator.withToken(TOKEN, 22));
        try (SocketChannel channel = connect())
        {
            // a header claiming a 1 MiB HELLO: refused on the header, before any of it is read or allocated
            final ByteBuffer header = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            header.putInt(1 << 20).putInt(PeerProtocol.HELLO).flip();
            channel.write(header);
            assertThat(responder).failsWithin(10, TimeUnit.SECONDS)
                .withThrowableThat().havingRootCause().withMessageContaining("1048576 bytes in the handshake");
        }
    }

    private static boolean tagThenCheck(final FrameMac sender, final FrameMac receiver)
    {
        final ByteBuffer frame = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
        frame.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK).putLong(7).putInt(0).putInt(0).putLong(0);
        final int end = PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH;
        sender.sign(PeerProtocol.ACK_FIELDS_LENGTH, PeerProtocol.ACK, frame, PeerProtocol.HEADER_LENGTH, end);
        return receiver.verify(PeerProtocol.ACK_FIELDS_LENGTH, PeerProtocol.ACK, frame, PeerProtocol.HEADER_LENGTH, end);
    }
}
