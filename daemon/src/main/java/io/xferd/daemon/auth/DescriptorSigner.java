package io.xferd.daemon.auth;

import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.transport.SegmentDescriptor;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs the segment descriptors a daemon publishes to a metadata store with the cluster key, and checks the ones
 * it reads there, so that whoever can write to the store (it is shared, and often less guarded than the daemons)
 * cannot point a segment's name at another segment or at a rogue daemon. The signature is HMAC-SHA256(token,
 * "xferd/4 descriptor" | the descriptor's JSON without its signature), in hex, in the descriptor's
 * {@code signature} field. Without peer authentication nothing is signed and nothing is checked.
 */
public final class DescriptorSigner
{
    private static final byte[] LABEL = "xferd/4 descriptor".getBytes(StandardCharsets.US_ASCII);

    private final byte[] key;

    private DescriptorSigner(final byte[] key)
    {
        this.key = key;
    }

    /**
     * @param token the cluster token, or null when peers are not authenticated.
     */
    public static DescriptorSigner withToken(final String token)
    {
        return new DescriptorSigner(token == null ? null : token.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The signer of a started daemon (its token resolved).
     */
    public static DescriptorSigner of(final DaemonContext context)
    {
        if (context.peerAuthentication() && context.clusterToken() == null)
        {
            throw new IllegalStateException("peer authentication is on but no cluster token was resolved");
        }
        return withToken(context.peerAuthentication() ? context.clusterToken() : null);
    }

    public boolean signs()
    {
        return key != null;
    }

    public SegmentDescriptor sign(final SegmentDescriptor descriptor)
    {
        return key == null ? descriptor : descriptor.withSignature(signature(descriptor.withSignature(null)));
    }

    /**
     * @return the descriptor, its signature checked.
     * @throws IllegalArgumentException when it is unsigned or its signature does not match.
     */
    public SegmentDescriptor verify(final SegmentDescriptor descriptor)
    {
        if (key == null)
        {
            return descriptor;
        }
        if (descriptor.signature() == null)
        {
            throw new IllegalArgumentException("descriptor of " + descriptor.name() + " is not signed with the " +
                "cluster key: refused");
        }
        final byte[] expected = signature(descriptor.withSignature(null)).getBytes(StandardCharsets.US_ASCII);
        if (!MessageDigest.isEqual(expected, descriptor.signature().getBytes(StandardCharsets.US_ASCII)))
        {
            throw new IllegalArgumentException("descriptor of " + descriptor.name() + " has a wrong signature " +
                "(not written by a daemon of this cluster, or altered): refused");
        }
        return descriptor;
    }

    private String signature(final SegmentDescriptor unsigned)
    {
        try
        {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(LABEL);
            return HexFormat.of().formatHex(mac.doFinal(unsigned.toJson().getBytes(StandardCharsets.UTF_8)));
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HmacSHA256 unavailable", ex);
        }
    }
}
