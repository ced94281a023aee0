package io.xferd.daemon.statusmap;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.xferd.daemon.statusmap.StatusFileDescriptor.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The status file, written and read back in one process: what the conductor knows comes out of the file (settings,
 * clients, regions), coalesced to one snapshot per interval, a snapshot that outgrows the file moves into a larger
 * one, and the reader treats the file as hostile (wrong magic or version, lengths past the end, a file always
 * being written, and seeded random corruption all end in a typed error, never another exception).
 */
@Timeout(60)
class StatusFileTest
{
    private static final long SEED = Long.getLong("xferd.test.seed", 0x5747_7573L);

    @TempDir
    Path directory;

    private final CachedEpochClock clock = new CachedEpochClock();
    private StatusFileWriter writer;

    @AfterEach
    void close()
    {
        if (writer != null)
        {
            writer.close();
        }
    }

    private static ClientSession session(final int slot, final String segment, final Region... regions)
    {
        final ClientSession session = new ClientSession(slot, 1, segment, "127.0.0.1:7000/" + segment, 4000 + slot,
            1000, 1000, null, null, null, null, null);
        RegionTable table = RegionTable.EMPTY;
        for (final Region region : regions)
        {
            table = table.with(region);
        }
        session.regions(table);
        return session;
    }

    private static Map<String, Object> config()
    {
        final Map<String, Object> config = new LinkedHashMap<>();
        config.put("directory", "/run/xferd");
        config.put("transfer_workers", 2);
        config.put("metadata_ttl_ms", 30_000L);
        config.put("journal", true);
        config.put("metadata_server", null);
        return config;
    }

    @Test
    void shouldPublishTheSettingsAtOnceAndTheClientsAndRegionsAtTheNextHousekeeping()
    {
        clock.update(1_000);
        writer = StatusFileWriter.create(directory, config(), Map.of("rdma", "not available: no libibverbs"), clock);
        final Map<String, Object> numbersAsLongs = config();
        numbersAsLongs.put("transfer_workers", 2L);
        assertThat(StatusFileReader.read(directory).config()).containsExactlyEntriesOf(numbersAsLongs);
        assertThat(StatusFileReader.read(directory).facts()).containsExactly(
            Map.entry("rdma", "not available: no libibverbs"));
        assertThat(StatusFileReader.read(directory).clients()).isEmpty();
        assertThat(Files.exists(directory.resolve(FILE))).isTrue();

        final ClientSession prefill = session(3, "prefill",
            Region.inProcess(0x7f00_0000_0000L, 4096, "cpu:0", 4003),
            Region.inProcess(0x7f00_0010_0000L, 1 << 20, "cuda:1", 4003));
        writer.onClientConnected(prefill);
        writer.onRegionsChanged(prefill);
        writer.onHousekeeping(1_005); // within the interval of the first snapshot: not yet
        assertThat(writer.isStale()).isTrue();
        assertThat(StatusFileReader.read(directory).clients()).isEmpty();
        writer.onHousekeeping(1_000 + StatusFileWriter.MIN_PUBLISH_INTERVAL_MS);

        final List<Map<String, Object>> clients = StatusFileReader.read(directory).clients();
        assertThat(clients).singleElement().satisfies(client ->
        {
            assertThat(client).containsKeys("slot", "segment", "full_name", "pid", "uid", "connected_at", "regions",
                "registered_bytes", "region_list");
            assertThat(List.copyOf(client.keySet())).containsExactly("slot", "segment", "full_name", "pid", "uid",
                "connected_at", "regions", "registered_bytes", "region_list");
            assertThat(client).containsEntry("slot", 3).containsEntry("segment", "prefill")
                .containsEntry("full_name", "127.0.0.1:7000/prefill").containsEntry("pid", 4003)
                .containsEntry("uid", 1000).containsEntry("regions", 2).containsEntry("registered_bytes", 4096L + (1 << 20))
                .containsEntry("connected_at", "1970-01-01T00:00:01Z");
            assertThat(client.get("region_list").toString()).isEqualTo(
                "[{address=0x7f0000000000, length=4096, location=cpu:0}, " +
                "{address=0x7f0000100000, length=1048576, location=cuda:1}]");
        });

        writer.onClientDisconnected(prefill);
        writer.onHousekeeping(2_000);
        assertThat(StatusFileReader.read(directory).clients()).isEmpty();

        writer.close();
        writer = null;
        assertThat(directory.resolve(FILE)).doesNotExist();
        assertThat(StatusFileReader.read(directory)).isNull();
    }

    @Test
    void shouldMoveIntoALargerFileWhenTheSnapshotOutgrowsThisOne() throws Exception
    {
        writer = StatusFileWriter.create(directory, config(), Map.of("rdma", "not available: no libibverbs"), clock);
        final int regions = 3000; // ~30 bytes and more each: past the first 64 KiB
        final Region[] many = new Region[regions];
        for (int i = 0; i < regions; i++)
        {
            many[i] = Region.inProcess(0x10_0000L * (i + 1), 4096, "cpu:0", 4001);
        }
        final ClientSession big = session(1, "decode", many);
        final FileChannel before = FileChannel.open(directory.resolve(FILE), StandardOpenOption.READ);
        final UnsafeBuffer oldFile = new UnsafeBuffer(before.map(FileChannel.MapMode.READ_ONLY, 0, HEADER_LENGTH));

        writer.onClientConnected(big);
        writer.onHousekeeping(100);

        assertThat(Files.size(directory.resolve(FILE))).isGreaterThan(HEADER_LENGTH + (long)MIN_BODY_CAPACITY);
        assertThat(oldFile.getLongVolatile(SEQUENCE_OFFSET)).as("readers of the old file go to the new one")
            .isEqualTo(SUPERSEDED);
        assertThat(StatusFileReader.copyOnce(oldFile, directory)).isNull();
        before.close();
        final Map<String, Object> client = StatusFileReader.read(directory).clients().getFirst();
        assertThat(client).containsEntry("regions", regions);
        assertThat((List<?>)client.get("region_list")).hasSize(regions);
        assertThat(directory.resolve(FILE + ".new")).doesNotExist();
    }

    @Test
    void shouldRefuseAFileThatIsNotAStatusFileOfThisLayout() throws Exception
    {
        final Path file = directory.resolve(FILE);
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH + 16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        Files.write(file, header.array());
        assertThatThrownBy(() -> StatusFileReader.read(directory))
            .isInstanceOf(StatusFileReader.MalformedException.class).hasMessageContaining("magic");

        header.putInt(MAGIC_OFFSET, MAGIC).putInt(VERSION_OFFSET, LAYOUT_VERSION + 1);
        Files.write(file, header.array());
        assertThatThrownBy(() -> StatusFileReader.read(directory))
            .isInstanceOf(StatusFileReader.MalformedException.class).hasMessageContaining("layout version");

        header.putInt(VERSION_OFFSET, LAYOUT_VERSION).putInt(BODY_LENGTH_OFFSET, 17);
        Files.write(file, header.array());
        assertThatThrownBy(() -> StatusFileReader.read(directory))
            .isInstanceOf(StatusFileReader.MalformedException.class).hasMessageContaining("body is 17 bytes");

        Files.write(file, new byte[10]);
        assertThatThrownBy(() -> StatusFileReader.read(directory))
            .isInstanceOf(StatusFileReader.MalformedException.class).hasMessageContaining("shorter than its header");
    }

    @Test
    void shouldGiveUpAfterABoundedNumberOfAttemptsOnAFileAlwaysBeingWritten() throws Exception
    {
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        header.putInt(MAGIC_OFFSET, MAGIC).putInt(VERSION_OFFSET, LAYOUT_VERSION).putLong(SEQUENCE_OFFSET, 7);
        Files.write(directory.resolve(FILE), header.array());

        assertThatThrownBy(() -> StatusFileReader.read(directory))
            .isInstanceOf(StatusFileReader.MalformedException.class)
            .hasMessageContaining("after " + StatusFileReader.MAX_ATTEMPTS + " attempts");
    }

    @Test
    void shouldDecodeEveryCorruptionOfAGoodBodyToASnapshotOrATypedError() throws Exception
    {
        writer = StatusFileWriter.create(directory, config(), Map.of("rdma", "not available: no libibverbs"), clock);
        writer.onClientConnected(session(0, "prefill", Region.inProcess(0x1000, 4096, "cpu:0", 4000)));
        writer.onClientConnected(session(1, "decode", Region.inProcess(0x2000, 8192, "cuda:0", 4001)));
        writer.onHousekeeping(100);
        final byte[] good = StatusFileReader.copyBody(directory.resolve(FILE));
        assertThat(StatusFileReader.decode(good).clients()).hasSize(2);

        final Random random = new Random(SEED);
        for (int round = 0; round < 20_000; round++)
        {
            final byte[] bad = good.clone();
            final int flips = 1 + random.nextInt(4);
            for (int i = 0; i < flips; i++)
            {
                final int at = random.nextInt(bad.length);
                bad[at] = random.nextBoolean() ? (byte)random.nextInt() : (byte)(bad[at] ^ (1 << random.nextInt(8)));
            }
            final byte[] cut = random.nextInt(4) == 0 ? java.util.Arrays.copyOf(bad, random.nextInt(bad.length)) : bad;
            try
            {
                StatusFileReader.decode(cut);
            }
            catch (final StatusFileReader.MalformedException expected)
            {
                // a typed error is what a hostile file may get
            }
        }
    }
}
