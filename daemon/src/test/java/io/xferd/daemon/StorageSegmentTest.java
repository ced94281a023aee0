package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferFailedException;
import io.xferd.client.XferClient;
import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.IoUring;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Storage regions end to end: a client ("owner") registers a file with {@code registerFile}; another client of the
 * same daemon ("user") and a client of a second daemon over a loopback peer connection ("remote") WRITE memory into
 * it and READ it back into memory, every byte checked against the file itself; on the machine's disk (O_DIRECT) and
 * on tmpfs. A file truncated under its region (read locally and by a peer) and a full tmpfs fail their requests with
 * STORAGE_TRUNCATED and STORAGE_NO_SPACE while another client's transfers complete and the daemon keeps serving.
 */
@Tag("integration")
@Timeout(180)
@SuppressWarnings("unchecked")
class StorageSegmentTest
{
    private static final int SIZE = 4 << 20;
    private static final int LENGTH = 3 << 20;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Path peerDirectory = SystemTests.newDaemonDirectory();
    private Path files;
    private Path smallTmpfs;
    private XferDaemon daemon;
    private XferDaemon peer;
    private XferClient owner;
    private XferClient user;
    private XferClient remote;
    private SharedBuffer userBuffer;
    private SharedBuffer remoteBuffer;

    @BeforeEach
    void launch() throws IOException
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
        files = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "xferd-storage-files");
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).sliceSize(256 * 1024));
        peer = XferDaemon.launch(SystemTests.daemonContext(peerDirectory).sliceSize(256 * 1024));
        owner = XferClient.connect(SystemTests.clientContext(directory, "owner"));
        user = XferClient.connect(SystemTests.clientContext(directory, "user"));
        userBuffer = user.allocateMemory(SIZE);
        user.registerMemory(userBuffer, "cpu:0");
        remote = XferClient.connect(SystemTests.clientContext(peerDirectory, "remote"));
        remoteBuffer = remote.allocateMemory(SIZE);
        remote.registerMemory(remoteBuffer, "cpu:0");
    }

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : new AutoCloseable[]{owner, user, remote, daemon, peer})
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
        if (smallTmpfs != null)
        {
            run("umount", smallTmpfs.toString());
        }
        SystemTests.deleteRecursively(directory);
        SystemTests.deleteRecursively(peerDirectory);
        if (files != null)
        {
            SystemTests.deleteRecursively(files);
        }
    }

    @Test
    void shouldMoveMemoryToAFileOnDiskAndBackLocallyAndFromAnotherDaemon() throws IOException
    {
        final long address = roundTrips(sized(files.resolve("disk.bin"), SIZE));
        assertThat(SystemTests.counter(daemon, SystemCounter.STORAGE_BYTES_WRITTEN)).isGreaterThanOrEqualTo(2L * LENGTH);
        assertThat(SystemTests.counter(daemon, SystemCounter.STORAGE_ERRORS)).isZero();

        // what `xferd status` shows: the storage totals, and the region with its label and how it is written
        final java.util.Map<String, Object> status = io.xferd.daemon.tools.status.StatusSnapshot.read(directory);
        assertThat((java.util.Map<String, Object>)status.get("storage"))
            .containsEntry("errors", 0L).containsKey("bytes_written");
        assertThat((Long)((java.util.Map<String, Object>)status.get("storage")).get("syncs"))
            .as("the region is registered sync: its writes were followed by fdatasyncs").isPositive();
        assertThat(status.get("clients").toString()).contains("location=file").contains("storage=file offset 0");
        assertThat(storageRegions(status)).as("the region with its own bytes and errors").containsExactly(Map.of(
            "segment", "owner", "address", "0x" + Long.toHexString(address), "kind", "file",
            "bytes_read", 2L * LENGTH, "bytes_written", 2L * LENGTH, "errors", 0L));
        assertThat(status.get("nics").toString()).contains("{name=file, kind=storage, bytes=" + 4L * LENGTH +
            ", errors=0}");

        // metrics: the region's counters, and the journal's records of the local requests under the NIC label file
        final String region = "address=\"0x" + Long.toHexString(address) + "\",kind=\"file\"";
        final String journalled = "xferd_transfers_total{nic=\"file\",op=\"read\",peer=\"local\",status=\"ok\"} 1.0";
        final String[] scraped = new String[1];
        SystemTests.awaitCondition(() -> (scraped[0] = scrape(daemon)).contains(journalled), WAIT,
            () -> "metrics with " + journalled + ":\n" + scraped[0]);
        assertThat(scraped[0]).contains(
            "xferd_storage_region_bytes_total{" + region + ",op=\"read\",segment=\"owner\"} " + 2.0 * LENGTH,
            "xferd_storage_region_bytes_total{" + region + ",op=\"write\",segment=\"owner\"} " + 2.0 * LENGTH,
            "xferd_storage_region_errors_total{" + region + ",segment=\"owner\"} 0.0",
            "xferd_transfers_total{nic=\"file\",op=\"write\",peer=\"local\",status=\"ok\"} 1.0");
        assertThat(scraped[0]).doesNotContain("nic=\"shm\",op=\"read\",peer=\"local\"");

        // unregistered: the region's counters are freed with it
        owner.unregisterMemory(address);
        SystemTests.awaitCondition(() -> storageRegions(io.xferd.daemon.tools.status.StatusSnapshot.read(directory))
            .isEmpty(), WAIT, () -> "the region's counters freed");
    }

    @SuppressWarnings("unchecked")
    private static java.util.List<Map<String, Object>> storageRegions(final Map<String, Object> status)
    {
        return (java.util.List<Map<String, Object>>)((Map<String, Object>)status.get("storage")).get("regions");
    }

    private static String scrape(final XferDaemon daemon)
    {
        try (HttpClient http = HttpClient.newHttpClient())
        {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + daemon.metricsPort() +
                "/metrics")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return ex.toString();
        }
    }

    @Test
    void shouldMoveMemoryToAFileOnTmpfsAndBackLocallyAndFromAnotherDaemon() throws IOException
    {
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")), "no /dev/shm");
        final Path file = Files.createTempFile(Path.of("/dev/shm"), "xferd-storage-test", ".bin");
        try
        {
            roundTrips(sized(file, SIZE));
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldFailReadsOfAFileTruncatedUnderItsRegionAndKeepServingOthers() throws IOException
    {
        final Path file = sized(files.resolve("truncated.bin"), SIZE);
        final long address = owner.registerFile(file, 0, SIZE, 0);
        final long segment = user.openSegment("owner");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(SIZE / 2);
        }

        assertThatThrownBy(() -> user.transferSyncRead(segment, userBuffer.address(), address, 64 * 1024))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_TRUNCATED));
        assertThatThrownBy(() -> user.transferSyncWrite(segment, userBuffer.address(), address + SIZE - 4096, 4096))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_TRUNCATED));
        // a peer's READ: the slices' reads fail in the storage stage and their answers carry the status
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/owner");
        assertThatThrownBy(() -> remote.transferSyncRead(remoteSegment, remoteBuffer.address(), address, LENGTH))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_TRUNCATED));
        assertThat(Files.size(file)).as("not regrown").isEqualTo(SIZE / 2);

        assertOthersServed();
    }

    @Test
    void shouldFailWritesToAFullTmpfsWithNoSpaceAndKeepServingOthers() throws IOException
    {
        smallTmpfs = Files.createDirectory(files.resolve("small-tmpfs"));
        if (run("mount", "-t", "tmpfs", "-o", "size=1m", "xferd-test", smallTmpfs.toString()) != 0)
        {
            smallTmpfs = null;
            assumeTrue(false, "cannot mount a tmpfs here (not root?)");
        }
        // sparse: the file is 4 MiB long but the file system holds 1 MiB
        final Path file = sized(smallTmpfs.resolve("full.bin"), SIZE);
        final long address = owner.registerFile(file, 0, SIZE, 0);
        final long segment = user.openSegment("owner");
        SystemTests.fill(userBuffer.segment(), 5);

        assertThatThrownBy(() -> user.transferSyncWrite(segment, userBuffer.address(), address, SIZE))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_NO_SPACE));
        assertThat(SystemTests.counter(daemon, SystemCounter.STORAGE_ERRORS)).isPositive();
        // a peer's WRITE lands in the file's pages straight from the socket: the holes are allocated first, so a
        // full tmpfs fails it typed and the connection goes on
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/owner");
        SystemTests.fill(remoteBuffer.segment(), 6);
        assertThatThrownBy(() -> remote.transferSyncWrite(remoteSegment, remoteBuffer.address(), address, LENGTH))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_NO_SPACE));

        assertOthersServed();
    }

    @Test
    void shouldRefuseARangeOutsideTheFileAtRegistration() throws IOException
    {
        final Path file = sized(files.resolve("short.bin"), 8192);
        assertThatThrownBy(() -> owner.registerFile(file, 4096, 8192, 0))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.INVALID_ARGUMENT));
        assertThatThrownBy(() -> owner.registerFile(files.resolve("missing.bin"), 0, 8192, 0))
            .as("the client opens the file itself: a missing file never reaches the daemon")
            .hasMessageContaining("ENOENT");
        // still a working client
        assertThat(owner.registerFile(file, 0, 8192, ControlMessages.REGISTER_FILE_SYNC)).isPositive();
    }

    /**
     * @return the file region's address.
     */
    private long roundTrips(final Path file) throws IOException
    {
        final long address = owner.registerFile(file, 0, SIZE, ControlMessages.REGISTER_FILE_SYNC);
        final long segment = user.openSegment("owner");

        // local: memory -> file at an unaligned offset, then file -> memory
        SystemTests.fill(userBuffer.segment(), 1);
        user.transferSyncWrite(segment, userBuffer.address() + 3, address + 1000, LENGTH);
        assertFileHolds(file, 1000, SystemTests.randomBytes(1, SIZE), 3, LENGTH);
        userBuffer.segment().fill((byte)0);
        user.transferSyncRead(segment, userBuffer.address(), address + 1000, LENGTH);
        assertThat(SystemTests.firstMismatch(userBuffer.segment(), 0, SystemTests.randomBytes(1, SIZE), 3, LENGTH))
            .isEqualTo(-1);

        // another daemon, through the TCP transport: the target side writes and reads the file
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/owner");
        SystemTests.fill(remoteBuffer.segment(), 2);
        remote.transferSyncWrite(remoteSegment, remoteBuffer.address(), address, LENGTH);
        assertFileHolds(file, 0, SystemTests.randomBytes(2, SIZE), 0, LENGTH);
        remoteBuffer.segment().fill((byte)0);
        remote.transferSyncRead(remoteSegment, remoteBuffer.address() + 11, address + 4096, LENGTH);
        assertThat(SystemTests.firstMismatch(remoteBuffer.segment(), 11, SystemTests.randomBytes(2, SIZE), 4096,
            LENGTH - 4096)).isEqualTo(-1);
        return address;
    }

    /**
     * Another client's memory-to-memory transfer completes, and the storage path still works.
     */
    private void assertOthersServed()
    {
        final long segment = remote.openSegment(daemon.rpcAddress() + "/user");
        SystemTests.fill(remoteBuffer.segment(), 9);
        remote.transferSyncWrite(segment, remoteBuffer.address(), userBuffer.address(), 1 << 20);
        assertThat(SystemTests.firstMismatch(userBuffer.segment(), 0, SystemTests.randomBytes(9, SIZE), 0, 1 << 20))
            .isEqualTo(-1);
    }

    private static void assertFileHolds(
        final Path file, final long fileOffset, final byte[] expected, final int expectedOffset, final int length)
        throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        assertThat(Arrays.mismatch(
            Arrays.copyOfRange(bytes, (int)fileOffset, (int)fileOffset + length),
            Arrays.copyOfRange(expected, expectedOffset, expectedOffset + length))).isEqualTo(-1);
    }

    private static Path sized(final Path file, final long size) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(size);
        }
        return file;
    }

    private static int run(final String... command)
    {
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            if (!process.waitFor(20, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        }
        catch (final IOException | InterruptedException ex)
        {
            return -1;
        }
    }
}
