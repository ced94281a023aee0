package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferFailedException;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.MappedMemory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Ordinary memory of a client process (anonymous memory it did not share, as a numpy array is), registered by
 * address with REGISTER_PROCESS_MEMORY and reached by the daemon with process_vm_readv/writev on the pid of its
 * socket's peer: a child process holds it; a client of the same daemon writes and reads it locally, a client of a
 * second daemon across a loopback peer connection, and this JVM's own anonymous memory copies into it (process to
 * process). Every byte is checked by the child itself. Pages the child unmapped fail their requests with
 * MEMORY_FAULT while both daemons keep serving; a range the daemon cannot read is refused at registration.
 */
@Tag("integration")
@Timeout(120)
class ProcessMemoryTest
{
    private static final int SIZE = 1 << 20;
    private static final int LENGTH = 300_000;
    private static final long HOLDER_SEED = 41;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Path peerDirectory = SystemTests.newDaemonDirectory();
    private XferDaemon daemon;
    private XferDaemon peer;
    private ChildProcess holder;
    private XferClient local;
    private XferClient remote;
    private SharedBuffer localBuffer;
    private SharedBuffer remoteBuffer;
    private long holderAddress;
    private int checks;

    @BeforeEach
    void launch()
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).sliceSize(64 * 1024));
        peer = XferDaemon.launch(SystemTests.daemonContext(peerDirectory).sliceSize(64 * 1024));
        holder = ChildProcess.start("holder", ProcessMemoryHolderMain.class, directory.toString(), "holder",
            Integer.toString(SIZE), Long.toString(HOLDER_SEED));
        holderAddress = Long.parseLong(holder.awaitLine("READY ", WAIT).split(" ")[1]);
        local = XferClient.connect(SystemTests.clientContext(directory, "local"));
        localBuffer = local.allocateMemory(SIZE);
        local.registerMemory(localBuffer, "cpu:0");
        remote = XferClient.connect(SystemTests.clientContext(peerDirectory, "remote"));
        remoteBuffer = remote.allocateMemory(SIZE);
        remote.registerMemory(remoteBuffer, "cpu:0");
    }

    @AfterEach
    void tearDown()
    {
        for (final AutoCloseable closeable : new AutoCloseable[]{local, remote, holder, daemon, peer})
        {
            if (closeable != null)
            {
                try
                {
                    closeable.close();
                }
                catch (final Exception ignore)
                {
                    // closing anyway
                }
            }
        }
        SystemTests.deleteRecursively(directory);
        SystemTests.deleteRecursively(peerDirectory);
    }

    @Test
    void shouldWriteAndReadAnotherProcesssOrdinaryMemoryLocally()
    {
        final long segment = local.openSegment("holder");
        SystemTests.fill(localBuffer.segment(), 1);

        local.transferSyncWrite(segment, localBuffer.address() + 3, holderAddress + 1000, LENGTH);
        assertHolderHas(1, 3, 1000, LENGTH);
        assertHolderHas(HOLDER_SEED, 0, 0, 1000);

        local.transferSyncRead(segment, localBuffer.address(), holderAddress + 500_000, LENGTH);
        assertThat(SystemTests.firstMismatch(localBuffer.segment(), 0, SystemTests.randomBytes(HOLDER_SEED, SIZE),
            500_000, LENGTH)).isEqualTo(-1);
    }

    @Test
    void shouldWriteAndReadAnotherProcesssOrdinaryMemoryFromAnotherDaemon()
    {
        final long segment = remote.openSegment(daemon.rpcAddress() + "/holder");
        SystemTests.fill(remoteBuffer.segment(), 2);

        remote.transferSyncWrite(segment, remoteBuffer.address(), holderAddress + 7, LENGTH);
        assertHolderHas(2, 0, 7, LENGTH);

        remote.transferSyncRead(segment, remoteBuffer.address() + 11, holderAddress + 600_000, LENGTH);
        assertThat(SystemTests.firstMismatch(remoteBuffer.segment(), 11, SystemTests.randomBytes(HOLDER_SEED, SIZE),
            600_000, LENGTH)).isEqualTo(-1);
    }

    @Test
    void shouldCopyFromThisProcesssOrdinaryMemoryIntoTheOthers()
    {
        final MemorySegment own = MappedMemory.mapAnonymous(SIZE);
        try (RawControlSession self = RawControlSession.hello(directory, "self", WAIT))
        {
            SystemTests.fill(own, 3);
            assertThat(ProcessMemoryHolderMain.register(self, 1, own.address(), SIZE, "*").type())
                .isEqualTo(ControlMessages.OK);
            final long segment = openSegment(self, 2, "holder");

            assertThat(self.submitAndAwait(Opcode.WRITE, segment, own.address() + 5, holderAddress + 9, LENGTH, WAIT))
                .as("process memory to process memory").isEqualTo(TransferStatus.OK);
            assertHolderHas(3, 5, 9, LENGTH);

            own.fill((byte)0);
            assertThat(self.submitAndAwait(Opcode.READ, segment, own.address(), holderAddress + 500_000, LENGTH, WAIT))
                .isEqualTo(TransferStatus.OK);
            assertThat(SystemTests.firstMismatch(own, 0, SystemTests.randomBytes(HOLDER_SEED, SIZE), 500_000, LENGTH))
                .isEqualTo(-1);
        }
        finally
        {
            MappedMemory.unmap(own);
        }
    }

    @Test
    void shouldRegisterTheClientLibrarysOwnOrdinaryMemoryAndMoveItBothWays()
    {
        final MemorySegment own = MappedMemory.mapAnonymous(SIZE);
        try
        {
            local.registerProcessMemory(own.address(), SIZE, "cpu:0");
            final long segment = local.openSegment("holder");
            SystemTests.fill(own, 6);

            local.transferSyncWrite(segment, own.address() + 1, holderAddress + 3, LENGTH);
            assertHolderHas(6, 1, 3, LENGTH);
            local.transferSyncRead(segment, own.address(), holderAddress + 700_000, LENGTH);
            assertThat(SystemTests.firstMismatch(own, 0, SystemTests.randomBytes(HOLDER_SEED, SIZE), 700_000,
                LENGTH)).isEqualTo(-1);

            assertThatThrownBy(() -> local.registerProcessMemory(own.address() + 4096, 4096, "cpu:0"))
                .isInstanceOfSatisfying(ControlException.class,
                    ex -> assertThat(ex.code()).isEqualTo(ControlError.OVERLAPPING_REGION));
            local.unregisterMemory(own.address());
            assertFails(() -> local.transferSyncWrite(segment, own.address(), holderAddress, 100),
                TransferStatus.LOCAL_RANGE_NOT_REGISTERED);
        }
        finally
        {
            MappedMemory.unmap(own);
        }
    }

    @Test
    void shouldFailRequestsToUnmappedPagesWithMemoryFaultAndKeepServing()
    {
        final long localSegment = local.openSegment("holder");
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/holder");
        holder.sendLine("UNMAP 1 4096 8192");
        holder.awaitLine("UNMAPPED 1", WAIT);

        assertFails(() -> local.transferSyncWrite(localSegment, localBuffer.address(), holderAddress, LENGTH),
            TransferStatus.MEMORY_FAULT);
        assertFails(() -> local.transferSyncRead(localSegment, localBuffer.address(), holderAddress + 8192, 100),
            TransferStatus.MEMORY_FAULT);
        assertFails(() -> remote.transferSyncWrite(remoteSegment, remoteBuffer.address(), holderAddress + 4000, 200),
            TransferStatus.MEMORY_FAULT);
        assertFails(() -> remote.transferSyncRead(remoteSegment, remoteBuffer.address(), holderAddress + 5000, 100),
            TransferStatus.MEMORY_FAULT);

        SystemTests.fill(localBuffer.segment(), 4);
        local.transferSyncWrite(localSegment, localBuffer.address(), holderAddress + 20_000, LENGTH);
        assertHolderHas(4, 0, 20_000, LENGTH);
        SystemTests.fill(remoteBuffer.segment(), 5);
        remote.transferSyncWrite(remoteSegment, remoteBuffer.address(), holderAddress + 400_000, LENGTH);
        assertHolderHas(5, 0, 400_000, LENGTH);
    }

    @Test
    void shouldRefuseMemoryTheDaemonCannotReachAndOverlaps()
    {
        // registration reads the first and the last byte: a range ending in an unmapped page is refused (a hole in
        // the middle is found by the transfer that reaches it, with MEMORY_FAULT)
        final MemorySegment own = MappedMemory.mapAnonymous(3 * 4096);
        MappedMemory.unmap(own.asSlice(4096, 4096));
        try (RawControlSession self = RawControlSession.hello(directory, "self", WAIT))
        {
            assertError(ProcessMemoryHolderMain.register(self, 1, own.address(), 2 * 4096, "cpu:0"),
                ControlError.INVALID_ARGUMENT, "is not mapped readable");
            assertError(ProcessMemoryHolderMain.register(self, 6, own.address() + 4096, 4096, "cpu:0"),
                ControlError.INVALID_ARGUMENT, "is not mapped readable");
            assertError(ProcessMemoryHolderMain.register(self, 2, own.address(), 4096, "cuda:0"),
                ControlError.INVALID_ARGUMENT, "location");
            assertError(ProcessMemoryHolderMain.register(self, 3, 0, 4096, "cpu:0"),
                ControlError.INVALID_ARGUMENT, "bad range");
            assertThat(ProcessMemoryHolderMain.register(self, 4, own.address(), 4096, "cpu:0").type())
                .isEqualTo(ControlMessages.OK);
            assertError(ProcessMemoryHolderMain.register(self, 5, own.address() + 100, 10, "cpu:0"),
                ControlError.OVERLAPPING_REGION, "overlaps");
        }
        finally
        {
            MappedMemory.unmap(own.asSlice(0, 4096));
            MappedMemory.unmap(own.asSlice(8192, 4096));
        }
        local.transferSyncWrite(local.openSegment("holder"), localBuffer.address(), holderAddress, 100);
    }

    @Test
    void shouldFailAnOpenHandleOnceTheOwnerProcessIsGone()
    {
        final long localSegment = local.openSegment("holder");
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/holder");

        holder.sendLine("EXIT");
        assertThat(holder.awaitExit(WAIT)).isZero();
        SystemTests.awaitCondition(() ->
        {
            try
            {
                local.openSegment("holder");
                return false;
            }
            catch (final RuntimeException ex)
            {
                return true;
            }
        }, WAIT, () -> "the holder's segment still open");

        assertFails(() -> local.transferSyncWrite(localSegment, localBuffer.address(), holderAddress, 100),
            TransferStatus.UNKNOWN_SEGMENT);
        assertFails(() -> remote.transferSyncWrite(remoteSegment, remoteBuffer.address(), holderAddress, 100),
            TransferStatus.UNKNOWN_SEGMENT);
    }

    private void assertHolderHas(final long seed, final long seedOffset, final long offset, final long length)
    {
        final int check = ++checks;
        holder.sendLine("VERIFY " + check + " " + seed + " " + seedOffset + " " + offset + " " + length);
        assertThat(holder.awaitLine("CHECKED " + check + " ", WAIT)).isEqualTo("CHECKED " + check + " ok");
    }

    private static long openSegment(final RawControlSession session, final long correlationId, final String name)
    {
        final ControlFrame answer = session.request(frame -> frame.begin(ControlMessages.OPEN_SEGMENT)
            .putLong(ControlMessages.CORRELATION_ID, correlationId)
            .putString(ControlMessages.OPEN_SEGMENT_NAME, name), WAIT);
        assertThat(answer.type()).isEqualTo(ControlMessages.OK);
        return answer.getLong(ControlMessages.OK_VALUE);
    }

    private static void assertFails(final Runnable transfer, final int status)
    {
        assertThatThrownBy(transfer::run).isInstanceOfSatisfying(TransferFailedException.class,
            ex -> assertThat(TransferStatus.name(ex.status())).isEqualTo(TransferStatus.name(status)));
    }

    private static void assertError(final ControlFrame answer, final int code, final String text)
    {
        assertThat(answer.type()).isEqualTo(ControlMessages.ERROR);
        assertThat(ControlError.name(answer.getInt(ControlMessages.ERROR_CODE))).isEqualTo(ControlError.name(code));
        assertThat(answer.getString(ControlMessages.ERROR_MESSAGE)).contains(text);
    }
}
