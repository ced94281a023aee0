package io.xferd.daemon.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import io.xferd.daemon.agent.ThreadingMode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The daemon's JSON config file: xferd's own fields (snake_case) and the fields of the seeds' Mooncake
 * {@code mooncake.json}, as they are. Fields Mooncake has and xferd does not need are accepted and recorded as
 * not used, with the reason ({@link DaemonContext#notUsed}); any other field is an error.
 * <p>
 * Every field is checked, each on a scratch context that is concluded, before anything is applied to the
 * caller's context: a file with one bad field changes nothing.
 */
public final class ConfigFile
{
    private static final String ROLES_NOT_USED =
        "roles live in the client-side connector; the daemon is role-agnostic";
    private static final String NO_MASTER =
        "no Mooncake Store master: xferd moves bytes between registered memory and keeps no object store";
    private static final String NO_POOL =
        "no Mooncake Store pool: the daemon registers its clients' memory instead of a pool of its own";

    private static final Map<String, Field> FIELDS = new LinkedHashMap<>();

    static
    {
        // xferd's own
        field("dir", (value, all) -> context -> context.directory(value.path()));
        field("rpc_address", (value, all) -> rpcAddress(value, all));
        field("threading", (value, all) -> threading(value));
        field("transfer_workers", (value, all) -> intSetting(value, DaemonContext::transferWorkers));
        field("idle_strategy", (value, all) -> text(value.lowerCaseText(), DaemonContext::idleStrategy));
        field("cluster_token", (value, all) -> clusterToken(value, all));
        field("cluster_token_file", (value, all) -> clusterTokenFile(value, all));
        field("peer_auth", (value, all) -> peerAuth(value));
        field("metadata_token_file", (value, all) ->
        {
            final Path path = value.path();
            return context -> context.metadataTokenFile(path);
        });
        field("metadata_username", (value, all) ->
        {
            final String username = value.nonEmptyText();
            return context -> context.metadataAccess(context.metadataAccess().username(username));
        });
        field("metadata_password_file", (value, all) ->
        {
            final Path path = value.path();
            return context -> context.metadataAccess(context.metadataAccess().passwordFile(path));
        });
        field("metadata_tls_ca_file", (value, all) ->
        {
            final Path path = value.path();
            return context -> context.metadataAccess(context.metadataAccess().tlsCaFile(path));
        });
        field("metadata_tls_cert_file", (value, all) ->
        {
            final Path path = value.path();
            if (all.get("metadata_tls_key_file") == null)
            {
                throw value.error("needs metadata_tls_key_file (mutual TLS: the certificate and its key)");
            }
            if (all.get("metadata_tls_ca_file") == null)
            {
                throw value.error("needs metadata_tls_ca_file (the CA to trust)");
            }
            return context -> context.metadataAccess(context.metadataAccess().tlsCertFile(path));
        });
        field("metadata_tls_key_file", (value, all) ->
        {
            final Path path = value.path();
            if (all.get("metadata_tls_cert_file") == null)
            {
                throw value.error("needs metadata_tls_cert_file (mutual TLS: the certificate and its key)");
            }
            return context -> context.metadataAccess(context.metadataAccess().tlsKeyFile(path));
        });
        field("connections_per_peer", (value, all) -> intSetting(value, DaemonContext::connectionsPerPeer));
        field("max_peer_connections", (value, all) -> intSetting(value, DaemonContext::maxPeerConnections));
        field("slice_size", (value, all) -> sliceSize(value));
        field("staging_buffer_size", (value, all) -> stagingBufferSize(value));
        field("storage_queue_depth", (value, all) -> intSetting(value, DaemonContext::storageQueueDepth));
        field("storage_segments", (value, all) ->
        {
            final java.util.List<StorageSegmentConfig> segments = value.storageSegments();
            return context -> context.storageSegments(segments);
        });
        field("transfer_timeout_ms", (value, all) -> longSetting(value, DaemonContext::transferTimeoutMs));
        field("liveness_timeout_ms", (value, all) -> longSetting(value, DaemonContext::livenessTimeoutMs));
        field("max_clients", (value, all) -> intSetting(value, DaemonContext::maxClients));
        field("allowed_uids", (value, all) ->
        {
            final int[] ids = value.ids();
            return context -> context.allowedUids(ids);
        });
        field("allowed_gids", (value, all) ->
        {
            final int[] ids = value.ids();
            return context -> context.allowedGids(ids);
        });
        field("segment_grants", (value, all) ->
        {
            final Map<String, int[][]> grants = value.segmentGrants();
            return context -> grants.forEach((segment, ids) -> context.segmentGrant(segment, ids[0], ids[1]));
        });
        field("cluster_id", (value, all) -> text(value.nonEmptyText(), DaemonContext::clusterId));
        field("metadata_ttl_ms", (value, all) -> longSetting(value, DaemonContext::metadataTtlMs));
        // Mooncake's mooncake.json (Transfer Engine and vLLM connector)
        field("local_hostname", (value, all) -> localHostname(value, all));
        field("metadata_server", (value, all) -> metadataServer(value, all));
        field("metadata_backend", (value, all) -> metadataBackend(value, all));
        field("protocol", (value, all) -> text(value.lowerCaseText(), DaemonContext::protocol));
        field("protocol_fallback", (value, all) -> text(value.lowerCaseText(), DaemonContext::protocolFallback));
        field("tcp_congestion", (value, all) -> text(value.nonEmptyText(), DaemonContext::tcpCongestion));
        field("gid_index", (value, all) ->
        {
            final int index = value.intOrAuto(DaemonContext.GID_INDEX_AUTO);
            return context -> context.gidIndex(index);
        });
        field("device_name", (value, all) -> deviceNames(value));
        field("topology_matrix", (value, all) ->
        {
            final Path matrix = value.path();
            return context -> context.topologyMatrixFile(matrix);
        });
        field("prefill_url", (value, all) -> notUsedAddress(value, ROLES_NOT_USED));
        field("decode_url", (value, all) -> notUsedAddress(value, ROLES_NOT_USED));
        // Mooncake Store's fields: accepted so that one mooncake.json serves both, never used
        field("master_server", (value, all) -> notUsedScalar(value, NO_MASTER));
        field("master_server_address", (value, all) -> notUsedScalar(value, NO_MASTER));
        field("gpu_memory_pool_size", (value, all) -> notUsedScalar(value, NO_POOL));
        field("cpu_memory_pool_size", (value, all) -> notUsedScalar(value, NO_POOL));
        field("global_segment_size", (value, all) -> notUsedScalar(value, NO_POOL));
        field("local_buffer_size", (value, all) -> notUsedScalar(value, NO_POOL));
    }

    private ConfigFile()
    {
    }

    /**
     * Read {@code file} and apply what it sets to {@code context}, only once every field is known and valid.
     *
     * @return {@code context}.
     * @throws ConfigException naming the file, the field and, where it applies, the line and column.
     */
    public static DaemonContext apply(final Path file, final DaemonContext context)
    {
        final Map<String, ConfigValue> values = read(file);
        final List<Consumer<DaemonContext>> settings = new ArrayList<>();
        final DaemonContext scratch = new DaemonContext();
        for (final ConfigValue value : values.values())
        {
            final Consumer<DaemonContext> setting = FIELDS.get(value.name()).parse(value, values);
            try
            {
                setting.accept(scratch);
                scratch.conclude();
            }
            catch (final ConfigException ex)
            {
                throw ex;
            }
            catch (final IllegalArgumentException ex)
            {
                throw value.rejected(ex.getMessage());
            }
            settings.add(setting);
        }
        settings.forEach(setting -> setting.accept(context));
        return context;
    }

    private static Map<String, ConfigValue> read(final Path file)
    {
        final ObjectMapper mapper = new ObjectMapper();
        final Map<String, ConfigValue> values = new LinkedHashMap<>();
        final Map<String, JsonLocation> seenAt = new LinkedHashMap<>();
        try (JsonParser parser = mapper.createParser(Files.readString(file, StandardCharsets.UTF_8)))
        {
            final JsonToken first = parser.nextToken();
            if (first != JsonToken.START_OBJECT)
            {
                throw new ConfigException(ConfigValue.where(file, parser.currentTokenLocation()) +
                    (first == null ? "the file is empty; " : "") + "a config file is one JSON object { ... }");
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                final JsonLocation nameAt = parser.currentTokenLocation();
                parser.nextToken();
                final JsonLocation valueAt = parser.currentTokenLocation();
                final JsonNode read = mapper.readTree(parser);
                final JsonNode node = read == null ? NullNode.getInstance() : read;
                if (!FIELDS.containsKey(name))
                {
                    throw new ConfigException(ConfigValue.where(file, nameAt) + unknownField(name));
                }
                final JsonLocation earlier = seenAt.put(name, nameAt);
                if (earlier != null)
                {
                    throw new ConfigException(ConfigValue.where(file, nameAt) + "field '" + name +
                        "' is set twice (first on line " + earlier.getLineNr() + ")");
                }
                values.put(name, new ConfigValue(file, name, node, valueAt));
            }
            if (parser.nextToken() != null)
            {
                throw new ConfigException(ConfigValue.where(file, parser.currentTokenLocation()) +
                    "content after the closing }");
            }
        }
        catch (final JsonProcessingException ex)
        {
            throw new ConfigException(ConfigValue.where(file, ex.getLocation()) + "malformed JSON: " +
                ex.getOriginalMessage(), ex);
        }
        catch (final NoSuchFileException ex)
        {
            throw new ConfigException("config file " + file + " does not exist", ex);
        }
        catch (final IOException ex)
        {
            throw new ConfigException("cannot read config file " + file + ": " + ex, ex);
        }
        return values;
    }

    static String unknownField(final String name)
    {
        final String closest = closest(name);
        return "unknown field '" + name + "'" + (closest != null ? " (did you mean '" + closest + "'?)" :
            "; accepted fields: " + String.join(", ", FIELDS.keySet()));
    }

    /**
     * @return the accepted field nearest to {@code name} by edit distance, when it is near enough to be a typo.
     */
    static String closest(final String name)
    {
        final String lower = name.toLowerCase(Locale.ROOT).replace('-', '_');
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (final String candidate : FIELDS.keySet())
        {
            final int distance = editDistance(lower, candidate);
            if (distance < bestDistance)
            {
                best = candidate;
                bestDistance = distance;
            }
        }
        return bestDistance <= Math.max(2, best.length() / 4) ? best : null;
    }

    private static int editDistance(final String a, final String b)
    {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++)
        {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++)
        {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++)
            {
                final int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    private static Consumer<DaemonContext> rpcAddress(final ConfigValue value, final Map<String, ConfigValue> all)
    {
        final String address = value.hostPort();
        return context -> context.rpcAddress(address);
    }

    /**
     * Mooncake's name for this host: the host part of the rpc address, unless {@code rpc_address} is set (then
     * both must name the same host). A {@code host:port} form sets the whole address.
     */
    private static Consumer<DaemonContext> localHostname(final ConfigValue value, final Map<String, ConfigValue> all)
    {
        final String text = value.nonEmptyText();
        final boolean withPort = HostPort.isValid(text);
        if (!withPort && !HostPort.isHost(text))
        {
            throw value.error("must be a host name or address (or host:port): " + text);
        }
        final ConfigValue rpc = all.get("rpc_address");
        if (rpc != null)
        {
            final String rpcAddress = rpc.hostPort();
            final String rpcHost = rpcAddress.substring(0, rpcAddress.lastIndexOf(':'));
            final String host = withPort ? text.substring(0, text.lastIndexOf(':')) : text;
            if (!host.equals(rpcHost) || (withPort && !text.equals(rpcAddress)))
            {
                throw value.error("'" + text + "' and rpc_address '" + rpcAddress +
                    "' name different addresses; set one of them");
            }
            return context -> { };
        }
        return withPort ? context -> context.rpcAddress(text) :
            context -> context.rpcAddress(text + ":" + context.rpcPort());
    }

    private static Consumer<DaemonContext> metadataServer(
        final ConfigValue value, final Map<String, ConfigValue> all)
    {
        final ConfigValue backend = all.get("metadata_backend");
        try
        {
            final MetadataServer server = MetadataServer.parse(value.nonEmptyText(),
                backend == null ? null : backend.lowerCaseText());
            return context -> context.metadataServer(server.url());
        }
        catch (final ConfigException ex)
        {
            throw value.rejected(ex.getMessage());
        }
    }

    private static Consumer<DaemonContext> metadataBackend(
        final ConfigValue value, final Map<String, ConfigValue> all)
    {
        final String backend = value.lowerCaseText();
        try
        {
            MetadataServer.Kind.ofBackend(backend);
        }
        catch (final ConfigException ex)
        {
            throw value.rejected(ex.getMessage());
        }
        final ConfigValue server = all.get("metadata_server");
        if (server == null)
        {
            throw value.error("is set but metadata_server is not; metadata_backend names the kind of a " +
                "host:port metadata_server");
        }
        if (server.nonEmptyText().equalsIgnoreCase(MetadataServer.P2P_HANDSHAKE))
        {
            return context -> context.notUsed(value.name(), "metadata_server is P2PHANDSHAKE");
        }
        return context -> { };
    }

    private static Consumer<DaemonContext> threading(final ConfigValue value)
    {
        final String text = value.lowerCaseText();
        return switch (text)
        {
            case "shared" -> context -> context.threadingMode(ThreadingMode.SHARED);
            case "dedicated" -> context -> context.threadingMode(ThreadingMode.DEDICATED);
            default -> throw value.error("must be shared or dedicated: " + text);
        };
    }

    private static Consumer<DaemonContext> clusterToken(final ConfigValue value, final Map<String, ConfigValue> all)
    {
        if (all.containsKey("cluster_token_file"))
        {
            throw value.error("and cluster_token_file are both set; set one of them");
        }
        final String token = value.nonEmptyText();
        return context -> context.clusterToken(token);
    }

    /**
     * The file is read, or created when absent, at the daemon's start (io.xferd.daemon.config.ClusterKey).
     */
    private static Consumer<DaemonContext> clusterTokenFile(
        final ConfigValue value, final Map<String, ConfigValue> all)
    {
        final Path path = value.path();
        return context -> context.clusterTokenFile(path);
    }

    private static Consumer<DaemonContext> peerAuth(final ConfigValue value)
    {
        final String text = value.lowerCaseText();
        return switch (text)
        {
            case "token" -> context -> context.peerAuthentication(true);
            case "none" -> context -> context.peerAuthentication(false);
            default -> throw value.error("must be token or none (none: peers are NOT authenticated): " + text);
        };
    }

    private static Consumer<DaemonContext> sliceSize(final ConfigValue value)
    {
        final int bytes = intBytes(value);
        return context -> context.sliceSize(bytes);
    }

    private static Consumer<DaemonContext> stagingBufferSize(final ConfigValue value)
    {
        final int bytes = intBytes(value);
        return context -> context.stagingBufferSize(bytes);
    }

    private static int intBytes(final ConfigValue value)
    {
        final long bytes = value.bytes();
        if (bytes <= 0 || bytes > Integer.MAX_VALUE)
        {
            throw value.error("must be 4 KiB..64 MiB: " + bytes);
        }
        return (int)bytes;
    }

    private static Consumer<DaemonContext> deviceNames(final ConfigValue value)
    {
        final List<String> names = value.names();
        return context -> context.deviceNames(names);
    }

    private static Consumer<DaemonContext> notUsedScalar(final ConfigValue value, final String reason)
    {
        value.requireScalar();
        return context -> context.notUsed(value.name(), reason);
    }

    private static Consumer<DaemonContext> notUsedAddress(final ConfigValue value, final String reason)
    {
        value.hostPort();
        return context -> context.notUsed(value.name(), reason);
    }

    private static Consumer<DaemonContext> intSetting(
        final ConfigValue value, final java.util.function.ObjIntConsumer<DaemonContext> setter)
    {
        final int number = value.intValue();
        return context -> setter.accept(context, number);
    }

    private static Consumer<DaemonContext> longSetting(
        final ConfigValue value, final java.util.function.ObjLongConsumer<DaemonContext> setter)
    {
        final long number = value.longValue();
        return context -> setter.accept(context, number);
    }

    private static Consumer<DaemonContext> text(
        final String text, final java.util.function.BiConsumer<DaemonContext, String> setter)
    {
        return context -> setter.accept(context, text);
    }

    private static void field(final String name, final Field field)
    {
        FIELDS.put(name, field);
    }

    @FunctionalInterface
    private interface Field
    {
        Consumer<DaemonContext> parse(ConfigValue value, Map<String, ConfigValue> all);
    }
}
