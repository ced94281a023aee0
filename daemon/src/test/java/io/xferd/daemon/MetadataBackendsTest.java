package io.xferd.daemon;

import io.xferd.client.ControlException;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.daemon.metadata.MetadataStore;
import io.xferd.daemon.tools.metadata.EmbeddedMetadataServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two daemons that know nothing of each other but the metadata store (a real etcd, a real redis, the embedded
 * http server): a client of one finds the other's segment by its plain name, writes and reads it, every byte
 * verified; the segment leaves the store when its client disconnects, the other daemon drops it from its cache
 * (etcd's watch, redis keyspace notifications, http polling), and finds the client again once it comes back.
 */
@Tag("integration")
@Timeout(60)
class MetadataBackendsTest
{
    private static final int SIZE = 1 << 20;

    private final Path dirA = SystemTests.newDaemonDirectory();
    private final Path dirB = SystemTests.newDaemonDirectory();
    private Path etcdData;
    private MetadataServers server;
    private EmbeddedMetadataServer httpServer;
    private MetadataStore store;
    private XferDaemon daemonA;
    private XferDaemon daemonB;

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : new AutoCloseable[] {daemonA, daemonB, store, server, httpServer})
        {
            if (closeable != null)
            {
                closeable.close();
            }
        }
        SystemTests.deleteRecursively(dirA);
        SystemTests.deleteRecursively(dirB);
        SystemTests.deleteRecursively(etcdData);
    }

    private String startServer(final String backend) throws Exception
    {
        switch (backend)
        {
            case "etcd" ->
            {
                etcdData = Files.createTempDirectory("xferd-etcd");
                server = MetadataServers.etcd(etcdData, MetadataServers.freePort(), MetadataServers.freePort()).start();
                store = server.client();
                return server.url();
            }
            case "redis" ->
            {
                server = MetadataServers.redis(MetadataServers.freePort()).start();
                store = server.client();
                return server.url();
            }
            default ->
            {
                httpServer = new EmbeddedMetadataServer(new InetSocketAddress("127.0.0.1", 0), "/metadata", 0).start();
                store = io.xferd.daemon.metadata.MetadataStores.open(
                    io.xferd.daemon.config.MetadataServer.parse(httpServer.url()), 10_000, 3_000);
                return httpServer.url();
            }
        }
    }

    private XferDaemon launch(final Path dir, final String url, final String cluster)
    {
        return XferDaemon.launch(SystemTests.daemonContext(dir).metadataServer(url).clusterId(cluster)
            .metadataTtlMs(2000).sliceSize(256 * 1024));
    }

    private void awaitKey(final String key, final Predicate<String> condition, final String what)
    {
        SystemTests.awaitCondition(() -> condition.test(store.get(key)), SystemTests.WAIT,
            () -> what + ": " + key + " = " + store.get(key));
    }

    @ParameterizedTest
    @ValueSource(strings = {"etcd", "redis", "http"})
    void shouldFindAPeersSegmentByNameOnlyAndTransferVerifiedData(final String backend) throws Exception
    {
        final String url = startServer(backend);
        final String cluster = "t" + backend + System.nanoTime();
        final String key = "xferd/" + cluster + "/segments/decode";
        daemonA = launch(dirA, url, cluster);
        daemonB = launch(dirB, url, cluster);

        try (XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill")))
        {
            final SharedBuffer source = prefill.allocateMemory(SIZE);
            SystemTests.fill(source.segment(), 42);
            prefill.registerMemory(source, "cpu:0");
            final SharedBuffer readBack = prefill.allocateMemory(SIZE);
            prefill.registerMemory(readBack, "cpu:0");

            try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
            {
                final SharedBuffer target = decode.allocateMemory(SIZE);
                decode.registerMemory(target, "cpu:0");
                awaitKey(key, json -> json != null && json.contains("\"rpc_address\":\"" + daemonB.rpcAddress()) &&
                    json.contains("\"length\":" + SIZE), "decode's descriptor published with its region");

                final long segment = prefill.openSegment("decode");
                final long batch = prefill.allocateBatch(4);
                for (int i = 0; i < 4; i++)
                {
                    prefill.submitTransfer(batch, TransferRequest.write(source.address() + i * (SIZE / 4L), segment,
                        target.address() + i * (SIZE / 4L), SIZE / 4));
                }
                assertThat(prefill.awaitBatch(batch, 20_000)).isTrue();
                prefill.freeBatch(batch);
                assertThat(SystemTests.firstMismatch(target.segment(), 0, SystemTests.randomBytes(42, SIZE), 0, SIZE))
                    .isEqualTo(-1);
                prefill.transferSyncRead(segment, readBack.address(), target.address(), SIZE);
                assertThat(SystemTests.firstMismatch(readBack.segment(), 0, SystemTests.randomBytes(42, SIZE), 0,
                    SIZE)).isEqualTo(-1);
                assertThat(daemonA.metadata().isCached("decode")).isTrue();
            }

            // gone from the store, and the watch (or the poll) drops it from daemon A's cache
            awaitKey(key, json -> json == null, "decode's key deleted on disconnect");
            SystemTests.awaitCondition(() -> !daemonA.metadata().isCached("decode"), SystemTests.WAIT,
                () -> "daemon A still caches decode");

            // back, with other memory: found again by name, the new handle reads the new data
            try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
            {
                final SharedBuffer target = decode.allocateMemory(SIZE / 2);
                SystemTests.fill(target.segment(), 7);
                decode.registerMemory(target, "cpu:0");
                awaitKey(key, json -> json != null && json.contains("\"length\":" + SIZE / 2),
                    "decode's new descriptor published");
                final long segment = prefill.openSegment("decode");
                prefill.transferSyncRead(segment, readBack.address(), target.address(), SIZE / 2);
                assertThat(SystemTests.firstMismatch(readBack.segment(), 0, SystemTests.randomBytes(7, SIZE / 2), 0,
                    SIZE / 2)).isEqualTo(-1);
            }
        }
    }

    @Test
    void shouldRefuseDescriptorsInTheStoreThatAreUnsignedAlteredOrNameAnotherSegment() throws Exception
    {
        final String url = startServer("http");
        final String cluster = "forged" + System.nanoTime();
        final String prefix = "xferd/" + cluster + "/segments/";
        daemonA = launch(dirA, url, cluster);
        daemonB = launch(dirB, url, cluster);
        try (XferClient prefill = XferClient.connect(SystemTests.clientContext(dirA, "prefill"));
            XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
        {
            decode.registerMemory(decode.allocateMemory(4096), "cpu:0");
            awaitKey(prefix + "decode", json -> json != null && json.contains("\"signature\":"),
                "decode's descriptor published, signed");
            final String signed = store.get(prefix + "decode");
            final io.xferd.daemon.transport.SegmentDescriptor real = io.xferd.daemon.transport.SegmentDescriptor.fromJson(signed);

            // whoever can write to the store copies decode's signed descriptor under another name
            store.put(prefix + "copied", signed);
            assertThatThrownBy(() -> prefill.openSegment("copied"))
                .isInstanceOf(ControlException.class).hasMessageContaining("answered a request for segment copied");
            // writes one of its own, unsigned
            store.put(prefix + "unsigned", renamed(real, "unsigned").withSignature(null).toJson());
            assertThatThrownBy(() -> prefill.openSegment("unsigned"))
                .isInstanceOf(ControlException.class).hasMessageContaining("not signed with the cluster key");
            // or alters a signed one
            store.put(prefix + "altered", renamed(real, "altered").toJson());
            assertThatThrownBy(() -> prefill.openSegment("altered"))
                .isInstanceOf(ControlException.class).hasMessageContaining("wrong signature");

            // the real one still opens
            assertThat(prefill.openSegment("decode")).isNotZero();
        }
    }

    @Test
    void shouldPublishToAnHttpStoreThatRequiresABearerToken() throws Exception
    {
        final String token = "metadata-bearer-token-0123456789abcdef";
        httpServer = new EmbeddedMetadataServer(new InetSocketAddress("127.0.0.1", 0), "/metadata", 0, token).start();
        store = io.xferd.daemon.metadata.MetadataStores.open(
            io.xferd.daemon.config.MetadataServer.parse(httpServer.url()), 10_000, 3_000, token);
        final String cluster = "bearer" + System.nanoTime();
        final Path tokenFile = Files.writeString(dirB.resolve("metadata.token"), token + "\n");
        daemonB = XferDaemon.launch(SystemTests.daemonContext(dirB).metadataServer(httpServer.url())
            .clusterId(cluster).metadataTtlMs(2000).metadataTokenFile(tokenFile));
        try (XferClient decode = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
        {
            decode.registerMemory(decode.allocateMemory(4096), "cpu:0");
            awaitKey("xferd/" + cluster + "/segments/decode", json -> json != null, "decode published");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "redis", "etcd"})
    void shouldLeaveANameWithTheDaemonThatPublishedItUntilItsKeyIsGone(final String backend) throws Exception
    {
        final String url = startServer(backend);
        final String cluster = "owned" + System.nanoTime();
        final String key = "xferd/" + cluster + "/segments/decode";
        daemonA = launch(dirA, url, cluster);
        daemonB = launch(dirB, url, cluster);
        try (XferClient first = XferClient.connect(SystemTests.clientContext(dirB, "decode")))
        {
            first.registerMemory(first.allocateMemory(4096), "cpu:0");
            awaitKey(key, json -> json != null && json.contains(daemonB.rpcAddress()), "B publishes decode");

            // a client of the same name on daemon A: refused (logged), B keeps the name
            try (XferClient second = XferClient.connect(SystemTests.clientContext(dirA, "decode")))
            {
                second.registerMemory(second.allocateMemory(8192), "cpu:0");
                // A tries again at each renewal (TTL / 3): through two renewals the key is B's at every look (a
                // single look at the end can miss a takeover that B's own renewal has just undone)
                final long lookUntil = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                    2 * 2000 / 3 + 500);
                int looks = 0;
                while (looks == 0 || System.nanoTime() < lookUntil)
                {
                    assertThat(store.get(key)).as("look %d", looks).contains(daemonB.rpcAddress());
                    looks++;
                    Thread.sleep(50);
                }

                // B's client goes: its key is deleted, and A takes the name at its next renewal
                first.close();
                awaitKey(key, json -> json != null && json.contains(daemonA.rpcAddress()), "A publishes decode");
            }
        }
    }

    private static io.xferd.daemon.transport.SegmentDescriptor renamed(
        final io.xferd.daemon.transport.SegmentDescriptor descriptor, final String segment)
    {
        return new io.xferd.daemon.transport.SegmentDescriptor(descriptor.version(),
            descriptor.rpcAddress() + "/" + segment, descriptor.protocol(), descriptor.rpcAddress(), descriptor.epoch(),
            descriptor.handle(), descriptor.devices(), descriptor.nics(), descriptor.buffers(),
            descriptor.priorityMatrix(), descriptor.signature());
    }
}
