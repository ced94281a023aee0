package io.xferd.daemon.transport.rdma;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.SegmentDescriptor;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersManager;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One daemon's RDMA side in a test: its simulated devices, registrar, transport (driven by calling its agent's
 * doWork on the test thread, with a clock the test advances), one client session whose completion ring the test
 * reads, and that client's registered regions.
 */
final class RdmaSide implements AutoCloseable
{
    static final long TIMEOUT_MS = 200;
    static final int SLICE = 4096;

    final String address;
    final long epoch;
    final DaemonContext context;
    final CountersManager countersManager = new CountersManager(
        new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)), new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024)));
    final SystemCounters counters = new SystemCounters(countersManager);
    final List<SimulatedFabric.SimulatedDevice> devices = new ArrayList<>();
    final RdmaMemoryRegistrar registrar;
    final RdmaTransport transport;
    final CachedNanoClock clock = new CachedNanoClock();
    final ClientSession session;
    final Arena arena = Arena.ofShared();
    private final List<Region> regions = new ArrayList<>();
    /** Refilled for each submit, as a transfer worker does (the allocation test counts the submits). */
    private final RemoteRequest request = new RemoteRequest();

    RdmaSide(final SimulatedFabric fabric, final String address, final long epoch, final String... deviceNames)
    {
        this(fabric, address, epoch, List.of(deviceNames), deviceNames);
    }

    /**
     * @param preferred the devices the topology prefers for every location.
     */
    /** The cluster token every side of these tests shares. */
    static final String TOKEN = "rdma-test-cluster-token-0123456789abcdef";

    RdmaSide(
        final SimulatedFabric fabric, final String address, final long epoch, final List<String> preferred,
        final String... deviceNames)
    {
        this.address = address;
        this.epoch = epoch;
        this.context = new DaemonContext().protocol("rdma").sliceSize(SLICE).transferTimeoutMs(TIMEOUT_MS)
            .connectionsPerPeer(2).rpcAddress(address).clusterToken(TOKEN);
        final List<RdmaDevice> opened = new ArrayList<>();
        for (final String name : deviceNames)
        {
            final SimulatedFabric.SimulatedDevice device = fabric.device(name);
            devices.add(device);
            opened.add(device);
        }
        this.registrar = new RdmaMemoryRegistrar(new RdmaDevices(opened));
        clock.update(1_000_000_000L);
        this.transport = new RdmaTransport(context, epoch, counters, new ManyToOneConcurrentArrayQueue<>(16), registrar,
            location -> preferred, clock);
        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH)));
        this.session = new ClientSession(1, 1, "seg", address + "/seg", 1, 1, 1, null, null, null, ring, null);
    }

    /**
     * A region of {@code length} bytes at owner address {@code ownerAddress}, registered on every device.
     */
    Region region(final long ownerAddress, final int length)
    {
        final MemorySegment mapping = arena.allocate(length, 4096);
        final Region region = new Region(ownerAddress, length, "cpu:0", mapping, mapping);
        registrar.register(region);
        regions.add(region);
        return region;
    }

    SegmentDescriptor descriptor()
    {
        final List<SegmentDescriptor.Buffer> buffers = regions.stream().map(transport::describe).toList();
        return new SegmentDescriptor(SegmentDescriptor.VERSION, address + "/seg", "rdma", address, epoch, 7L,
            registrar.devices().names(), null, buffers, null);
    }

    /**
     * Open {@code peer}'s segment as a client's OPEN would, the QP exchange going straight to the peer's
     * transport (encoded and decoded as on the wire).
     */
    long open(final RdmaSide peer)
    {
        return transport.open(peer.address, "seg", peer.descriptor(), peer.transport::acceptConnect);
    }

    /**
     * Submit as the transfer worker does: it borrows the submitter and the local region first.
     */
    int submit(
        final long requestId, final int opcode, final Region local, final long localAddress, final long handle,
        final long targetAddress, final long length)
    {
        session.tryAcquire();
        local.tryAcquire();
        final int status = transport.submit(request.reset()
            .submitter(session)
            .ids(requestId, requestId)
            .opcode(opcode)
            .local(local, localAddress)
            .target(transport.remoteSegments().get(handle), targetAddress)
            .length(length));
        if (status != 0)
        {
            session.release();
            local.release();
        }
        return status;
    }

    /**
     * Run the agent until a completion arrives (at most {@code cycles} duty cycles).
     *
     * @return {status, bytes} of the completion, or null when none came.
     */
    long[] awaitCompletion(final int cycles)
    {
        for (int i = 0; i < cycles; i++)
        {
            transport.agent().doWork();
            final long[] completion = pollCompletion();
            if (completion != null)
            {
                return completion;
            }
        }
        return null;
    }

    long[] pollCompletion()
    {
        final long[][] read = new long[1][];
        session.completionRing().read((type, buffer, index, length) ->
        {
            final CompletionFlyweight completion = new CompletionFlyweight().wrap(buffer, index);
            read[0] = new long[] {completion.status(), completion.bytesTransferred(), completion.requestId()};
        }, 1);
        return read[0];
    }

    long counter(final SystemCounter counter)
    {
        return counters.get(counter).get();
    }

    /**
     * @return the value of the counter labelled {@code label}, or -1 when there is none.
     */
    long counter(final String label)
    {
        final long[] value = {-1};
        countersManager.forEach((counterId, typeId, keyBuffer, counterLabel) ->
        {
            if (counterLabel.equals(label))
            {
                value[0] = countersManager.getCounterValue(counterId);
            }
        });
        return value[0];
    }

    void advanceClockMs(final long ms)
    {
        clock.advance(ms * 1_000_000L);
    }

    @Override
    public void close()
    {
        transport.agent().onClose();
        transport.close();
        regions.forEach(Region::markClosed);
        arena.close();
    }
}
