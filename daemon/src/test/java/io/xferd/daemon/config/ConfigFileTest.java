package io.xferd.daemon.config;

import io.xferd.daemon.agent.ThreadingMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The config file: the seeds' mooncake.json files as they are, xferd's own fields, and errors that name the
 * file, the field and where it is.
 */
@Timeout(30)
class ConfigFileTest
{
    @TempDir
    Path dir;

    private Path write(final String name, final String json) throws IOException
    {
        return Files.writeString(dir.resolve(name), json);
    }

    private DaemonContext apply(final String json) throws IOException
    {
        return ConfigFile.apply(write("xferd.json", json), new DaemonContext()).conclude();
    }

    @Test
    void shouldAcceptTheVllmConnectorMooncakeJsonWithEtcd() throws IOException
    {
        final DaemonContext context = apply("""
            {
              "prefill_url": "192.168.0.137:13003",
              "decode_url": "192.168.0.139:13003",
              "metadata_server": "192.168.0.139:2379",
              "metadata_backend": "etcd",
              "protocol": "rdma",
              "device_name": "mlx5_0,mlx5_1"
            }
            """);

        assertThat(context.protocol()).isEqualTo("rdma");
        assertThat(context.deviceNames()).containsExactly("mlx5_0", "mlx5_1");
        assertThat(context.metadataServer()).isEqualTo("etcd://192.168.0.139:2379");
        assertThat(MetadataServer.parse(context.metadataServer()))
            .isEqualTo(new MetadataServer(MetadataServer.Kind.ETCD, List.of("192.168.0.139:2379"),
                "etcd://192.168.0.139:2379"));
        assertThat(context.describe())
            .containsEntry("prefill_url",
                "accepted, not used: roles live in the client-side connector; the daemon is role-agnostic")
            .containsEntry("decode_url",
                "accepted, not used: roles live in the client-side connector; the daemon is role-agnostic");
    }

    @Test
    void shouldGrantAccessToAllowedUidsAndGids() throws IOException
    {
        final DaemonContext context = apply("{\"allowed_uids\": [1001, 1002], \"allowed_gids\": [2000]}");

        assertThat(context.allowedUids()).containsExactly(1001, 1002);
        assertThat(context.allowedGids()).containsExactly(2000);
        assertThat(context.accessPolicy().permits(1002, 9, 1000)).isTrue();
        assertThat(context.accessPolicy().permits(1003, 9, 1000)).isFalse();
        assertThatThrownBy(() -> apply("{\"allowed_uids\": [-1]}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("allowed_uids");
        assertThatThrownBy(() -> apply("{\"allowed_gids\": \"2000\"}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("allowed_gids");
    }

    @Test
    void shouldGrantOneSegmentToMoreUidsAndGidsOnly() throws IOException
    {
        final DaemonContext context = apply("{\"allowed_uids\": [1001], \"segment_grants\": " +
            "{\"prefill\": {\"uids\": [1002]}, \"decode\": {\"gids\": [3000]}}}");

        assertThat(context.accessPolicy().permits(1002, 9, 1000, "prefill")).isTrue();
        assertThat(context.accessPolicy().permits(1002, 9, 1000, "decode")).as("granted prefill only").isFalse();
        assertThat(context.accessPolicy().permits(1003, 3000, 1000, "decode")).isTrue();
        assertThat(context.accessPolicy().permits(1003, 3000, 1000, "prefill")).isFalse();
        assertThat(context.accessPolicy().permits(1001, 9, 1000, "decode")).as("daemon-wide still").isTrue();
        assertThat(context.accessPolicy().permits(1002, 9, 1000, "prefill-2")).as("the exact name").isFalse();
        assertThatThrownBy(() -> apply("{\"segment_grants\": {\"prefill\": {\"uid\": [1002]}}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("segment_grants").hasMessageContaining("uid");
        assertThatThrownBy(() -> apply("{\"segment_grants\": {\"prefill\": {\"uids\": [-5]}}}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("segment_grants.prefill.uids");
        assertThatThrownBy(() -> apply("{\"segment_grants\": [1002]}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("segment_grants");
    }

    @Test
    void shouldReadStorageSegmentsAndGrantTheirUidsAndGids() throws IOException
    {
        final DaemonContext context = apply("""
            {"storage_segments": {
              "kv-spill": {"path": "/nvme/kv.bin", "offset": "1MiB", "size": "64GiB", "sync": true, "uids": [1002]},
              "scratch": {"path": "scratch.bin", "size": 4096, "direct": false}}}
            """);

        final List<StorageSegmentConfig> segments = context.storageSegments();
        assertThat(segments).hasSize(2);
        final StorageSegmentConfig spill = segments.get(0);
        assertThat(spill.name()).isEqualTo("kv-spill");
        assertThat(spill.path()).isEqualTo(Path.of("/nvme/kv.bin"));
        assertThat(spill.offset()).isEqualTo(1L << 20);
        assertThat(spill.size()).isEqualTo(64L << 30);
        assertThat(spill.direct()).isTrue();
        assertThat(spill.sync()).isTrue();
        final StorageSegmentConfig scratch = segments.get(1);
        assertThat(scratch.path()).as("relative to the config file").isEqualTo(dir.resolve("scratch.bin"));
        assertThat(scratch.offset()).isZero();
        assertThat(scratch.direct()).isFalse();
        assertThat(scratch.sync()).isFalse();
        assertThat(context.accessPolicy().permits(1002, 9, 0, "kv-spill")).isTrue();
        assertThat(context.accessPolicy().permits(1002, 9, 0, "scratch")).isFalse();
    }

    @Test
    void shouldRefuseHostileStorageSegmentsWithTheFieldNamed()
    {
        final String[][] cases = {
            {"[]", "storage_segments"},
            {"{\"a\": 5}", "segment a"},
            {"{\"a\": {\"path\": \"/f\"}}", "needs \"path\" and \"size\""},
            {"{\"a\": {\"size\": 4096}}", "needs \"path\" and \"size\""},
            {"{\"a\": {\"path\": \"/f\", \"size\": 0}}", "storage_segments.a.size"},
            {"{\"a\": {\"path\": \"/f\", \"size\": -4096}}", "storage_segments.a.size"},
            {"{\"a\": {\"path\": \"/f\", \"size\": \"many\"}}", "storage_segments.a.size"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 4096, \"offset\": -1}}", "storage_segments.a.offset"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 9223372036854775807, \"offset\": 2}}",
                "storage_segments.a.offset"},
            {"{\"a\": {\"path\": \"\", \"size\": 4096}}", "storage_segments.a.path"},
            {"{\"a\": {\"path\": 7, \"size\": 4096}}", "storage_segments.a.path"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 4096, \"direct\": \"yes\"}}", "storage_segments.a.direct"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 4096, \"sync\": 1}}", "storage_segments.a.sync"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 4096, \"uids\": [-3]}}", "storage_segments.a.uids"},
            {"{\"a\": {\"path\": \"/f\", \"size\": 4096, \"mode\": 1}}", "unknown field mode"},
            {"{\"a/b\": {\"path\": \"/f\", \"size\": 4096}}", "without '/'"},
            {"{\"\": {\"path\": \"/f\", \"size\": 4096}}", "segment name"},
        };
        for (final String[] hostile : cases)
        {
            assertThatThrownBy(() -> apply("{\"storage_segments\": " + hostile[0] + "}"))
                .as(hostile[0]).isInstanceOf(ConfigException.class).hasMessageContaining(hostile[1]);
        }
        final StringBuilder many = new StringBuilder("{\"storage_segments\": {");
        for (int i = 0; i <= StorageSegmentConfig.MAX_SEGMENTS; i++)
        {
            many.append(i == 0 ? "" : ",").append("\"s").append(i).append("\": {\"path\": \"/f\", \"size\": 1}");
        }
        assertThatThrownBy(() -> apply(many.append("}}").toString()))
            .isInstanceOf(ConfigException.class).hasMessageContaining("at most");
    }

    @Test
    void shouldAcceptTheP2pHandshakeMooncakeJson() throws IOException
    {
        final DaemonContext context = apply("""
            {"local_hostname": "10.0.0.5", "metadata_server": "P2PHANDSHAKE", "protocol": "tcp", "device_name": ""}
            """);

        assertThat(context.rpcAddress()).isEqualTo("10.0.0.5:12001");
        assertThat(context.metadataServer()).isEqualTo("P2PHANDSHAKE");
        assertThat(context.protocol()).isEqualTo("tcp");
        assertThat(context.deviceNames()).isEmpty();
    }

    @Test
    void shouldAcceptMooncakeStoreFieldsAsNotUsed() throws IOException
    {
        final DaemonContext context = apply("""
            {
              "local_hostname": "192.168.0.137",
              "metadata_server": "http://192.168.0.139:8080/metadata",
              "master_server": "192.168.0.139:50051",
              "master_server_address": "192.168.0.139:50051",
              "global_segment_size": 3355443200,
              "local_buffer_size": 1073741824,
              "gpu_memory_pool_size": "16GB",
              "cpu_memory_pool_size": 0,
              "protocol": "tcp",
              "device_name": ""
            }
            """);

        assertThat(context.metadataServer()).isEqualTo("http://192.168.0.139:8080/metadata");
        assertThat(context.describe()).containsKeys("master_server", "master_server_address",
            "global_segment_size", "local_buffer_size", "gpu_memory_pool_size", "cpu_memory_pool_size");
        assertThat((String)context.describe().get("master_server")).contains("no Mooncake Store master");
        assertThat((String)context.describe().get("global_segment_size"))
            .contains("registers its clients' memory instead of a pool");
    }

    @Test
    void shouldApplyXferdsOwnFields() throws IOException
    {
        final DaemonContext context = apply("""
            {
              "dir": "/dev/shm/xferd-a",
              "rpc_address": "10.0.0.5:12345",
              "local_hostname": "10.0.0.5",
              "threading": "dedicated",
              "transfer_workers": 4,
              "idle_strategy": "busy-spin",
              "cluster_token_file": "token",
              "connections_per_peer": 8,
              "slice_size": "1MiB",
              "transfer_timeout_ms": 750,
              "liveness_timeout_ms": 3000,
              "max_clients": 64
            }
            """);

        assertThat(context.directory()).isEqualTo(Path.of("/dev/shm/xferd-a"));
        assertThat(context.rpcAddress()).isEqualTo("10.0.0.5:12345");
        assertThat(context.threadingMode()).isEqualTo(ThreadingMode.DEDICATED);
        assertThat(context.transferWorkers()).isEqualTo(4);
        assertThat(context.idleStrategy()).isEqualTo("busy-spin");
        assertThat(context.clusterTokenFile()).isEqualTo(dir.resolve("token"));
        assertThat(context.connectionsPerPeer()).isEqualTo(8);
        assertThat(context.sliceSize()).isEqualTo(1024 * 1024);
        assertThat(context.transferTimeoutMs()).isEqualTo(750);
        assertThat(context.livenessTimeoutMs()).isEqualTo(3000);
        assertThat(context.maxClients()).isEqualTo(64);
    }

    @Test
    void shouldReadSliceSizesAsBytesOrWithBinaryUnits() throws IOException
    {
        assertThat(apply("{\"slice_size\": 65536}").sliceSize()).isEqualTo(65536);
        assertThat(apply("{\"slice_size\": \"512KiB\"}").sliceSize()).isEqualTo(512 * 1024);
        assertThat(apply("{\"slice_size\": \"64 KiB\"}").sliceSize()).isEqualTo(64 * 1024);
        assertThat(apply("{\"slice_size\": \"2M\"}").sliceSize()).isEqualTo(2 * 1024 * 1024);
        assertThat(apply("{\"staging_buffer_size\": \"256KiB\"}").stagingBufferSize()).isEqualTo(256 * 1024);
        assertThatThrownBy(() -> apply("{\"slice_size\": \"1MB\"}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("slice_size").hasMessageContaining("MiB");
        assertThatThrownBy(() -> apply("{\"slice_size\": \"lots\"}"))
            .isInstanceOf(ConfigException.class).hasMessageContaining("slice_size").hasMessageContaining("512KiB");
        assertThatThrownBy(() -> apply("{\n  \"slice_size\": \"1GiB\"\n}"))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("line 2, column 17: slice_size: slice size must be 4 KiB..64 MiB");
    }

    @Test
    void shouldNameFieldAndFileOfAnUnknownFieldAndSuggestTheClosest() throws IOException
    {
        final Path file = write("typo.json", "{\n  \"protocol\": \"tcp\",\n  \"protocl\": \"tcp\"\n}");

        assertThatThrownBy(() -> ConfigFile.apply(file, new DaemonContext()))
            .isInstanceOf(ConfigException.class)
            .hasMessage(file + ": line 3, column 3: unknown field 'protocl' (did you mean 'protocol'?)");
        assertThatThrownBy(() -> apply("{\"metadata_sever\": \"P2PHANDSHAKE\"}"))
            .hasMessageContaining("did you mean 'metadata_server'?");
        assertThatThrownBy(() -> apply("{\"zzz\": 1}"))
            .hasMessageContaining("unknown field 'zzz'; accepted fields: dir, rpc_address");
    }

    @Test
    void shouldNameFieldFileLineAndColumnOfAValueOfTheWrongType() throws IOException
    {
        final Path file = write("types.json", "{\n  \"protocol\": \"tcp\",\n  \"transfer_workers\": \"four\"\n}");

        assertThatThrownBy(() -> ConfigFile.apply(file, new DaemonContext()))
            .isInstanceOf(ConfigException.class)
            .hasMessage(file + ": line 3, column 23: transfer_workers must be an integer, got string \"four\"");
        assertThatThrownBy(() -> apply("{\"device_name\": 7}"))
            .hasMessageContaining("line 1, column 17: device_name must be a comma-separated string");
        assertThatThrownBy(() -> apply("{\"max_clients\": 1.5}"))
            .hasMessageContaining("max_clients must be an integer, got number 1.5");
        assertThatThrownBy(() -> apply("{\"protocol\": null}"))
            .hasMessageContaining("protocol must be a string, got null");
    }

    @Test
    void shouldNameLineAndColumnOfMalformedJson() throws IOException
    {
        final Path file = write("broken.json", "{\n  \"protocol\": \"tcp\"\n  \"device_name\": \"\"\n}");

        assertThatThrownBy(() -> ConfigFile.apply(file, new DaemonContext()))
            .isInstanceOf(ConfigException.class)
            .hasMessageStartingWith(file + ": line 3, column 3: malformed JSON: Unexpected character");
        assertThatThrownBy(() -> apply("")).hasMessageContaining("the file is empty");
        assertThatThrownBy(() -> apply("[1]")).hasMessageContaining("a config file is one JSON object");
        assertThatThrownBy(() -> apply("{} {}")).hasMessageContaining("content after the closing }");
    }

    @Test
    void shouldRefuseValuesOutOfRangeWithTheirPlaceInTheFile() throws IOException
    {
        assertThatThrownBy(() -> apply("{\"transfer_workers\": 100}"))
            .hasMessageContaining("line 1, column 22: transfer_workers: transfer workers must be 1..64: 100");
        assertThatThrownBy(() -> apply("{\"protocol\": \"udp\"}"))
            .hasMessageContaining("protocol: protocol must be tcp or rdma: udp");
        assertThatThrownBy(() -> apply("{\"threading\": \"many\"}"))
            .hasMessageContaining("threading must be shared or dedicated: many");
        assertThatThrownBy(() -> apply("{\"idle_strategy\": \"nap\"}"))
            .hasMessageContaining("idle_strategy: idle strategy must be backoff");
        assertThatThrownBy(() -> apply("{\"decode_url\": \"192.168.0.139\"}"))
            .hasMessageContaining("decode_url must be host:port");
        assertThatThrownBy(() -> apply("{\"rpc_address\": \"10.0.0.5:99999\"}"))
            .hasMessageContaining("rpc_address must be host:port");
        assertThatThrownBy(() -> apply("{\"protocol\": \"tcp\", \"protocol\": \"rdma\"}"))
            .hasMessageContaining("field 'protocol' is set twice");
    }

    @Test
    void shouldChangeNothingWhenOneFieldIsWrong() throws IOException
    {
        final DaemonContext context = new DaemonContext();
        final Path file = write("half.json", "{\"transfer_workers\": 4, \"protocol\": \"rdma\", \"max_clients\": 0}");

        assertThatThrownBy(() -> ConfigFile.apply(file, context)).hasMessageContaining("max_clients");
        assertThat(context.transferWorkers()).isEqualTo(1);
        assertThat(context.protocol()).isEqualTo("tcp");
    }

    @Test
    void shouldTakeTheClusterTokenInlineOrAsAFileReadAtStartAndRefuseAShortOne() throws IOException
    {
        final String inline = "inline-token-0123456789abcdef0123456789";
        assertThat(apply("{\"cluster_token\": \"" + inline + "\"}").clusterToken()).isEqualTo(inline);
        assertThat(apply("{\"cluster_token\": \"" + inline + "\"}").describe()).containsEntry("cluster_token", "(set)");
        // the file is read (or created) when the daemon starts, not when the config is read
        assertThat(apply("{\"cluster_token_file\": \"missing.token\"}").clusterTokenFile())
            .isEqualTo(dir.resolve("missing.token"));
        assertThatThrownBy(() -> apply("{\"cluster_token\": \"sesame\"}"))
            .hasMessageContaining("is 6 characters long")
            .hasMessageContaining("at least 32");
        assertThatThrownBy(() -> apply("{\"cluster_token\": \"a\", \"cluster_token_file\": \"x.token\"}"))
            .hasMessageContaining("cluster_token and cluster_token_file are both set");
    }

    @Test
    void shouldTurnPeerAuthenticationOffOnlyWhenToldSoAndSayItIsInsecure() throws IOException
    {
        assertThat(apply("{}").peerAuthentication()).isTrue();
        assertThat(apply("{}").describe()).containsEntry("peer_auth", "token");
        final DaemonContext none = apply("{\"peer_auth\": \"none\"}");
        assertThat(none.peerAuthentication()).isFalse();
        assertThat((String)none.describe().get("peer_auth")).startsWith("none (INSECURE");
        assertThatThrownBy(() -> apply("{\"peer_auth\": \"off\"}")).hasMessageContaining("must be token or none");
        assertThatThrownBy(() -> apply("{\"peer_auth\": \"none\", \"cluster_token_file\": \"x.token\"}"))
            .hasMessageContaining("peer authentication is off");
    }

    @Test
    void shouldTakeTheRpcHostFromLocalHostnameAndRefuseAContradiction() throws IOException
    {
        assertThat(apply("{\"local_hostname\": \"node-7.cluster\"}").rpcAddress()).isEqualTo("node-7.cluster:12001");
        assertThat(apply("{\"local_hostname\": \"10.0.0.5:13000\"}").rpcAddress()).isEqualTo("10.0.0.5:13000");
        assertThat(apply("{\"local_hostname\": \"10.0.0.5\", \"rpc_address\": \"10.0.0.5:14000\"}").rpcAddress())
            .isEqualTo("10.0.0.5:14000");
        assertThatThrownBy(() -> apply("{\"local_hostname\": \"10.0.0.6\", \"rpc_address\": \"10.0.0.5:14000\"}"))
            .hasMessageContaining("local_hostname '10.0.0.6' and rpc_address '10.0.0.5:14000' name different");
        assertThatThrownBy(() -> apply("{\"local_hostname\": \"bad host\"}"))
            .hasMessageContaining("local_hostname must be a host name");
    }

    @Test
    void shouldReadMetadataServerForms() throws IOException
    {
        assertThat(apply("{\"metadata_server\": \"etcd://10.0.0.1:2379,10.0.0.2:2379\"}").metadataServer())
            .isEqualTo("etcd://10.0.0.1:2379,10.0.0.2:2379");
        assertThat(apply("{\"metadata_server\": \"10.0.0.1:2379\"}").metadataServer())
            .isEqualTo("etcd://10.0.0.1:2379");
        assertThat(apply("{\"metadata_server\": \"10.0.0.1:6379\", \"metadata_backend\": \"redis\"}")
            .metadataServer()).isEqualTo("redis://10.0.0.1:6379");
        assertThat(apply("{\"metadata_server\": \"P2PHANDSHAKE\", \"metadata_backend\": \"etcd\"}").describe())
            .containsEntry("metadata_backend", "accepted, not used: metadata_server is P2PHANDSHAKE");
        assertThatThrownBy(() -> apply("{\"metadata_server\": \"redis://h:1\", \"metadata_backend\": \"etcd\"}"))
            .hasMessageContaining("metadata_backend etcd contradicts metadata_server redis://h:1");
        assertThatThrownBy(() -> apply("{\"metadata_backend\": \"etcd\"}"))
            .hasMessageContaining("metadata_backend is set but metadata_server is not");
        assertThatThrownBy(() -> apply("{\"metadata_server\": \"P2P\"}"))
            .hasMessageContaining("metadata_server: metadata_server must be P2PHANDSHAKE, etcd://");
    }

    @Test
    void shouldReadTheRdmaFieldsAndRefuseValuesOutOfRange() throws IOException
    {
        final DaemonContext context = apply("{\"protocol\": \"rdma\", \"protocol_fallback\": \"TCP\", \"gid_index\": 3}");
        assertThat(context.protocolFallback()).isEqualTo("tcp");
        assertThat(context.gidIndex()).isEqualTo(3);
        assertThat(apply("{\"gid_index\": \"auto\"}").gidIndex()).isEqualTo(DaemonContext.GID_INDEX_AUTO);
        assertThat(new DaemonContext().conclude().describe())
            .containsEntry("gid_index", "auto").containsEntry("protocol_fallback", "none");

        assertThatThrownBy(() -> apply("{\"protocol_fallback\": \"udp\"}"))
            .hasMessageContaining("protocol_fallback: protocol fallback must be none or tcp: udp");
        assertThatThrownBy(() -> apply("{\"gid_index\": 300}"))
            .hasMessageContaining("gid_index: gid index must be auto or 0..255: 300");
        assertThatThrownBy(() -> apply("{\"gid_index\": \"first\"}"))
            .hasMessageContaining("must be a whole number or \"auto\"");
    }

    @Test
    void shouldReadTheTcpCongestionControlAndRefuseNamesTheKernelCouldNotHold() throws IOException
    {
        assertThat(apply("{\"tcp_congestion\": \"cubic\"}").tcpCongestion()).isEqualTo("cubic");
        assertThat(apply("{\"tcp_congestion\": \"cubic\"}").describe()).containsEntry("tcp_congestion", "cubic");
        assertThat(new DaemonContext().conclude().tcpCongestion()).isNull();
        assertThat(new DaemonContext().conclude().describe())
            .containsEntry("tcp_congestion", "(the host's net.ipv4.tcp_congestion_control)");

        assertThatThrownBy(() -> apply("{\"tcp_congestion\": \"Cubic\"}"))
            .hasMessageContaining("tcp_congestion: tcp congestion control must be 1..15 of a-z 0-9 _ (e.g. cubic): Cubic");
        assertThatThrownBy(() -> apply("{\"tcp_congestion\": \"a_name_too_long_x\"}"))
            .hasMessageContaining("tcp congestion control must be 1..15");
        assertThatThrownBy(() -> apply("{\"tcp_congestion\": \"\"}")).hasMessageContaining("tcp_congestion");
        assertThatThrownBy(() -> apply("{\"tcp_congestion\": 3}")).hasMessageContaining("tcp_congestion");
    }

    @Test
    void shouldResolveARelativeDirectoryFromTheConfigFilesDirectory() throws IOException
    {
        assertThat(apply("{\"dir\": \"run\"}").directory()).isEqualTo(dir.resolve("run"));
    }

    @Test
    void shouldNameAMissingFile()
    {
        assertThatThrownBy(() -> ConfigFile.apply(dir.resolve("none.json"), new DaemonContext()))
            .isInstanceOf(ConfigException.class)
            .hasMessage("config file " + dir.resolve("none.json") + " does not exist");
    }
}
