package io.xferd.daemon.control;

import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.config.StorageSegmentConfig;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.session.SubmitRing;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.FileIo;
import io.xferd.nativebindings.libc.Process;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The daemon's own storage segments ({@code storage_segments}): each configured file or block device range is opened
 * by the daemon (O_RDWR, never created, never by a path a client names) at startup and served as a segment of its
 * own, named as configured, holding one file region at {@link FileRegistration#FILE_ADDRESS_BASE}. Clients open it by
 * name and peers by {@code host:port/name} like any client's segment, under the same access policy (its owner is the
 * daemon's uid; the entry's uids and gids are its grant). A file that cannot be opened or is shorter than its range
 * stops the daemon from starting with a {@link ConfigException} naming the entry. It has no client behind it: nobody
 * submits from it, and its rings live in the daemon's memory.
 */
public final class ConfiguredStorageSegments implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ConfiguredStorageSegments.class);
    private static final int RING_CAPACITY = 64 * 1024;

    private final SessionTable registry;
    private final List<ClientSession> sessions = new ArrayList<>();
    private final List<Region> regions = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    private ConfiguredStorageSegments(final SessionTable registry)
    {
        this.registry = registry;
    }

    /**
     * Open every configured segment and add it to the registry.
     *
     * @throws ConfigException naming the entry whose file cannot be served (nothing is left open then).
     */
    public static ConfiguredStorageSegments open(
        final DaemonContext context, final SessionTable registry, final FileRegionMapper mapper)
    {
        final ConfiguredStorageSegments segments = new ConfiguredStorageSegments(registry);
        try
        {
            final int[] owner = ownerIds();
            for (final StorageSegmentConfig config : context.storageSegments())
            {
                segments.add(context, config, mapper, owner);
            }
            return segments;
        }
        catch (final RuntimeException ex)
        {
            segments.close();
            throw ex;
        }
    }

    private void add(
        final DaemonContext context, final StorageSegmentConfig config, final FileRegionMapper mapper,
        final int[] owner)
    {
        final String what = "storage_segments." + config.name() + " (" + config.path() + ")";
        if (registry.byName(config.name()) != null)
        {
            throw new ConfigException(what + ": a segment of that name exists already");
        }
        final int slot = registry.freeSlot();
        if (slot < 0)
        {
            throw new ConfigException(what + ": no client slot left (raise max_clients)");
        }
        final int fd;
        try
        {
            fd = FileIo.open(config.path().toString(), FileIo.O_RDWR | FileIo.O_CLOEXEC, 0);
        }
        catch (final NativeException ex)
        {
            throw new ConfigException(what + ": cannot open it: " + ex.getMessage(), ex);
        }
        final Region region;
        try
        {
            final int flags = (config.direct() ? 0 : ControlMessages.REGISTER_FILE_BUFFERED) |
                (config.sync() ? ControlMessages.REGISTER_FILE_SYNC : 0);
            region = mapper.map(fd, new FileRegistration(0, FileRegistration.FILE_ADDRESS_BASE, config.size(),
                config.offset(), flags), config.name());
        }
        catch (final RegistrationRefusedException ex)
        {
            throw new ConfigException(what + ": " + ex.getMessage(), ex);
        }
        regions.add(region);
        final int completionLength = RingsFileDescriptor.ringLength(RING_CAPACITY);
        final int submitLength = RingsFileDescriptor.ringLength(RING_CAPACITY);
        final long ringsLength = RingsFileDescriptor.fileLength(completionLength, submitLength);
        final MemorySegment rings = arena.allocate(ringsLength, 4096);
        final UnsafeBuffer buffer = new UnsafeBuffer(rings.address(), (int)ringsLength);
        final ClientSession session = new ClientSession(slot, registry.nextGeneration(slot), config.name(),
            context.rpcAddress() + "/" + config.name(), Process.pid(), owner[0], owner[1], null, null, rings,
            new ManyToOneRingBuffer(RingsFileDescriptor.completionRing(buffer, completionLength)),
            new SubmitRing(RingsFileDescriptor.submitRing(buffer, completionLength, submitLength)));
        session.regions(RegionTable.EMPTY.with(region));
        registry.add(session);
        sessions.add(session);
        LOG.info("storage segment {}: {} at address 0x{} ({})", config.name(), region.file(),
            Long.toHexString(FileRegistration.FILE_ADDRESS_BASE), region.file().describe());
    }

    /**
     * @return the daemon's uid and gid: the owner of its storage segments.
     */
    private static int[] ownerIds()
    {
        try
        {
            final Path self = Path.of("/proc/self");
            return new int[]{(Integer)Files.getAttribute(self, "unix:uid"), (Integer)Files.getAttribute(self, "unix:gid")};
        }
        catch (final IOException ex)
        {
            throw new ConfigException("storage_segments: cannot tell the daemon's own uid: " + ex.getMessage(), ex);
        }
    }

    public List<ClientSession> sessions()
    {
        return List.copyOf(sessions);
    }

    /**
     * Take the segments out of the registry and close their files; after the data plane has stopped.
     */
    @Override
    public void close()
    {
        for (final ClientSession session : sessions)
        {
            session.markClosed();
            registry.remove(session);
        }
        sessions.clear();
        regions.forEach(FileRegionMapper::unmap);
        regions.clear();
        arena.close();
    }
}
