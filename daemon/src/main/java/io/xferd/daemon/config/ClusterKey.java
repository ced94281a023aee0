package io.xferd.daemon.config;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * The cluster token a daemon proves to its peers, resolved once at start: the configured one ({@code
 * cluster_token}), else the token file ({@code cluster_token_file}, default {@code <dir>/cluster.token}), which
 * is created with 256 random bits (mode 0600) when it does not exist yet. Every daemon of a cluster needs the
 * same token: copy the file. Tokens shorter than {@link #MIN_TOKEN_LENGTH} characters are refused.
 */
public final class ClusterKey
{
    private static final Logger LOG = LoggerFactory.getLogger(ClusterKey.class);
    public static final String DEFAULT_FILE_NAME = "cluster.token";
    /** 128 bits written as hex. */
    public static final int MIN_TOKEN_LENGTH = 32;
    private static final int GENERATED_BYTES = 32;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private ClusterKey()
    {
    }

    /**
     * Resolve the token of {@code context} (which must be concluded, its directory existing) and set it there,
     * with where it came from for {@code xferd status}. Nothing to do when peer authentication is off.
     *
     * @throws IllegalArgumentException when the token is too short or the file cannot be read or made.
     */
    public static void resolve(final DaemonContext context)
    {
        if (!context.peerAuthentication())
        {
            context.clusterTokenSource("none: peer authentication is OFF (--insecure-no-peer-auth)");
            return;
        }
        if (context.clusterToken() != null)
        {
            requireLongEnough(context.clusterToken(), "cluster_token");
            context.clusterTokenSource("inline (cluster_token)");
            return;
        }
        final Path file = tokenFile(context);
        final String token = readOrCreate(file);
        context.clusterToken(token);
        context.clusterTokenSource("file " + file);
    }

    /**
     * @return the token file a daemon with this context uses.
     */
    public static Path tokenFile(final DaemonContext context)
    {
        return context.clusterTokenFile() != null ? context.clusterTokenFile() :
            context.directory().resolve(DEFAULT_FILE_NAME);
    }

    /**
     * @throws IllegalArgumentException naming {@code origin} when the token has fewer than 32 characters.
     */
    public static String requireLongEnough(final String token, final String origin)
    {
        if (token.length() < MIN_TOKEN_LENGTH)
        {
            throw new IllegalArgumentException(origin + " is " + token.length() + " characters long; a cluster " +
                "token needs at least " + MIN_TOKEN_LENGTH + " (128 bits as hex). Make one with " +
                "`head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n'`, or remove the setting and let the daemon " +
                "create " + DEFAULT_FILE_NAME);
        }
        return token;
    }

    static String readOrCreate(final Path file)
    {
        if (!Files.exists(file))
        {
            try
            {
                final String token = create(file);
                LOG.info("created the cluster token file {} (256 random bits, mode 0600): copy it to every daemon " +
                    "of this cluster (cluster_token_file / --cluster-token-file)", file);
                return token;
            }
            catch (final FileAlreadyExistsException ex)
            {
                // another daemon sharing the file made it first: use theirs
            }
            catch (final IOException ex)
            {
                throw new IllegalArgumentException("cannot create the cluster token file " + file + ": " + ex, ex);
            }
        }
        final String token;
        try
        {
            token = Files.readString(file, StandardCharsets.UTF_8).trim();
            final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.stream().anyMatch(permission -> !OWNER_ONLY.contains(permission)))
            {
                LOG.warn("cluster token file {} is readable by others ({}): chmod 600 it",
                    file, PosixFilePermissions.toString(permissions));
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("cannot read the cluster token file " + file + ": " + ex, ex);
        }
        catch (final UnsupportedOperationException ex)
        {
            throw new UncheckedIOException(new IOException("no POSIX permissions on " + file, ex));
        }
        if (token.isEmpty())
        {
            throw new IllegalArgumentException("the cluster token file " + file + " is empty");
        }
        return requireLongEnough(token, "the token in " + file);
    }

    private static String create(final Path file) throws IOException
    {
        final byte[] bytes = new byte[GENERATED_BYTES];
        new SecureRandom().nextBytes(bytes);
        final String token = HexFormat.of().formatHex(bytes);
        // created 0600 from the start (no window in which the umask's mode lets others read it)
        try (SeekableByteChannel channel = Files.newByteChannel(file,
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(OWNER_ONLY)))
        {
            final ByteBuffer content = ByteBuffer.wrap((token + "\n").getBytes(StandardCharsets.US_ASCII));
            while (content.hasRemaining())
            {
                channel.write(content);
            }
        }
        return token;
    }
}
