package io.xferd.daemon.auth;

import io.xferd.daemon.config.ClusterKey;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.transport.PeerProtocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Proof of cluster membership in the peer handshake and the keys that authenticate a connection's frames after
 * it: each side shows it knows the cluster token by an HMAC-SHA256 over both nonces, both epochs and its role,
 * never sending the token itself. Without peer authentication ({@code --insecure-no-peer-auth}), proofs are
 * zeros and frames carry zero tags.
 */
public final class PeerAuthenticator
{
    private static final byte[] INITIATOR = ascii("xferd/4 initiator");
    private static final byte[] RESPONDER = ascii("xferd/4 responder");
    private static final byte[] FRAMES_TO_RESPONDER = ascii("xferd/4 frames initiator->responder");
    private static final byte[] FRAMES_TO_INITIATOR = ascii("xferd/4 frames responder->initiator");

    private final byte[] key;
    private final long epoch;
    private final SecureRandom random = new SecureRandom();

    private PeerAuthenticator(final byte[] key, final long epoch)
    {
        this.key = key;
        this.epoch = epoch;
    }

    /**
     * @param token the cluster token (checked long enough by {@link ClusterKey}).
     * @param epoch this daemon's epoch, which its handshakes announce.
     */
    public static PeerAuthenticator withToken(final String token, final long epoch)
    {
        if (token == null || token.isEmpty())
        {
            throw new IllegalArgumentException("a cluster token is required");
        }
        return new PeerAuthenticator(token.getBytes(StandardCharsets.UTF_8), epoch);
    }

    /**
     * Peers are not authenticated: only for {@code --insecure-no-peer-auth}.
     */
    public static PeerAuthenticator unauthenticated(final long epoch)
    {
        return new PeerAuthenticator(null, epoch);
    }

    /**
     * The authenticator of a started daemon: its cluster token, or none when peer authentication is off.
     *
     * @throws IllegalStateException when authentication is on and no token was resolved (a bug: the daemon
     *                               resolves the token before it opens the RPC port).
     */
    public static PeerAuthenticator of(final DaemonContext context, final long epoch)
    {
        if (!context.peerAuthentication())
        {
            return unauthenticated(epoch);
        }
        if (context.clusterToken() == null)
        {
            throw new IllegalStateException("peer authentication is on but no cluster token was resolved");
        }
        return withToken(context.clusterToken(), epoch);
    }

    public boolean authenticates()
    {
        return key != null;
    }

    public long epoch()
    {
        return epoch;
    }

    public byte[] newNonce()
    {
        final byte[] nonce = new byte[PeerProtocol.NONCE_LENGTH];
        random.nextBytes(nonce);
        return nonce;
    }

    /**
     * @return what both proofs and both session keys cover: the nonces and epochs of both sides and the flags the
     * initiator's HELLO carried (so a flag cleared or set on the way fails the proofs, rather than silently changing
     * what the two daemons agreed on).
     */
    public static byte[] transcript(
        final byte[] initiatorNonce,
        final byte[] responderNonce,
        final long initiatorEpoch,
        final long responderEpoch,
        final int initiatorFlags)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(2 * PeerProtocol.NONCE_LENGTH + 20)
            .order(ByteOrder.LITTLE_ENDIAN);
        buffer.put(initiatorNonce).put(responderNonce).putLong(initiatorEpoch).putLong(responderEpoch)
            .putInt(initiatorFlags);
        return buffer.array();
    }

    public byte[] initiatorProof(final byte[] transcript)
    {
        return key == null ? new byte[PeerProtocol.PROOF_LENGTH] : hmac(INITIATOR, transcript);
    }

    public byte[] responderProof(final byte[] transcript)
    {
        return key == null ? new byte[PeerProtocol.PROOF_LENGTH] : hmac(RESPONDER, transcript);
    }

    /**
     * @return the initiator's side of the session: tags of frames it sends to the responder, checks of the ones
     * it receives.
     */
    public PeerSession initiatorSession(final byte[] transcript, final long responderEpoch)
    {
        return new PeerSession(responderEpoch, frameMac(FRAMES_TO_RESPONDER, transcript),
            frameMac(FRAMES_TO_INITIATOR, transcript));
    }

    public PeerSession responderSession(final byte[] transcript, final long initiatorEpoch)
    {
        return new PeerSession(initiatorEpoch, frameMac(FRAMES_TO_INITIATOR, transcript),
            frameMac(FRAMES_TO_RESPONDER, transcript));
    }

    /**
     * Constant-time comparison.
     */
    public static boolean matches(final byte[] expected, final byte[] actual)
    {
        return MessageDigest.isEqual(expected, actual);
    }

    private FrameMac frameMac(final byte[] label, final byte[] transcript)
    {
        return new FrameMac(key == null ? null : hmac(label, transcript));
    }

    private byte[] hmac(final byte[] label, final byte[] transcript)
    {
        try
        {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(label);
            mac.update(transcript);
            return mac.doFinal();
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 unavailable", ex);
        }
    }

    private static byte[] ascii(final String text)
    {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
