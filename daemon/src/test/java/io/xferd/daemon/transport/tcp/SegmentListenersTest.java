package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.agent.SystemCounters;
import io.xferd.daemon.auth.PeerAuthenticator;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.control.SessionRegions;
import io.xferd.daemon.host.LocalNics;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.daemon.session.SessionAddress;
import io.xferd.daemon.session.SessionTable;
import io.xferd.daemon.transport.RemoteRequest;
import io.xferd.daemon.transport.RemoteSegment;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Per-segment RPC ports (Mooncake sessions) on a real peer server, opened by a real TCP transport over loopback:
 * each port serves its own segment whatever name is asked, data goes over one link to the daemon's RPC port, a port
 * and its connections close with its client, and a restarted client on a new port is reached again. The server's
 * second segment is ordinary memory of this process (process_vm_readv/writev), as is one of the initiator's regions,
 * so process memory crosses TCP in both directions on both sides through the staging buffers (5000 bytes, smaller
 * than and not dividing the 16 KiB slices).
 */
@Timeout(30)
class SegmentListenersTest
{
    private static final int PID = (int)ProcessHandle.current().pid();
    private static final int SIZE = 64 * 1024;
    private static final int LENGTH = 3 * 16 * 1024 + 777;
    private static final String TOKEN = "segment-listeners-test-token-0123456789abcdef";

    private final Arena arena = Arena.ofShared();
    private final DaemonContext serverContext = new DaemonContext().rpcAddress("127.0.0.1:0").maxClients(2)
        .stagingBufferSize(5000).sliceSize(16 * 1024).clusterToken(TOKEN);
    private final DaemonContext clientContext = new DaemonContext().rpcAddress("127.0.0.1:1").stagingBufferSize(5000)
        .sliceSize(16 * 1024).transferTimeoutMs(10_000).connectionsPerPeer(1).clusterToken(TOKEN);
    private final SystemCounters serverCounters = counters();
    private final SystemCounters clientCounters = counters();
    private final SessionTable registry = new SessionTable(2);
    private final ClientSession alpha = session(0, 1, "alpha");
    private final ClientSession beta = session(1, 1, "beta");
    private final MemorySegment alphaMemory = arena.allocate(SIZE, 4096);
    // beta registers anonymous memory of this process by address: no mapping, only process_vm reaches it
    private final MemorySegment betaMemory = MappedMemory.mapAnonymous(SIZE);
    private final ClientSession submitter = session(0, 1, "initiator");
    private final MemorySegment localMapped = arena.allocate(SIZE, 4096);
    private final Region localMappedRegion = new Region(0x10_0000L, SIZE, "cpu:0", localMapped, localMapped);
    private final MemorySegment localProcessMemory = MappedMemory.mapAnonymous(SIZE);
    private final Region localProcessRegion = Region.inProcess(localProcessMemory.address(), SIZE, "cpu:0", PID);
    private final PeerServer server;
    private final TcpTransport transport;
    private long requestIds;
    private final RemoteRequest request = new RemoteRequest();

    SegmentListenersTest()
    {
        register(alpha, new Region(0x7f00_0000_0000L, SIZE, "cpu:0", alphaMemory, alphaMemory));
        register(beta, Region.inProcess(betaMemory.address(), SIZE, "cpu:0", PID));
        server = new PeerServer(serverContext, registry, serverCounters, new ManyToOneConcurrentArrayQueue<>(4), 77,
            LocalNics.resolve(List.of()));
        server.start();
        transport = new TcpTransport(clientContext, clientCounters, new ManyToOneConcurrentArrayQueue<>(4),
            LocalNics.resolve(List.of()), PeerAuthenticator.of(clientContext, 5));
    }

    @AfterEach
    void close()
    {
        transport.close();
        server.close();
        arena.close();
        MappedMemory.unmap(betaMemory);
        MappedMemory.unmap(localProcessMemory);
    }

    @Test
    void shouldServeEachSegmentOnItsOwnPortWhateverNameIsAsked() throws Exception
    {
        final int alphaPort = server.segmentListeners().open(alpha);
        final int betaPort = server.segmentListeners().open(beta);

        assertThat(alphaPort).isPositive().isNotEqualTo(betaPort);
        assertThat(server.segmentListeners().open(alpha)).as("one port per segment").isEqualTo(alphaPort);
        assertThat(server.segmentListeners().portOf(beta)).isEqualTo(betaPort);
        final RemoteSegment alphaRemote = remote(open("127.0.0.1:" + alphaPort));
        final RemoteSegment betaRemote = remote(open("127.0.0.1:" + betaPort));
        assertThat(alphaRemote.remoteHandle()).isEqualTo(alpha.segmentHandle());
        assertThat(alphaRemote.name()).isEqualTo("127.0.0.1:" + alphaPort);
        assertThat(alphaRemote.descriptor().name()).isEqualTo(server.advertisedAddress() + "/alpha");
        assertThat(betaRemote.remoteHandle()).isEqualTo(beta.segmentHandle());
        assertThat(betaRemote.descriptor().buffers()).singleElement()
            .satisfies(buffer -> assertThat(buffer.address()).isEqualTo(betaMemory.address()));
        try (RawPeer raw = RawPeer.connect("127.0.0.1:" + betaPort, TOKEN))
        {
            assertThat(raw.handle("alpha")).as("the port's segment, not the one named").isEqualTo(beta.segmentHandle());
        }
        assertThat(transport.links().keySet()).as("data goes to the daemon's RPC port, one link for both")
            .containsExactly(server.advertisedAddress());
        assertThat(open(server.advertisedAddress())).asString().contains("is the RPC port of a daemon");
    }

    @Test
    void shouldMoveBytesIntoAndOutOfProcessMemoryOnBothSidesOverTcp() throws Exception
    {
        final long alphaHandle = (Long)open("127.0.0.1:" + server.segmentListeners().open(alpha));
        final long betaHandle = (Long)open("127.0.0.1:" + server.segmentListeners().open(beta));

        fill(localMapped, 1);
        assertThat(transfer(Opcode.WRITE, localMappedRegion, 0x10_0000L + 5, betaHandle, betaMemory.address() + 9))
            .as("mapped memory into the peer's process memory").isEqualTo(TransferStatus.OK);
        assertThat(betaMemory.asSlice(9, LENGTH).mismatch(localMapped.asSlice(5, LENGTH))).isEqualTo(-1);

        fill(betaMemory, 2);
        assertThat(transfer(Opcode.READ, localMappedRegion, 0x10_0000L, betaHandle, betaMemory.address() + 100))
            .as("the peer's process memory into mapped memory").isEqualTo(TransferStatus.OK);
        assertThat(localMapped.asSlice(0, LENGTH).mismatch(betaMemory.asSlice(100, LENGTH))).isEqualTo(-1);

        fill(localProcessMemory, 3);
        assertThat(transfer(Opcode.WRITE, localProcessRegion, localProcessMemory.address() + 1, alphaHandle,
            0x7f00_0000_0000L + 2)).as("process memory into the peer's mapped memory").isEqualTo(TransferStatus.OK);
        assertThat(alphaMemory.asSlice(2, LENGTH).mismatch(localProcessMemory.asSlice(1, LENGTH))).isEqualTo(-1);

        fill(alphaMemory, 4);
        assertThat(transfer(Opcode.READ, localProcessRegion, localProcessMemory.address() + 3, alphaHandle,
            0x7f00_0000_0000L)).as("the peer's mapped memory into process memory").isEqualTo(TransferStatus.OK);
        assertThat(localProcessMemory.asSlice(3, LENGTH).mismatch(alphaMemory.asSlice(0, LENGTH))).isEqualTo(-1);

        fill(localProcessMemory, 5);
        assertThat(transfer(Opcode.WRITE, localProcessRegion, localProcessMemory.address(), betaHandle,
            betaMemory.address())).as("process memory to process memory").isEqualTo(TransferStatus.OK);
        assertThat(betaMemory.asSlice(0, LENGTH).mismatch(localProcessMemory.asSlice(0, LENGTH))).isEqualTo(-1);
    }

    @Test
    void shouldFailWithMemoryFaultWhereProcessMemoryWasUnmappedAndKeepTheConnectionInStep() throws Exception
    {
        final long alphaHandle = (Long)open("127.0.0.1:" + server.segmentListeners().open(alpha));
        final long betaHandle = (Long)open("127.0.0.1:" + server.segmentListeners().open(beta));
        // the page holding the second slice's start, on both sides
        MappedMemory.unmap(betaMemory.asSlice(16 * 1024, 4096));
        MappedMemory.unmap(localProcessMemory.asSlice(16 * 1024, 4096));

        assertThat(transfer(Opcode.WRITE, localMappedRegion, 0x10_0000L, betaHandle, betaMemory.address()))
            .as("into the peer's unmapped page").isEqualTo(TransferStatus.MEMORY_FAULT);
        assertThat(transfer(Opcode.READ, localMappedRegion, 0x10_0000L, betaHandle, betaMemory.address()))
            .as("out of the peer's unmapped page").isEqualTo(TransferStatus.MEMORY_FAULT);
        assertThat(transfer(Opcode.WRITE, localProcessRegion, localProcessMemory.address(), alphaHandle,
            0x7f00_0000_0000L)).as("out of our unmapped page").isEqualTo(TransferStatus.MEMORY_FAULT);
        assertThat(transfer(Opcode.READ, localProcessRegion, localProcessMemory.address(), alphaHandle,
            0x7f00_0000_0000L)).as("into our unmapped page").isEqualTo(TransferStatus.MEMORY_FAULT);

        fill(localMapped, 6);
        assertThat(transfer(Opcode.WRITE, localMappedRegion, 0x10_0000L, betaHandle, betaMemory.address() + 32 * 1024,
            32 * 1024)).as("what is still mapped, on the same connection").isEqualTo(TransferStatus.OK);
        assertThat(betaMemory.asSlice(32 * 1024, 32 * 1024).mismatch(localMapped.asSlice(0, 32 * 1024))).isEqualTo(-1);
        assertThat(clientCounters.get(SystemCounter.PEER_CONNECTIONS_OUT).get())
            .as("each failed copy was answered, the connection kept in step").isEqualTo(1);
    }

    @Test
    void shouldResolveOnlyItsOwnPortsOnItsOwnHostLocally()
    {
        final int port = server.segmentListeners().open(alpha);
        final SegmentListeners ports = server.segmentListeners();

        assertThat(ports.localSegment(new SessionAddress("127.0.0.1", port))).isSameAs(alpha);
        assertThat(ports.localSegment(new SessionAddress("127.0.0.2", port))).as("another address's port").isNull();
        assertThat(ports.localSegment(new SessionAddress("localhost", port))).as("no DNS here").isNull();
        assertThat(ports.localSegment(new SessionAddress("127.0.0.1", port == 65535 ? 1 : port + 1))).isNull();
    }

    @Test
    void shouldCloseThePortAndItsConnectionsWhenItsClientDisconnects() throws Exception
    {
        final int port = server.segmentListeners().open(alpha);
        final long handle = (Long)open("127.0.0.1:" + port);
        try (RawPeer raw = RawPeer.connect("127.0.0.1:" + port, TOKEN))
        {
            assertThat(raw.handle("x")).isEqualTo(alpha.segmentHandle());

            disconnect(alpha);

            assertThatThrownBy(() -> raw.handle("x")).as("its connection was ended").isInstanceOf(IOException.class);
        }
        assertThatThrownBy(() -> SocketChannel.open(PeerRpcClient.socketAddress("127.0.0.1:" + port)).close())
            .isInstanceOf(ConnectException.class);
        assertThat(open("127.0.0.1:" + port)).isInstanceOf(String.class);
        assertThat(server.segmentListeners().size()).isZero();
        assertThat(transfer(Opcode.WRITE, localMappedRegion, 0x10_0000L, handle, 0x7f00_0000_0000L))
            .as("a handle to the gone segment").isEqualTo(TransferStatus.UNKNOWN_SEGMENT);
    }

    @Test
    void shouldReachARestartedClientOnItsNewPort() throws Exception
    {
        final int port = server.segmentListeners().open(alpha);
        assertThat(open("127.0.0.1:" + port)).isInstanceOf(Long.class);
        disconnect(alpha);
        final ClientSession restarted = session(0, 2, "alpha");
        register(restarted, new Region(0x7f00_0000_0000L, SIZE, "cpu:0", alphaMemory, alphaMemory));

        final int newPort = server.segmentListeners().open(restarted);
        final RemoteSegment remote = remote(open("127.0.0.1:" + newPort));

        assertThat(remote.remoteHandle()).isEqualTo(restarted.segmentHandle()).isNotEqualTo(alpha.segmentHandle());
        fill(localMapped, 7);
        assertThat(transfer(Opcode.WRITE, localMappedRegion, 0x10_0000L,
            transport.remoteSegments().add(remote), 0x7f00_0000_0000L)).isEqualTo(TransferStatus.OK);
        assertThat(alphaMemory.asSlice(0, LENGTH).mismatch(localMapped.asSlice(0, LENGTH))).isEqualTo(-1);
    }

    @Test
    void shouldRefuseMorePortsThanItsCapacity()
    {
        server.segmentListeners().open(alpha);
        server.segmentListeners().open(beta);

        assertThatThrownBy(() -> server.segmentListeners().open(session(0, 3, "gamma")))
            .isInstanceOfSatisfying(RegistrationRefusedException.class, ex ->
            {
                assertThat(ex.code()).isEqualTo(ControlError.TOO_MANY_CLIENTS);
                assertThat(ex.getMessage()).contains("all 2 segment ports are in use");
            });
    }

    /**
     * What the conductor does when a client's socket closes.
     */
    private void disconnect(final ClientSession session)
    {
        registry.remove(session);
        session.markClosed();
        server.segmentListeners().close(session);
    }

    private Object open(final String sessionName) throws Exception
    {
        final CompletableFuture<Object> result = new CompletableFuture<>();
        transport.openAsync(sessionName, "", result::complete);
        return result.get(20, TimeUnit.SECONDS);
    }

    private RemoteSegment remote(final Object opened)
    {
        assertThat(opened).isInstanceOf(Long.class);
        return transport.remoteSegments().get((Long)opened);
    }

    private int transfer(
        final int opcode, final Region local, final long localAddress, final long handle, final long targetAddress)
    {
        return transfer(opcode, local, localAddress, handle, targetAddress, LENGTH);
    }

    private int transfer(
        final int opcode, final Region local, final long localAddress, final long handle, final long targetAddress,
        final long length)
    {
        final long requestId = ++requestIds;
        submitter.tryAcquire();
        local.tryAcquire();
        final int status = transport.submit(request.reset()
            .submitter(submitter)
            .ids(requestId, requestId)
            .opcode(opcode)
            .local(local, localAddress)
            .target(transport.remoteSegments().get(handle), targetAddress)
            .length(length));
        if (status != TransferStatus.OK)
        {
            submitter.release();
            local.release();
            return status;
        }
        final CompletionFlyweight completion = new CompletionFlyweight();
        final int[] result = {-1};
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (result[0] < 0 && System.nanoTime() < deadline)
        {
            submitter.completionRing().read((type, buffer, index, recordLength) ->
            {
                completion.wrap(buffer, index);
                if (completion.requestId() == requestId)
                {
                    result[0] = completion.status();
                }
            });
            Thread.onSpinWait();
        }
        assertThat(result[0]).as("completion of request %d", requestId).isNotNegative();
        return result[0];
    }

    private void register(final ClientSession session, final Region region)
    {
        SessionRegions.set(session, RegionTable.EMPTY.with(region));
        registry.add(session);
    }

    private static ClientSession session(final int slot, final int generation, final String name)
    {
        final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH)));
        return new ClientSession(
            slot, generation, name, "127.0.0.1:0/" + name, PID, 0, 0, null, null, null, ring, null);
    }

    private static SystemCounters counters()
    {
        return new SystemCounters(new CountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024))));
    }

    private static void fill(final MemorySegment memory, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        for (long i = 0; i < memory.byteSize(); i++)
        {
            memory.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
    }
}
