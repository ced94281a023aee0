package io.xferd.daemon.metadata;

import io.xferd.daemon.auth.DescriptorSigner;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.PeerTransport;
import io.xferd.daemon.transport.SegmentDescriptor;

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The daemon's side of a cluster metadata store (etcd, redis or http): publishes this daemon's segments
 * ({@link SegmentPublisher}) and finds other daemons' segments by plain name ({@link SegmentDirectory}). The store
 * is only the directory: a segment found there is opened through the peer transport, which fetches the live
 * descriptor from the owning daemon itself, exactly as for a {@code host:port/name}.
 */
public final class ClusterMetadata implements AutoCloseable
{
    private final MetadataStore store;
    private final SegmentPublisher publisher;
    private final SegmentDirectory directory;
    private final PeerTransport transport;

    public ClusterMetadata(
        final MetadataStore store,
        final DaemonContext context,
        final Function<ClientSession, SegmentDescriptor> describer,
        final PeerTransport transport)
    {
        final MetadataKeys keys = new MetadataKeys(context.clusterId());
        this.store = store;
        this.transport = transport;
        // what is published is signed with the cluster key; what is read is checked, and must name what was asked
        final DescriptorSigner signer = DescriptorSigner.of(context);
        this.publisher = new SegmentPublisher(store, keys, session -> signer.sign(describer.apply(session)),
            context.metadataTtlMs(), descriptor ->
            {
                try
                {
                    signer.verify(descriptor);
                    return true;
                }
                catch (final IllegalArgumentException ex)
                {
                    return false;
                }
            });
        this.directory = new SegmentDirectory(store, keys, Math.max(100, context.metadataTtlMs() / 3), signer);
    }

    /**
     * @return the daemon's metadata, or null when {@code metadata_server} is {@code P2PHANDSHAKE} (no store).
     */
    public static ClusterMetadata create(
        final DaemonContext context,
        final Function<ClientSession, SegmentDescriptor> describer,
        final PeerTransport transport)
    {
        final MetadataServer server = MetadataServer.parse(context.metadataServer());
        if (server.kind() == MetadataServer.Kind.P2PHANDSHAKE)
        {
            return null;
        }
        // one operation may take up to half the TTL (at least 2 s: a cold JVM's first request is slow)
        final long timeoutMs = Math.max(2000, Math.min(5000, context.metadataTtlMs() / 2));
        return new ClusterMetadata(MetadataStores.open(server, context.metadataTtlMs(), timeoutMs,
            metadataToken(context), context.metadataAccess()), context, describer, transport);
    }

    private static String metadataToken(final DaemonContext context)
    {
        if (context.metadataTokenFile() == null)
        {
            return null;
        }
        try
        {
            final String token = java.nio.file.Files.readString(context.metadataTokenFile()).trim();
            if (token.isEmpty())
            {
                throw new IllegalArgumentException("metadata token file " + context.metadataTokenFile() + " is empty");
            }
            return token;
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalArgumentException("cannot read the metadata token file " + context.metadataTokenFile() +
                ": " + ex, ex);
        }
    }

    public void start()
    {
        publisher.start();
        directory.start();
    }

    /**
     * A client connected, or registered or unregistered memory. Never blocks.
     */
    public void segmentChanged(final ClientSession session)
    {
        publisher.changed(session);
    }

    /**
     * A client disconnected. Never blocks.
     */
    public void segmentRemoved(final ClientSession session)
    {
        publisher.removed(session);
    }

    /**
     * Open another daemon's segment by its plain name: look it up in the store, then open it through the
     * transport (a descriptor from the cache that no longer leads anywhere is looked up afresh, once).
     * {@code onResult} gets the handle (a Long) or why it failed (a String), on a metadata or transport thread.
     */
    public void openAsync(final String segmentName, final Consumer<Object> onResult)
    {
        open(segmentName, false, onResult);
    }

    private void open(final String segmentName, final boolean fresh, final Consumer<Object> onResult)
    {
        final boolean wasCached = !fresh && directory.isCached(segmentName);
        directory.resolve(segmentName, fresh, (descriptor, error) ->
        {
            if (descriptor == null)
            {
                onResult.accept(error);
                return;
            }
            // the directory checked that the descriptor names segmentName, at its rpc address
            transport.openAsync(descriptor.rpcAddress(), segmentName, result ->
            {
                if (!(result instanceof Long) && wasCached)
                {
                    directory.invalidate(segmentName);
                    open(segmentName, true, onResult);
                    return;
                }
                onResult.accept(result instanceof Long ? result : "its daemon " + descriptor.rpcAddress() +
                    " (from metadata store " + store.url() + "): " + result);
            });
        });
    }

    /**
     * @return whether another daemon's segment is in the lookup cache (dropped when the store says it changed).
     */
    public boolean isCached(final String segmentName)
    {
        return directory.isCached(segmentName);
    }

    public boolean isPublishing()
    {
        return publisher.isReachable();
    }

    @Override
    public void close()
    {
        directory.close();
        publisher.close();
    }
}
