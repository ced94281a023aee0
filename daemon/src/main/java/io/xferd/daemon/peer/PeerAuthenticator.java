package io.xferd.daemon.peer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * Proof of cluster membership in the peer handshake: each side shows it knows the shared token by an
 * HMAC-SHA256 over both nonces, never sending the token itself. Without a configured token, proofs are zeros.
 */
public final class PeerAuthenticator
{
    private static final byte[] SERVER = "server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT = "client".getBytes(StandardCharsets.US_ASCII);

    private final byte[] token;
    private final SecureRandom random = new SecureRandom();

    public PeerAuthenticator(final String token)
    {
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    public boolean hasToken()
    {
        return token != null;
    }

    public byte[] newNonce()
    {
        final byte[] nonce = new byte[PeerProtocol.NONCE_LENGTH];
        random.nextBytes(nonce);
        return nonce;
    }

    public byte[] serverProof(final byte[] clientNonce, final byte[] serverNonce)
    {
        return proof(SERVER, clientNonce, serverNonce);
    }

    public byte[] clientProof(final byte[] serverNonce, final byte[] clientNonce)
    {
        return proof(CLIENT, serverNonce, clientNonce);
    }

    /**
     * Constant-time comparison.
     */
    public static boolean matches(final byte[] expected, final byte[] actual)
    {
        return MessageDigest.isEqual(expected, actual);
    }

    private byte[] proof(final byte[] role, final byte[] first, final byte[] second)
    {
        if (token == null)
        {
            return new byte[PeerProtocol.PROOF_LENGTH];
        }
        try
        {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(token, "HmacSHA256"));
            mac.update(role);
            mac.update(first);
            mac.update(second);
            return mac.doFinal();
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 unavailable", ex);
        }
    }
}
