package io.xferd.daemon.tools.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code status --json} is byte for byte what Jackson's pretty printer wrote before: for the snapshot of a directory
 * without a daemon, for the shapes a live one has, and for seeded random trees of maps, lists, strings (control
 * characters, quotes, non-ASCII), numbers, booleans and nulls; a type it does not know is left to Jackson.
 */
class StatusJsonTest
{
    private static final long SEED = Long.getLong("xferd.test.seed", 0x150_4e11L);
    private static final ObjectMapper JACKSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Test
    void shouldWriteWhatJacksonWritesForAStatusSnapshot(@TempDir final Path directory) throws Exception
    {
        final Map<String, Object> status = StatusSnapshot.read(directory);
        assertThat(StatusJson.write(status)).isEqualTo(JACKSON.writeValueAsString(status));

        final Map<String, Object> live = new LinkedHashMap<>();
        live.put("running", true);
        live.put("daemon", new LinkedHashMap<>(Map.of("pid", 42)));
        live.put("nics", List.of(new LinkedHashMap<>(Map.of("name", "shm")), Map.of()));
        live.put("peers", List.of());
        live.put("config", Map.of());
        live.put("counters", new LinkedHashMap<>(Map.of("bytes read", 1L << 40)));
        live.put("clients", List.of(Map.of("region_list", List.of(Map.of("address", "0x7f00")))));
        assertThat(StatusJson.write(live)).isEqualTo(JACKSON.writeValueAsString(live));
    }

    @Test
    void shouldWriteWhatJacksonWritesForRandomTrees() throws Exception
    {
        final Random random = new Random(SEED);
        for (int i = 0; i < 2_000; i++)
        {
            final Object tree = tree(random, 0);
            assertThat(StatusJson.write(tree)).as("seed %d tree %d", SEED, i).isEqualTo(JACKSON.writeValueAsString(tree));
        }
    }

    @Test
    void shouldLeaveATypeItDoesNotKnowToJackson()
    {
        assertThat(StatusJson.write(Map.of("ratio", 0.5))).isNull();
        assertThat(StatusJson.write(Map.of(1, "key not a string"))).isNull();
    }

    private static Object tree(final Random random, final int depth)
    {
        final int kind = depth > 3 ? 2 + random.nextInt(5) : random.nextInt(7);
        return switch (kind)
        {
            case 0 ->
            {
                final Map<String, Object> map = new LinkedHashMap<>();
                final int size = random.nextInt(4);
                for (int i = 0; i < size; i++)
                {
                    map.put(string(random), tree(random, depth + 1));
                }
                yield map;
            }
            case 1 ->
            {
                final List<Object> list = new ArrayList<>();
                final int size = random.nextInt(4);
                for (int i = 0; i < size; i++)
                {
                    list.add(tree(random, depth + 1));
                }
                yield list;
            }
            case 2 -> string(random);
            case 3 -> random.nextLong();
            case 4 -> random.nextInt();
            case 5 -> random.nextBoolean();
            default -> null;
        };
    }

    private static String string(final Random random)
    {
        final String alphabet = "ab \"\\/\n\t\r\b\f\u0000\u0001\u001f\u007f\u00e9\u4e2d:{}[],";
        final StringBuilder text = new StringBuilder();
        final int length = random.nextInt(8);
        for (int i = 0; i < length; i++)
        {
            text.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return text.toString();
    }
}
