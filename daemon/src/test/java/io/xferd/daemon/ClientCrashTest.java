package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferFailedException;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.awaitCounter;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A client process killed with SIGKILL while its transfers are in flight: the daemon notices through its control
 * socket, frees everything it registered once no transfer borrows it, and the other clients carry on. Requests
 * aimed at a dead client fail with a status that says so; none hangs and none reports success.
 */
@Tag("integration")
@Timeout(90)
class ClientCrashTest
{
    private static final int MIB = 1024 * 1024;
    private static final int SIZE = 32 * MIB;

    private Path directory;
    private XferDaemon daemon;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void startDaemon()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
    }

    @AfterEach
    void stopEverything() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        daemon.close();
        SystemTests.deleteRecursively(directory);
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }

    @Test
    void shouldFreeTheRegionsOfAClientKilledMidBatchAndKeepServingTheSurvivor()
    {
        final XferClient survivor = track(XferClient.connect(SystemTests.clientContext(directory, "survivor")));
        final SharedBuffer target = survivor.allocateMemory(SIZE);
        survivor.registerMemory(target, "cpu:0");
        final long survivorBytes = counter(daemon, SystemCounter.REGISTERED_BYTES);
        assertThat(survivorBytes).isEqualTo(SIZE);

        final ChildProcess flooder = track(ChildProcess.start("flooder", ClientRoleMain.class, "flood",
            directory.toString(), "flooder", "survivor", Long.toString(target.address()), Integer.toString(SIZE),
            Integer.toString(4 * MIB)));
        flooder.awaitLine("FLOODING", WAIT);
        awaitCounter(daemon, SystemCounter.REQUESTS_SUBMITTED, n -> n >= 40,
            "the flooder is into its second batch of 4 MiB WRITEs");
        assertThat(counter(daemon, SystemCounter.REGISTERED_BYTES)).isEqualTo(survivorBytes + SIZE);
        final long disconnectedBefore = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);

        flooder.kill();

        awaitCounter(daemon, SystemCounter.CLIENTS_DISCONNECTED, n -> n == disconnectedBefore + 1,
            "the daemon notices the killed client");
        awaitCounter(daemon, SystemCounter.REGISTERED_BYTES, n -> n == survivorBytes,
            "the killed client's regions are freed");
        assertThat(counter(daemon, SystemCounter.REGIONS_REGISTERED)).isEqualTo(1);

        final SharedBuffer scratch = survivor.allocateMemory(MIB);
        SystemTests.fill(scratch.segment(), 99);
        survivor.registerMemory(scratch, "cpu:0");
        survivor.transferSyncWrite(survivor.ownSegment(), scratch.address(), target.address(), MIB);
        assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(99, MIB), 0, MIB))
            .isEqualTo(-1);
        try (XferClient successor = XferClient.connect(SystemTests.clientContext(directory, "flooder")))
        {
            assertThat(successor.openSegment("survivor")).isEqualTo(survivor.ownSegment());
        }
    }

    /**
     * The storage stage holds borrows of both regions of each file request it has in the kernel: a client killed
     * while its READs (the kernel writing into its memory) and WRITEs are in flight has its memory and file freed
     * only after the kernel gave every operation back, and the storage path serves the next client.
     */
    @Test
    void shouldFreeTheFileAndMemoryOfAClientKilledWithStorageRequestsInTheKernel() throws Exception
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.xferd.nativebindings.libc.IoUring.isAvailable(),
            "io_uring not available here");
        final Path files = track(new TempDirectory()).path;
        final Path file = files.resolve("killed.bin");
        java.nio.file.Files.write(file, SystemTests.randomBytes(5, SIZE));
        final long bytesBefore = counter(daemon, SystemCounter.REGISTERED_BYTES);
        final ChildProcess flooder = track(ChildProcess.start("file-flooder", ClientRoleMain.class, "flood-file",
            directory.toString(), "file-flooder", file.toString(), Integer.toString(SIZE), Integer.toString(MIB)));
        flooder.awaitLine("FLOODING", WAIT);
        awaitCounter(daemon, SystemCounter.STORAGE_BYTES_READ, n -> n >= 64L * MIB,
            "the flooder's READs and WRITEs are going through the storage stage");
        final long disconnectedBefore = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);

        flooder.kill();

        awaitCounter(daemon, SystemCounter.CLIENTS_DISCONNECTED, n -> n == disconnectedBefore + 1,
            "the daemon notices the killed client");
        awaitCounter(daemon, SystemCounter.REGISTERED_BYTES, n -> n == bytesBefore,
            "the killed client's memory and file are freed once the kernel gave back its operations");
        SystemTests.awaitCondition(() -> storageRegions().isEmpty(), WAIT, () -> "its file region's counters freed");

        // the storage path serves the next client: its own file, memory -> file -> memory, every byte checked
        final XferClient next = track(XferClient.connect(SystemTests.clientContext(directory, "next")));
        final SharedBuffer memory = next.allocateMemory(4 * MIB);
        next.registerMemory(memory, "cpu:0");
        final Path nextFile = files.resolve("next.bin");
        java.nio.file.Files.write(nextFile, new byte[4 * MIB]);
        final long fileAddress = next.registerFile(nextFile, 0, 4 * MIB, 0);
        SystemTests.fill(memory.segment(), 6);
        next.transferSyncWrite(next.ownSegment(), memory.address(), fileAddress, 2 * MIB);
        next.transferSyncRead(next.ownSegment(), memory.address() + 2 * MIB, fileAddress, 2 * MIB);
        assertThat(SystemTests.firstMismatch(memory.segment(), 2 * MIB, SystemTests.randomBytes(6, 4 * MIB), 0,
            2 * MIB)).isEqualTo(-1);
        assertThat(java.util.Arrays.mismatch(java.nio.file.Files.readAllBytes(nextFile),
            java.util.Arrays.copyOf(SystemTests.randomBytes(6, 4 * MIB), 2 * MIB))).isEqualTo(2 * MIB);
    }

    @SuppressWarnings("unchecked")
    private List<java.util.Map<String, Object>> storageRegions()
    {
        return (List<java.util.Map<String, Object>>)((java.util.Map<String, Object>)
            io.xferd.daemon.tools.status.StatusSnapshot.read(directory).get("storage")).get("regions");
    }

    /** A directory on the machine's disk for the test's files, removed with everything in it. */
    private static final class TempDirectory implements AutoCloseable
    {
        final Path path;

        TempDirectory() throws java.io.IOException
        {
            path = java.nio.file.Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")),
                "xferd-crash-files");
        }

        @Override
        public void close()
        {
            SystemTests.deleteRecursively(path);
        }
    }

    @Test
    void shouldFailRequestsTargetingAClientThatDied()
    {
        final ChildProcess decode = track(ChildProcess.start("decode", ClientRoleMain.class,
            "hold", directory.toString(), "decode", Integer.toString(SIZE), "3"));
        final long targetAddress = Long.parseLong(decode.awaitLine("READY ", WAIT).split(" ")[2]);
        final XferClient prefill = track(XferClient.connect(SystemTests.clientContext(directory, "prefill")));
        final SharedBuffer source = prefill.allocateMemory(SIZE);
        prefill.registerMemory(source, "cpu:0");
        final long segment = prefill.openSegment("decode");
        final long disconnectedBefore = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);
        final TransferRequest request = new TransferRequest();
        final int batchSize = 16;

        boolean killed = false;
        boolean batchAfterDeathSeen = false;
        int completedBeforeDeath = 0;
        for (int round = 0; round < 1000 && !batchAfterDeathSeen; round++)
        {
            final boolean deathKnown = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED) > disconnectedBefore;
            final long batch = prefill.allocateBatch(batchSize);
            for (int task = 0; task < batchSize; task++)
            {
                final long offset = (long)(task % 8) * 2 * MIB;
                final int opcode = task % 2 == 0 ? Opcode.WRITE : Opcode.READ;
                prefill.submitTransfer(batch,
                    request.set(opcode, source.address() + offset, segment, targetAddress + offset, 2 * MIB));
            }
            if (!killed)
            {
                decode.kill();
                killed = true;
            }
            prefill.awaitBatch(batch, WAIT.toMillis());
            for (int task = 0; task < batchSize; task++)
            {
                final TaskStatus status = prefill.getTransferStatus(batch, task);
                if (deathKnown)
                {
                    assertThat(TransferStatus.name(status.status())).as("task %d after the death", task)
                        .isIn("UNKNOWN_SEGMENT", "TARGET_GONE");
                }
                else
                {
                    assertThat(TransferStatus.name(status.status())).as("task %d around the death", task)
                        .isIn("OK", "UNKNOWN_SEGMENT", "TARGET_GONE");
                    completedBeforeDeath += status.status() == TransferStatus.OK ? 1 : 0;
                }
            }
            prefill.freeBatch(batch);
            batchAfterDeathSeen = deathKnown;
        }

        assertThat(batchAfterDeathSeen).as("a whole batch was submitted after the daemon saw the death").isTrue();
        assertThat(counter(daemon, SystemCounter.REQUESTS_COMPLETED)).isEqualTo(completedBeforeDeath);
        assertThatThrownBy(() -> prefill.transferSyncWrite(segment, source.address(), targetAddress, 4096))
            .isInstanceOf(TransferFailedException.class);
        assertThatThrownBy(() -> prefill.openSegment("decode"))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.UNKNOWN_SEGMENT));
        awaitCounter(daemon, SystemCounter.REGISTERED_BYTES, n -> n == SIZE, "the dead client's regions are freed");
        prefill.transferSyncWrite(prefill.ownSegment(), source.address(), source.address() + SIZE / 2, SIZE / 2);
    }
}
