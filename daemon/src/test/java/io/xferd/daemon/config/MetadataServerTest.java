package io.xferd.daemon.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static io.xferd.daemon.config.MetadataServer.Kind.ETCD;
import static io.xferd.daemon.config.MetadataServer.Kind.HTTP;
import static io.xferd.daemon.config.MetadataServer.Kind.P2PHANDSHAKE;
import static io.xferd.daemon.config.MetadataServer.Kind.REDIS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class MetadataServerTest
{
    @Test
    void shouldParseEveryMooncakeForm()
    {
        assertThat(MetadataServer.parse("P2PHANDSHAKE"))
            .isEqualTo(new MetadataServer(P2PHANDSHAKE, List.of(), "P2PHANDSHAKE"));
        assertThat(MetadataServer.parse("etcd://a:2379,b:2379"))
            .isEqualTo(new MetadataServer(ETCD, List.of("a:2379", "b:2379"), "etcd://a:2379,b:2379"));
        assertThat(MetadataServer.parse("redis://10.0.0.1:6379"))
            .isEqualTo(new MetadataServer(REDIS, List.of("10.0.0.1:6379"), "redis://10.0.0.1:6379"));
        assertThat(MetadataServer.parse("http://10.0.0.1:8080/metadata"))
            .isEqualTo(new MetadataServer(HTTP, List.of("10.0.0.1:8080"), "http://10.0.0.1:8080/metadata"));
        assertThat(MetadataServer.parse("10.0.0.1:2379"))
            .isEqualTo(new MetadataServer(ETCD, List.of("10.0.0.1:2379"), "etcd://10.0.0.1:2379"));
        assertThat(MetadataServer.parse("10.0.0.1:8080", "http").url()).isEqualTo("http://10.0.0.1:8080");
    }

    @Test
    void shouldRefuseWhatIsNoForm()
    {
        assertThatThrownBy(() -> MetadataServer.parse("zk://a:1")).hasMessageContaining("unknown scheme 'zk'");
        assertThatThrownBy(() -> MetadataServer.parse("etcd")).hasMessageContaining("'etcd' is not host:port");
        assertThatThrownBy(() -> MetadataServer.parse("redis://a:1,b:2"))
            .hasMessageContaining("only etcd takes several endpoints");
        assertThatThrownBy(() -> MetadataServer.parse("a:1", "zookeeper"))
            .hasMessageContaining("metadata_backend must be etcd, redis or http");
    }

}
