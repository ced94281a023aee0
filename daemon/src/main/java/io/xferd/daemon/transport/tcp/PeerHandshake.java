package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.auth.PeerSession;
import io.xferd.daemon.transport.PeerProtocol;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.function.IntConsumer;

/**
 * The first exchange on every peer connection: protocol version, both daemons' epochs (a restarted daemon has a
 * new one, so cached descriptors of its segments are dropped), and mutual proof of the cluster token, the
 * initiator first. A responder shows nothing that depends on the token before the initiator has proven it, so an
 * unauthenticated stranger gets nothing to test guesses against; a wrong proof is answered by closing the
 * connection, without a reason.
 */
final class PeerHandshake
{
    /** The most the initiator reads of a CHALLENGE, ACCEPT or REFUSE. */
    private static final int MAX_ANSWER_LENGTH = 4096;
    /** The most a responder reads of a HELLO: longer than today's, so a newer version is still told apart. */
    static final int MAX_HELLO_LENGTH = 256;

    private PeerHandshake()
    {
    }

    /**
     * Initiator side.
     *
     * @return the session: the responder's epoch and the frame keys.
     * @throws PeerRefusedException when the responder refuses, or closes after our proof, or cannot prove the
     *                              token itself.
     */
    static PeerSession asInitiator(final SocketChannel channel, final PeerAuthenticator authenticator)
        throws IOException
    {
        return asInitiator(channel, authenticator, 0);
    }

    /**
     * Initiator side, offering {@code flags} in its HELLO (e.g. {@link PeerProtocol#FLAG_ANSWERS_BY_ID}).
     */
    static PeerSession asInitiator(
        final SocketChannel channel, final PeerAuthenticator authenticator, final int flags) throws IOException
    {
        final byte[] initiatorNonce = authenticator.newNonce();
        final int helloFlags = (flags & ~PeerProtocol.FLAG_NO_PEER_AUTH) |
            (authenticator.authenticates() ? 0 : PeerProtocol.FLAG_NO_PEER_AUTH);
        final ByteBuffer hello = ByteBuffer.allocate(PeerProtocol.HELLO_LENGTH).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        hello.putInt(PeerProtocol.MAGIC).putInt(PeerProtocol.VERSION).putInt(helloFlags).putInt(0)
            .put(initiatorNonce).putLong(authenticator.epoch());
        FrameIo.sendFrame(channel, PeerProtocol.HELLO, hello.array());

        final ByteBuffer challenge = FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE, MAX_ANSWER_LENGTH);
        if (challenge.remaining() != PeerProtocol.NONCE_LENGTH + 8)
        {
            throw new IOException("malformed CHALLENGE of " + challenge.remaining() + " bytes");
        }
        final byte[] responderNonce = new byte[PeerProtocol.NONCE_LENGTH];
        challenge.get(responderNonce);
        final long responderEpoch = challenge.getLong();
        final byte[] transcript = PeerAuthenticator.transcript(
            initiatorNonce, responderNonce, authenticator.epoch(), responderEpoch, helloFlags);

        FrameIo.sendFrame(channel, PeerProtocol.PROOF, authenticator.initiatorProof(transcript));
        final ByteBuffer accept;
        try
        {
            accept = FrameIo.receiveFrame(channel, PeerProtocol.ACCEPT, MAX_ANSWER_LENGTH);
        }
        catch (final EOFException ex)
        {
            throw new PeerRefusedException(
                "peer closed the connection after our proof: it has another cluster token");
        }
        final byte[] responderProof = new byte[PeerProtocol.PROOF_LENGTH];
        if (accept.remaining() != PeerProtocol.PROOF_LENGTH)
        {
            throw new IOException("malformed ACCEPT of " + accept.remaining() + " bytes");
        }
        accept.get(responderProof);
        if (authenticator.authenticates() &&
            !PeerAuthenticator.matches(authenticator.responderProof(transcript), responderProof))
        {
            throw new PeerRefusedException("peer could not prove the cluster token");
        }
        return authenticator.initiatorSession(transcript, responderEpoch);
    }

    /**
     * Responder side.
     *
     * @return the session when the initiator is admitted; null when it is not (after a REFUSE for a wrong magic,
     * version or authentication mode; silently for a wrong proof): the caller closes the connection.
     */
    static PeerSession asResponder(final SocketChannel channel, final PeerAuthenticator authenticator)
        throws IOException
    {
        return asResponder(channel, authenticator, flags -> {});
    }

    /**
     * Responder side; {@code initiatorFlags} is told the flags of the initiator's HELLO once it is admitted.
     */
    static PeerSession asResponder(
        final SocketChannel channel, final PeerAuthenticator authenticator, final IntConsumer initiatorFlags)
        throws IOException
    {
        final ByteBuffer hello = FrameIo.receiveFrame(channel, PeerProtocol.HELLO, MAX_HELLO_LENGTH);
        if (hello.remaining() < 8 || hello.getInt() != PeerProtocol.MAGIC)
        {
            refuse(channel, "not an xferd peer");
            return null;
        }
        final int version = hello.getInt();
        if (version != PeerProtocol.VERSION)
        {
            refuse(channel, "peer protocol version " + version + ", this daemon speaks " + PeerProtocol.VERSION);
            return null;
        }
        if (hello.remaining() != PeerProtocol.HELLO_LENGTH - 8)
        {
            refuse(channel, "malformed HELLO");
            return null;
        }
        final int flags = hello.getInt();
        final boolean initiatorAuthenticates = (flags & PeerProtocol.FLAG_NO_PEER_AUTH) == 0;
        hello.getInt();
        if (initiatorAuthenticates != authenticator.authenticates())
        {
            refuse(channel, authenticator.authenticates() ?
                "this daemon requires peer authentication (a cluster token); the peer runs without it" :
                "this daemon runs without peer authentication (--insecure-no-peer-auth); the peer has a token");
            return null;
        }
        final byte[] initiatorNonce = new byte[PeerProtocol.NONCE_LENGTH];
        hello.get(initiatorNonce);
        final long initiatorEpoch = hello.getLong();

        final byte[] responderNonce = authenticator.newNonce();
        final ByteBuffer challenge = ByteBuffer.allocate(PeerProtocol.NONCE_LENGTH + 8)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        challenge.put(responderNonce).putLong(authenticator.epoch());
        FrameIo.sendFrame(channel, PeerProtocol.CHALLENGE, challenge.array());

        final ByteBuffer proof = FrameIo.receiveFrame(channel, PeerProtocol.PROOF, PeerProtocol.PROOF_LENGTH);
        if (proof.remaining() != PeerProtocol.PROOF_LENGTH)
        {
            return null;
        }
        final byte[] initiatorProof = new byte[PeerProtocol.PROOF_LENGTH];
        proof.get(initiatorProof);
        final byte[] transcript = PeerAuthenticator.transcript(
            initiatorNonce, responderNonce, initiatorEpoch, authenticator.epoch(), flags);
        if (authenticator.authenticates() &&
            !PeerAuthenticator.matches(authenticator.initiatorProof(transcript), initiatorProof))
        {
            return null;
        }
        FrameIo.sendFrame(channel, PeerProtocol.ACCEPT, authenticator.responderProof(transcript));
        initiatorFlags.accept(flags);
        return authenticator.responderSession(transcript, initiatorEpoch);
    }

    private static void refuse(final SocketChannel channel, final String reason) throws IOException
    {
        FrameIo.sendFrame(channel, PeerProtocol.REFUSE, reason.getBytes(StandardCharsets.UTF_8));
    }
}
