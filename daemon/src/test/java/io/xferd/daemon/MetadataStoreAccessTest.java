package io.xferd.daemon;

import io.xferd.daemon.config.MetadataAccess;
import io.xferd.daemon.config.MetadataServer;
import io.xferd.daemon.metadata.MetadataException;
import io.xferd.daemon.metadata.MetadataStore;
import io.xferd.daemon.metadata.MetadataStores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Credentials and TLS of the etcd and redis stores against real servers on loopback free ports: an etcd with
 * authentication on and a user confined to {@code /xferd/}, an etcd serving TLS (and one requiring client
 * certificates), a redis whose only user is an ACL user confined to {@code /xferd/*}, a redis serving TLS (and
 * one requiring client certificates). The right settings reach the store as that identity; a missing or wrong
 * password, an untrusted server certificate, a missing client certificate or plain text to a TLS port each fail
 * the operation with a {@link MetadataException} within a bound, never a hang. Certificates are made by
 * {@link TestCertificates} in the test's directory.
 */
@Tag("integration")
@Timeout(120)
class MetadataStoreAccessTest
{
    /**
     * How long one operation of a store that is to be served may wait: a JVM's first gRPC call over TLS took 40 s on
     * a 2-core host at load 24 (2 s the next time).
     */
    private static final long SERVED_TIMEOUT_MS = 60_000;
    /** How long one operation of a store that is to be refused may wait; the refusal must come within a few. */
    private static final long REFUSED_TIMEOUT_MS = 5_000;
    private static final Duration REFUSED_WITHIN = Duration.ofMillis(4 * REFUSED_TIMEOUT_MS);
    private static final String KEY = "/xferd/test/segments/decode-0";
    private static final String OUTSIDE = "/elsewhere/decode-0";

    @TempDir
    static Path certificateDir;
    private static TestCertificates certificates;

    @TempDir
    Path dir;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void makeCertificates()
    {
        certificates = TestCertificates.create(certificateDir);
    }

    @AfterEach
    void tearDown() throws Exception
    {
        for (final AutoCloseable closeable : closeables.reversed())
        {
            closeable.close();
        }
    }

    private MetadataServers started(final MetadataServers server)
    {
        closeables.add(server);
        return server.start();
    }

    private MetadataStore open(final String url, final MetadataAccess access)
    {
        return open(url, access, SERVED_TIMEOUT_MS);
    }

    private MetadataStore openToBeRefused(final String url, final MetadataAccess access)
    {
        return open(url, access, REFUSED_TIMEOUT_MS);
    }

    private MetadataStore open(final String url, final MetadataAccess access, final long timeoutMs)
    {
        final MetadataStore store = MetadataStores.open(MetadataServer.parse(url), 10_000, timeoutMs, null, access);
        closeables.add(store);
        return store;
    }

    private Path passwordFile(final String name, final String password) throws Exception
    {
        final Path file = dir.resolve(name);
        Files.writeString(file, password + "\n");
        return file;
    }

    private static void assertServes(final MetadataStore store)
    {
        store.put(KEY, "descriptor");
        assertThat(store.get(KEY)).isEqualTo("descriptor");
        assertThat(store.putIfAbsent(KEY, "second claimant")).isFalse();
        assertThat(store.replace(KEY, "descriptor", "renewed")).isTrue();
        assertThat(store.get(KEY)).isEqualTo("renewed");
    }

    /**
     * @return the message of the {@link MetadataException} that {@code operation} failed with, within the bound.
     */
    private static String refusal(final MetadataStore store, final Function<MetadataStore, Object> operation)
    {
        return assertTimeoutPreemptively(REFUSED_WITHIN,
            () -> assertThrows(MetadataException.class, () -> operation.apply(store)).getMessage());
    }

    private static String refusal(final MetadataStore store)
    {
        return refusal(store, s -> s.get(KEY));
    }

    private MetadataServers etcd(final boolean tls, final boolean clientCertificates) throws Exception
    {
        final Path data = Files.createDirectory(dir.resolve("etcd-data"));
        final int clientPort = MetadataServers.freePort();
        final int peerPort = MetadataServers.freePort();
        return started(tls ?
            MetadataServers.etcdTls(data, clientPort, peerPort, certificates, clientCertificates) :
            MetadataServers.etcd(data, clientPort, peerPort));
    }

    @Test
    void shouldReachAnEtcdWithAuthenticationAsItsUserAndBeRefusedWithoutOrWithAWrongPassword() throws Exception
    {
        final MetadataServers server = etcd(false, false);
        server.enableEtcdAuthentication("xferd", "etcd-secret", "/xferd/");

        final MetadataStore asUser = open(server.url(),
            MetadataAccess.NONE.username("xferd").passwordFile(passwordFile("etcd.password", "etcd-secret")));
        assertServes(asUser);
        // it is that user: a key outside its role's range is refused
        assertThat(refusal(asUser, s ->
        {
            s.put(OUTSIDE, "x");
            return null;
        })).containsIgnoringCase("permission denied");

        assertThat(refusal(openToBeRefused(server.url(), MetadataAccess.NONE)))
            .containsIgnoringCase("user name is empty");
        assertThat(refusal(openToBeRefused(server.url(),
            MetadataAccess.NONE.username("xferd").passwordFile(passwordFile("wrong.password", "not-it")))))
            .containsIgnoringCase("authentication failed");
    }

    @Test
    void shouldReachAnEtcdOverTlsTrustingItsCaAndRefuseAnUntrustedCertificateOrPlainText() throws Exception
    {
        final MetadataServers server = etcd(true, false);

        assertServes(open(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca())));

        assertThat(refusal(openToBeRefused(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.otherCa()))))
            .containsIgnoringCase("certificat");
        refusal(openToBeRefused(server.url(), MetadataAccess.NONE));
    }

    @Test
    void shouldReachAnEtcdRequiringClientCertificatesOnlyWithOne() throws Exception
    {
        final MetadataServers server = etcd(true, true);

        assertServes(open(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca())
            .tlsCertFile(certificates.clientCert()).tlsKeyFile(certificates.clientKey())));

        assertThat(refusal(openToBeRefused(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca()))))
            .containsIgnoringCase("certificate");
    }

    @Test
    void shouldReachARedisAsItsAclUserAndBeRefusedWithoutOrWithAWrongPassword() throws Exception
    {
        final MetadataServers server = started(
            MetadataServers.redisWithAclUser(MetadataServers.freePort(), "xferd", "redis-secret", "/xferd/*"));

        final MetadataStore asUser = open(server.url(),
            MetadataAccess.NONE.username("xferd").passwordFile(passwordFile("redis.password", "redis-secret")));
        assertServes(asUser);
        assertThat(refusal(asUser, s ->
        {
            s.put(OUTSIDE, "x");
            return null;
        })).contains("NOPERM");

        assertThat(refusal(openToBeRefused(server.url(), MetadataAccess.NONE))).contains("NOAUTH");
        assertThat(refusal(openToBeRefused(server.url(),
            MetadataAccess.NONE.username("xferd").passwordFile(passwordFile("wrong.password", "not-it")))))
            .contains("WRONGPASS");
        // the password alone authenticates the default user, which this server has switched off
        assertThat(refusal(openToBeRefused(server.url(),
            MetadataAccess.NONE.passwordFile(passwordFile("default.password", "redis-secret")))))
            .contains("WRONGPASS");
    }

    @Test
    void shouldReachARedisOverTlsTrustingItsCaAndRefuseAnUntrustedCertificateOrPlainText() throws Exception
    {
        final MetadataServers server = started(
            MetadataServers.redisTls(MetadataServers.freePort(), certificates, false));

        assertServes(open(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca())));

        assertThat(refusal(openToBeRefused(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.otherCa()))))
            .containsIgnoringCase("certificat");
        refusal(openToBeRefused(server.url(), MetadataAccess.NONE));
    }

    @Test
    void shouldReachARedisRequiringClientCertificatesOnlyWithOne() throws Exception
    {
        final MetadataServers server = started(
            MetadataServers.redisTls(MetadataServers.freePort(), certificates, true));

        assertServes(open(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca())
            .tlsCertFile(certificates.clientCert()).tlsKeyFile(certificates.clientKey())));

        refusal(openToBeRefused(server.url(), MetadataAccess.NONE.tlsCaFile(certificates.ca())));
    }
}
