package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferFailedException;
import io.xferd.client.XferClient;
import io.xferd.daemon.config.ConfigException;
import io.xferd.daemon.config.StorageSegmentConfig;
import io.xferd.ipc.FileRegistration;
import io.xferd.ipc.TransferStatus;
import io.xferd.nativebindings.libc.IoUring;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code storage_segments}: a file the daemon opens from its own configuration and serves as a segment of its own.
 * A client of the daemon and a client of a second daemon (over a loopback peer connection) open it by name, WRITE
 * into it and READ it back, every byte checked against the file at the configured offset; a file truncated under it
 * fails requests with STORAGE_TRUNCATED while others are served; a missing file or one shorter than its range keeps
 * the daemon from starting with a config error naming the entry.
 */
@Tag("integration")
@Timeout(180)
class ConfiguredStorageSegmentTest
{
    private static final int FILE_SIZE = 6 << 20;
    private static final long OFFSET = 1 << 20;
    private static final long SIZE = 4 << 20;
    private static final int LENGTH = 1 << 20;
    private static final long BASE = FileRegistration.FILE_ADDRESS_BASE;

    private final Path directory = SystemTests.newDaemonDirectory();
    private final Path peerDirectory = SystemTests.newDaemonDirectory();
    private Path files;
    private XferDaemon daemon;
    private XferDaemon peer;
    private XferClient local;
    private XferClient remote;

    @BeforeEach
    void files() throws IOException
    {
        assumeTrue(IoUring.isAvailable(), "io_uring not available here");
        files = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "xferd-configured-storage");
    }

    @AfterEach
    void tearDown()
    {
        for (final AutoCloseable closeable : new AutoCloseable[]{local, remote, daemon, peer})
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
        SystemTests.deleteRecursively(files);
    }

    @Test
    void shouldServeAConfiguredFileToLocalClientsAndPeersEveryByteVerified() throws IOException
    {
        final Path file = sized(files.resolve("spill.bin"), FILE_SIZE);
        launch(new StorageSegmentConfig("spill", file, OFFSET, SIZE, true, true, new int[0], new int[0]));

        final SharedBuffer buffer = local.allocateMemory(2L * LENGTH);
        local.registerMemory(buffer, "cpu:0");
        final long segment = local.openSegment("spill");
        SystemTests.fill(buffer.segment(), 3);
        local.transferSyncWrite(segment, buffer.address(), BASE + 8192, LENGTH);
        assertThat(Arrays.copyOfRange(Files.readAllBytes(file), (int)OFFSET + 8192, (int)OFFSET + 8192 + LENGTH))
            .isEqualTo(Arrays.copyOfRange(SystemTests.randomBytes(3, 2 * LENGTH), 0, LENGTH));
        buffer.segment().fill((byte)0);
        local.transferSyncRead(segment, buffer.address() + LENGTH, BASE + 8192, LENGTH);
        assertThat(SystemTests.firstMismatch(buffer.segment(), LENGTH, SystemTests.randomBytes(3, 2 * LENGTH), 0,
            LENGTH)).isEqualTo(-1);

        final SharedBuffer remoteBuffer = remote.allocateMemory(LENGTH);
        remote.registerMemory(remoteBuffer, "cpu:0");
        final long remoteSegment = remote.openSegment(daemon.rpcAddress() + "/spill");
        remote.transferSyncRead(remoteSegment, remoteBuffer.address(), BASE + 8192, LENGTH);
        assertThat(SystemTests.firstMismatch(remoteBuffer.segment(), 0, SystemTests.randomBytes(3, 2 * LENGTH), 0,
            LENGTH)).isEqualTo(-1);
        assertThatThrownBy(() -> local.transferSyncRead(segment, buffer.address(), BASE + SIZE - 4096, 8192))
            .as("past the configured size").isInstanceOf(TransferFailedException.class);

        // xferd status lists the configured segment's region with its own bytes and errors
        final java.util.Map<String, Object> status = io.xferd.daemon.tools.status.StatusSnapshot.read(directory);
        @SuppressWarnings("unchecked")
        final java.util.Map<String, Object> storage = (java.util.Map<String, Object>)status.get("storage");
        assertThat(storage.get("regions")).asList().containsExactly(java.util.Map.of("segment", "spill",
            "address", "0x" + Long.toHexString(BASE), "kind", "file", "bytes_read", 2L * LENGTH,
            "bytes_written", (long)LENGTH, "errors", 0L));
    }

    @Test
    void shouldFailRequestsToAFileTruncatedUnderTheSegmentAndKeepServingOthers() throws IOException
    {
        final Path file = sized(files.resolve("shrinks.bin"), FILE_SIZE);
        launch(new StorageSegmentConfig("shrinks", file, OFFSET, SIZE, true, false, new int[0], new int[0]));
        final SharedBuffer buffer = local.allocateMemory(LENGTH);
        local.registerMemory(buffer, "cpu:0");
        final long segment = local.openSegment("shrinks");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(OFFSET + SIZE / 2);
        }

        assertThatThrownBy(() -> local.transferSyncRead(segment, buffer.address(), BASE, 4096))
            .isInstanceOfSatisfying(TransferFailedException.class,
                ex -> assertThat(ex.status()).isEqualTo(TransferStatus.STORAGE_TRUNCATED));
        assertThat(Files.size(file)).as("not regrown").isEqualTo(OFFSET + SIZE / 2);

        // another client's memory, through the same daemon, still moves
        final SharedBuffer remoteBuffer = remote.allocateMemory(LENGTH);
        remote.registerMemory(remoteBuffer, "cpu:0");
        SystemTests.fill(remoteBuffer.segment(), 4);
        final long toLocal = remote.openSegment(daemon.rpcAddress() + "/" + "local");
        remote.transferSyncWrite(toLocal, remoteBuffer.address(), buffer.address(), LENGTH);
        assertThat(SystemTests.firstMismatch(buffer.segment(), 0, SystemTests.randomBytes(4, LENGTH), 0, LENGTH))
            .isEqualTo(-1);
    }

    @Test
    void shouldRefuseToStartWithAMissingFileOrARangePastItsEnd() throws IOException
    {
        assertThatThrownBy(() -> XferDaemon.launch(SystemTests.daemonContext(directory).storageSegments(List.of(
            new StorageSegmentConfig("gone", files.resolve("missing.bin"), 0, 4096, true, false, new int[0],
                new int[0])))))
            .isInstanceOf(ConfigException.class).hasMessageContaining("storage_segments.gone")
            .hasMessageContaining("ENOENT");
        final Path small = sized(files.resolve("small.bin"), 8192);
        assertThatThrownBy(() -> XferDaemon.launch(SystemTests.daemonContext(directory).storageSegments(List.of(
            new StorageSegmentConfig("small", small, 4096, 8192, true, false, new int[0], new int[0])))))
            .isInstanceOf(ConfigException.class).hasMessageContaining("storage_segments.small")
            .hasMessageContaining("out of range");
        // the directory was released: a daemon with a good configuration starts there
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).storageSegments(List.of(
            new StorageSegmentConfig("small", small, 0, 8192, true, false, new int[0], new int[0]))));
    }

    private void launch(final StorageSegmentConfig config)
    {
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory).storageSegments(List.of(config)));
        peer = XferDaemon.launch(SystemTests.daemonContext(peerDirectory));
        local = XferClient.connect(SystemTests.clientContext(directory, "local"));
        remote = XferClient.connect(SystemTests.clientContext(peerDirectory, "remote"));
    }

    private static Path sized(final Path file, final long size) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(size);
        }
        return file;
    }
}
