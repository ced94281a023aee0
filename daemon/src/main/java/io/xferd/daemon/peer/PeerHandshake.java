package io.xferd.daemon.peer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The first exchange on every peer connection: protocol version, the server's epoch (a restarted daemon has a
 * new one, so cached descriptors of its segments are dropped), and mutual proof of the cluster token.
 */
final class PeerHandshake
{
    private PeerHandshake()
    {
    }

    /**
     * Requester side.
     *
     * @return the server's epoch.
     * @throws PeerRefusedException when either side cannot prove the token, or versions differ.
     */
    static long asClient(final SocketChannel channel, final PeerAuthenticator authenticator) throws IOException
    {
        final byte[] clientNonce = authenticator.newNonce();
        final ByteBuffer hello = FrameIo.newBuffer(8 + PeerProtocol.NONCE_LENGTH);
        hello.putInt(PeerProtocol.MAGIC).putInt(PeerProtocol.VERSION).put(clientNonce).flip();
        FrameIo.sendFrame(channel, PeerProtocol.HELLO, toArray(hello));

        final ByteBuffer challenge = FrameIo.receiveFrame(channel, PeerProtocol.CHALLENGE);
        final byte[] serverNonce = new byte[PeerProtocol.NONCE_LENGTH];
        challenge.get(serverNonce);
        final long epoch = challenge.getLong();
        final boolean tokenRequired = challenge.getInt() != 0;
        final byte[] serverProof = new byte[PeerProtocol.PROOF_LENGTH];
        challenge.get(serverProof);

        if (authenticator.hasToken())
        {
            if (!tokenRequired ||
                !PeerAuthenticator.matches(authenticator.serverProof(clientNonce, serverNonce), serverProof))
            {
                throw new PeerRefusedException("peer could not prove the cluster token");
            }
        }
        FrameIo.sendFrame(channel, PeerProtocol.PROOF, authenticator.clientProof(serverNonce, clientNonce));
        final ByteBuffer accept = FrameIo.receiveFrame(channel, PeerProtocol.ACCEPT);
        return accept.getLong();
    }

    /**
     * Server side.
     *
     * @return true when the requester is admitted; false after a REFUSE was sent.
     */
    static boolean asServer(
        final SocketChannel channel, final PeerAuthenticator authenticator, final long epoch) throws IOException
    {
        final ByteBuffer hello = FrameIo.receiveFrame(channel, PeerProtocol.HELLO);
        if (hello.remaining() < 8 + PeerProtocol.NONCE_LENGTH || hello.getInt() != PeerProtocol.MAGIC)
        {
            refuse(channel, "not an xferd peer");
            return false;
        }
        final int version = hello.getInt();
        if (version != PeerProtocol.VERSION)
        {
            refuse(channel, "peer protocol version " + version + ", this daemon speaks " + PeerProtocol.VERSION);
            return false;
        }
        final byte[] clientNonce = new byte[PeerProtocol.NONCE_LENGTH];
        hello.get(clientNonce);

        final byte[] serverNonce = authenticator.newNonce();
        final ByteBuffer challenge = FrameIo.newBuffer(PeerProtocol.NONCE_LENGTH + 12 + PeerProtocol.PROOF_LENGTH);
        challenge.put(serverNonce).putLong(epoch).putInt(authenticator.hasToken() ? 1 : 0)
            .put(authenticator.serverProof(clientNonce, serverNonce)).flip();
        FrameIo.sendFrame(channel, PeerProtocol.CHALLENGE, toArray(challenge));

        final ByteBuffer proof = FrameIo.receiveFrame(channel, PeerProtocol.PROOF);
        final byte[] clientProof = new byte[PeerProtocol.PROOF_LENGTH];
        if (proof.remaining() != PeerProtocol.PROOF_LENGTH)
        {
            refuse(channel, "malformed proof");
            return false;
        }
        proof.get(clientProof);
        if (authenticator.hasToken() &&
            !PeerAuthenticator.matches(authenticator.clientProof(serverNonce, clientNonce), clientProof))
        {
            refuse(channel, "cluster token mismatch");
            return false;
        }
        final ByteBuffer accept = FrameIo.newBuffer(8);
        accept.putLong(epoch).flip();
        FrameIo.sendFrame(channel, PeerProtocol.ACCEPT, toArray(accept));
        return true;
    }

    private static void refuse(final SocketChannel channel, final String reason) throws IOException
    {
        FrameIo.sendFrame(channel, PeerProtocol.REFUSE, reason.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] toArray(final ByteBuffer buffer)
    {
        final byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }
}
