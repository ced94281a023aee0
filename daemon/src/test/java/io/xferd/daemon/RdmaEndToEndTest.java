package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.config.DaemonContext;
import io.xferd.ipc.SystemCounter;
import io.xferd.nativebindings.verbs.Verbs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End to end over real RDMA: two daemons with {@code protocol: rdma} on this host's RDMA devices (real NICs or
 * soft-RoCE: {@code rdma link add rxe0 type rxe netdev eth0}), a client of one writing to and reading from a
 * client of the other, every byte verified. Skipped, saying why, where no device exists (the machine this was
 * written on has none, so this test has not run there). {@code XFERD_RDMA_DEVICES=mlx5_0,mlx5_1} chooses the
 * devices; {@code XFERD_RDMA_GID_INDEX} the GID index (default auto).
 */
@Tag("integration")
@Timeout(120)
class RdmaEndToEndTest
{
    private static final Path SYSFS = Path.of("/sys/class/infiniband");
    private static final int SIZE = 16 * 1024 * 1024;

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private XferDaemon daemonA;
    private XferDaemon daemonB;

    @BeforeEach
    void requireAnRdmaDevice() throws Exception
    {
        Assumptions.assumeTrue(Files.isDirectory(SYSFS) && hasEntries(SYSFS),
            "no RDMA device in " + SYSFS + ": the end-to-end RDMA test needs a NIC or soft-RoCE (rxe)");
        Assumptions.assumeTrue(Verbs.availability().isAvailable(),
            "libibverbs cannot use this host's devices: " + Verbs.availability().reason());
    }

    @AfterEach
    void tearDown()
    {
        if (daemonA != null)
        {
            daemonA.close();
        }
        if (daemonB != null)
        {
            daemonB.close();
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
    }

    @Test
    void shouldWriteAndReadAnotherDaemonsClientMemoryOverRdmaEveryByteVerified()
    {
        final String devices = System.getenv().getOrDefault("XFERD_RDMA_DEVICES", "");
        // none listed: the daemons serve with every usable device (one without an active port is skipped)
        final List<String> names = devices.isBlank() ? List.of() : List.of(devices.split(","));
        final int gidIndex = Integer.parseInt(System.getenv().getOrDefault("XFERD_RDMA_GID_INDEX",
            String.valueOf(DaemonContext.GID_INDEX_AUTO)));
        daemonA = XferDaemon.launch(SystemTests.daemonContext(dirA).protocol("rdma").deviceNames(names)
            .gidIndex(gidIndex).sliceSize(256 * 1024));
        daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB).protocol("rdma").deviceNames(names)
            .gidIndex(gidIndex).sliceSize(256 * 1024));
        assertThat(daemonA.transport().name()).isEqualTo("rdma");

        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode"));
            XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer target = decode.allocateMemory(SIZE);
            decode.registerMemory(target, "cpu:0");
            final SharedBuffer source = prefill.allocateMemory(SIZE);
            SystemTests.fill(source.segment(), 42);
            prefill.registerMemory(source, "cpu:0");
            final long segment = prefill.openSegment(daemonB.rpcAddress() + "/decode");

            final long batch = prefill.allocateBatch(16);
            for (int i = 0; i < 16; i++)
            {
                prefill.submitTransfer(batch, TransferRequest.write(source.address() + i * (1L << 20), segment,
                    target.address() + i * (1L << 20), 1 << 20));
            }
            assertThat(prefill.awaitBatch(batch, 60_000)).isTrue();
            prefill.freeBatch(batch);
            assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(42, SIZE), 0, SIZE))
                .isEqualTo(-1);

            final SharedBuffer readBack = prefill.allocateMemory(SIZE);
            prefill.registerMemory(readBack, "cpu:0");
            prefill.transferSyncRead(segment, readBack.address(), target.address(), SIZE);
            assertThat(SystemTests.firstMismatch(readBack.segment(), 0, SystemTests.randomBytes(42, SIZE), 0, SIZE))
                .isEqualTo(-1);
            assertThat(SystemTests.counter(daemonA, SystemCounter.REMOTE_BYTES_SENT)).isEqualTo(SIZE);
            assertThat(SystemTests.counter(daemonA, SystemCounter.REMOTE_BYTES_RECEIVED)).isEqualTo(SIZE);
        }
    }

    private static boolean hasEntries(final Path directory) throws Exception
    {
        try (var entries = Files.list(directory))
        {
            return entries.findAny().isPresent();
        }
    }
}
