package io.xferd.daemon;

import io.xferd.daemon.config.MetadataAccess;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.daemon.metadata.MetadataException;
import io.xferd.daemon.metadata.MetadataStore;
import io.xferd.daemon.metadata.MetadataStores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The stores' claims on real servers: create-if-absent and compare-and-replace are atomic in etcd (a transaction)
 * and redis ({@code SET NX}, a Lua compare), so of many claimants racing for one name exactly one wins; and a
 * redis with {@code requirepass} serves a store given the password and refuses one without it.
 */
@Tag("integration")
@Timeout(60)
class MetadataStoreClaimsTest
{
    private static final int CLAIMANTS = 8;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private Path etcdData;

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : closeables.reversed())
        {
            closeable.close();
        }
        SystemTests.deleteRecursively(etcdData);
    }

    private MetadataServers start(final String backend) throws Exception
    {
        final MetadataServers server;
        if ("etcd".equals(backend))
        {
            etcdData = Files.createTempDirectory("xferd-etcd");
            server = MetadataServers.etcd(etcdData, MetadataServers.freePort(), MetadataServers.freePort());
        }
        else
        {
            server = MetadataServers.redis(MetadataServers.freePort());
        }
        closeables.add(server);
        return server.start();
    }

    private MetadataStore open(final String url, final MetadataAccess access)
    {
        final MetadataStore store = MetadataStores.open(MetadataServer.parse(url), 10_000, 3_000, null, access);
        closeables.add(store);
        return store;
    }

    @ParameterizedTest
    @ValueSource(strings = {"etcd", "redis"})
    void shouldLetExactlyOneOfManyRacingClaimantsCreateAName(final String backend) throws Exception
    {
        final MetadataServers server = start(backend);
        final List<MetadataStore> stores = new ArrayList<>();
        for (int i = 0; i < CLAIMANTS; i++)
        {
            stores.add(open(server.url(), MetadataAccess.NONE));
        }
        final CountDownLatch go = new CountDownLatch(1);
        final List<Future<Boolean>> claims = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(CLAIMANTS))
        {
            for (int i = 0; i < CLAIMANTS; i++)
            {
                final MetadataStore store = stores.get(i);
                final String value = "claimant-" + i;
                claims.add(pool.submit(() ->
                {
                    go.await();
                    return store.putIfAbsent("/xferd/test/segments/decode-0", value);
                }));
            }
            go.countDown();
            int winners = 0;
            for (final Future<Boolean> claim : claims)
            {
                winners += claim.get() ? 1 : 0;
            }
            assertThat(winners).isEqualTo(1);
        }
        final String holder = stores.getFirst().get("/xferd/test/segments/decode-0");
        assertThat(holder).startsWith("claimant-");
        assertThat(stores.getFirst().putIfAbsent("/xferd/test/segments/decode-0", "late")).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"etcd", "redis"})
    void shouldReplaceOnlyTheValueThatWasJudged(final String backend) throws Exception
    {
        final MetadataServers server = start(backend);
        final MetadataStore first = open(server.url(), MetadataAccess.NONE);
        final MetadataStore second = open(server.url(), MetadataAccess.NONE);
        assertThat(first.putIfAbsent("/k", "unsigned")).isTrue();
        second.put("/k", "claimed-in-between");

        assertThat(first.replace("/k", "unsigned", "mine")).isFalse();
        assertThat(first.get("/k")).isEqualTo("claimed-in-between");
        assertThat(first.replace("/k", "claimed-in-between", "mine")).isTrue();
        assertThat(second.get("/k")).isEqualTo("mine");
    }

    @Test
    void shouldReachARedisThatRequiresAPasswordWithItAndBeRefusedWithout() throws Exception
    {
        final String password = "pw-" + Long.toHexString(System.nanoTime());
        final MetadataServers server = MetadataServers.redisWithPassword(MetadataServers.freePort(), password);
        closeables.add(server);
        server.start();
        final Path passwordFile = Files.createTempFile("xferd-redis", ".password");
        closeables.add(() -> Files.deleteIfExists(passwordFile));
        Files.writeString(passwordFile, password + "\n");

        final MetadataStore withPassword = open(server.url(), MetadataAccess.NONE.passwordFile(passwordFile));
        withPassword.put("/xferd/test/segments/a", "descriptor");
        assertThat(withPassword.get("/xferd/test/segments/a")).isEqualTo("descriptor");

        final MetadataStore without = open(server.url(), MetadataAccess.NONE);
        assertThatThrownBy(() -> without.get("/xferd/test/segments/a"))
            .isInstanceOf(MetadataException.class).hasMessageContaining("NOAUTH");
        final Path wrongFile = Files.createTempFile("xferd-redis", ".password");
        closeables.add(() -> Files.deleteIfExists(wrongFile));
        Files.writeString(wrongFile, "wrong");
        final MetadataStore wrong = open(server.url(), MetadataAccess.NONE.passwordFile(wrongFile));
        assertThatThrownBy(() -> wrong.get("/xferd/test/segments/a")).isInstanceOf(MetadataException.class);
    }
}
