package io.xferd.daemon;

import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;

import static io.xferd.daemon.SystemTests.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded control frames against a real daemon: valid headers with random fields, random lengths, random string
 * lengths, truncated frames, random bytes, before and after HELLO. Each case is one connection; the daemon must
 * answer with a frame (ERROR for a bad request) or close that connection, never anything else, and after every
 * small batch of cases an honest client in another process completes a verified transfer (a WRITE and a batch
 * READ, compared byte for byte) and the daemon's heartbeat advances. A daemon that dies or an honest request that
 * is lost fails the test.
 * <p>
 * {@code -Dxferd.fuzz.cases=N} (default 5000), {@code -Dxferd.test.seed=N} to replay a run (a failure names the
 * case's seed).
 */
@Tag("integration")
@Timeout(600)
class ControlFrameFuzzTest
{
    private static final int CASES = Integer.getInteger("xferd.fuzz.cases", 5000);
    private static final long SEED = Long.getLong("xferd.test.seed", 0x5EED_F4A3EL);
    private static final int CASES_PER_ROUND = 10;
    private static final Duration REACTS_WITHIN = Duration.ofSeconds(10);
    private static final int[] REQUEST_TYPES = {ControlMessages.REGISTER_MEMORY, ControlMessages.UNREGISTER_MEMORY,
        ControlMessages.OPEN_SEGMENT, ControlMessages.REGISTER_GPU_MEMORY, ControlMessages.REGISTER_PROCESS_MEMORY};
    private static final int[] EDGE_INTS = {0, -1, 1, 7, 8, 9, 4095, 4096, 4097, 1023, 1024, 1025, Integer.MAX_VALUE,
        Integer.MIN_VALUE};

    private static Path directory;
    private static XferDaemon daemon;
    private static HonestWitness honest;
    private static int sessions;

    enum Attack
    {
        /** HELLO with a valid header and random version, pid, flags, reserved and name (random string length). */
        HELLO_RANDOM_FIELDS,
        /** A frame header with a random length (negative, under the header, over 4096, or lying about the body). */
        RANDOM_FRAME_LENGTH,
        /** A well-sized frame of a random type with a random body, as the first frame. */
        RANDOM_TYPE_FIRST,
        /** A valid frame cut short, then the connection closed. */
        TRUNCATED_FRAME,
        /** Random bytes, any number, as the first thing sent. */
        RANDOM_BYTES,
        /** After a valid HELLO: a known request type with random fields and random string lengths. */
        REQUEST_RANDOM_FIELDS_AFTER_HELLO,
        /** After a valid HELLO: a random type, or a second HELLO, with a random body. */
        RANDOM_TYPE_AFTER_HELLO,
        /** After a valid HELLO: random bytes. */
        RANDOM_BYTES_AFTER_HELLO
    }

    @BeforeAll
    static void startDaemonAndHonestClient()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        honest = HonestWitness.start(directory, WAIT);
    }

    @AfterAll
    static void stopEverything()
    {
        if (honest != null)
        {
            honest.close();
        }
        if (daemon != null)
        {
            daemon.close();
        }
        SystemTests.deleteRecursively(directory);
    }

    @Test
    void shouldAnswerOrDisconnectEveryHostileFrameAndLoseNoHonestRequest()
    {
        final Random random = new Random(SEED);
        final Attack[] attacks = Attack.values();
        final Map<Attack, Integer> tried = new EnumMap<>(Attack.class);
        final int[] outcomes = new int[2]; // answered, closed
        long heartbeatBefore = honest.heartbeatMs();
        for (int i = 0; i < CASES; i++)
        {
            final Attack attack = i < attacks.length ? attacks[i] : attacks[random.nextInt(attacks.length)];
            tried.merge(attack, 1, Integer::sum);
            final long caseSeed = random.nextLong();
            try
            {
                final int answer = attack(attack, new Random(caseSeed));
                if (answer != Integer.MIN_VALUE)
                {
                    outcomes[answer < 0 ? 1 : 0]++;
                }
                if ((i + 1) % CASES_PER_ROUND == 0 || i == CASES - 1)
                {
                    honest.assertRound();
                    honest.assertHeartbeatAdvancesPast(heartbeatBefore);
                    heartbeatBefore = honest.heartbeatMs();
                }
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError("case " + i + " " + attack + " (seed " + caseSeed + ") " + ex.getMessage(),
                    ex);
            }
        }
        for (final Attack attack : attacks)
        {
            assertThat(tried.getOrDefault(attack, 0)).as("tried " + attack).isPositive();
        }
        // an honest round is two requests (a WRITE, a batch READ); each was verified or the test failed already
        System.out.printf("control-frame fuzz: %d cases, %d attacks tried %s, answered %d, disconnected %d; " +
            "honest requests %d verified, lost 0 (seed %d)%n", CASES, tried.size(), tried, outcomes[0], outcomes[1],
            2 * honest.rounds(), SEED);
    }

    /**
     * @return the type of the daemon's answer, -1 when it closed the connection, MIN_VALUE when not waited for.
     */
    private static int attack(final Attack attack, final Random random)
    {
        try (RawControlSession session = attack.ordinal() >= Attack.REQUEST_RANDOM_FIELDS_AFTER_HELLO.ordinal() ?
            RawControlSession.hello(directory, "fuzz-" + ++sessions, WAIT) : RawControlSession.connect(directory))
        {
            final byte[] bytes = new byte[ControlFrame.MAX_FRAME_LENGTH];
            final ByteBuffer frame = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            final int length = switch (attack)
            {
                case HELLO_RANDOM_FIELDS -> hello(frame, random);
                case RANDOM_FRAME_LENGTH ->
                {
                    final int body = random.nextInt(64);
                    random.nextBytes(bytes);
                    frame.putInt(0, randomFrameLength(random, body + 8));
                    frame.putInt(4, random.nextBoolean() ? ControlMessages.HELLO : random.nextInt());
                    yield 8 + body;
                }
                case RANDOM_TYPE_FIRST, RANDOM_TYPE_AFTER_HELLO -> randomTypeFrame(frame, bytes, random);
                case TRUNCATED_FRAME ->
                {
                    final int whole = random.nextBoolean() ? hello(frame, random) : requestFrame(frame, random);
                    final int cut = random.nextInt(Math.max(1, whole - 1)) + 1;
                    session.sendRaw(bytes, Math.min(cut, whole - 1), REACTS_WITHIN);
                    yield -1; // closed at once: nothing to wait for
                }
                case RANDOM_BYTES, RANDOM_BYTES_AFTER_HELLO ->
                {
                    random.nextBytes(bytes);
                    yield 1 + random.nextInt(bytes.length);
                }
                case REQUEST_RANDOM_FIELDS_AFTER_HELLO -> requestFrame(frame, random);
            };
            if (length < 0)
            {
                return Integer.MIN_VALUE;
            }
            if (!session.sendRaw(bytes, length, REACTS_WITHIN))
            {
                return -1; // it was cut off before the whole frame went out
            }
            final int framed = frame.getInt(0);
            if (framed > length && framed <= ControlFrame.MAX_FRAME_LENGTH)
            {
                return Integer.MIN_VALUE; // the daemon waits for the rest: closing is this case's end
            }
            final int answer = session.awaitAnswerOrClose(REACTS_WITHIN);
            assertThat(answer).as("an answer frame or a closed connection")
                .isIn(-1, ControlMessages.OK, ControlMessages.ERROR, ControlMessages.WELCOME);
            return answer;
        }
    }

    private static int hello(final ByteBuffer frame, final Random random)
    {
        frame.putInt(4, ControlMessages.HELLO);
        frame.putInt(8, random.nextInt(4) == 0 ? ControlMessages.PROTOCOL_VERSION : randomInt(random));
        frame.putInt(12, randomInt(random));
        frame.putInt(16, random.nextInt(3) == 0 ? 0 : randomInt(random));
        frame.putInt(20, random.nextInt(3) == 0 ? 0 : randomInt(random));
        final int end = string(frame, 24, random);
        frame.putInt(0, random.nextInt(8) == 0 ? randomFrameLength(random, end) : end);
        return end;
    }

    private static int requestFrame(final ByteBuffer frame, final Random random)
    {
        final int type = REQUEST_TYPES[random.nextInt(REQUEST_TYPES.length)];
        frame.putInt(4, type);
        for (int offset = 8; offset < 8 + 112; offset += 8)
        {
            frame.putLong(offset, random.nextBoolean() ? random.nextLong() : random.nextInt(1 << 20));
        }
        final int stringAt = 8 + switch (type)
        {
            case ControlMessages.REGISTER_MEMORY -> ControlMessages.REGISTER_LOCATION;
            case ControlMessages.UNREGISTER_MEMORY -> -1;
            case ControlMessages.OPEN_SEGMENT -> ControlMessages.OPEN_SEGMENT_NAME;
            case ControlMessages.REGISTER_GPU_MEMORY -> ControlMessages.REGISTER_GPU_LOCATION;
            default -> ControlMessages.REGISTER_PROCESS_LOCATION;
        };
        final int end = stringAt < 8 ? 8 + 16 : string(frame, stringAt, random);
        frame.putInt(0, random.nextInt(8) == 0 ? randomFrameLength(random, end) : end);
        return end;
    }

    private static int randomTypeFrame(final ByteBuffer frame, final byte[] bytes, final Random random)
    {
        final int body = random.nextInt(ControlFrame.MAX_FRAME_LENGTH - 8);
        random.nextBytes(bytes);
        frame.putInt(0, 8 + body);
        frame.putInt(4, random.nextInt(4) == 0 ? ControlMessages.HELLO : random.nextInt(8) == 0 ?
            ControlMessages.WELCOME : random.nextBoolean() ? random.nextInt(200) - 50 : random.nextInt());
        return 8 + body;
    }

    /**
     * A string field at {@code at}: random length prefix (edge values, the truth, or random) and random or UTF-8
     * bytes.
     *
     * @return the end of the frame when the string is as long as its prefix says (bounded by the frame).
     */
    private static int string(final ByteBuffer frame, final int at, final Random random)
    {
        final int actual = random.nextInt(Math.min(1100, ControlFrame.MAX_FRAME_LENGTH - at - 4));
        final byte[] text = new byte[actual];
        if (random.nextBoolean())
        {
            random.nextBytes(text);
        }
        else
        {
            final byte[] utf8 = ("segment-" + Long.toHexString(random.nextLong()) + "/é漢").getBytes(
                StandardCharsets.UTF_8);
            for (int i = 0; i < actual; i++)
            {
                text[i] = utf8[i % utf8.length];
            }
        }
        frame.put(at + 4, text);
        final int claimed = random.nextInt(3) == 0 ? randomInt(random) : actual;
        frame.putInt(at, claimed);
        return at + 4 + actual;
    }

    private static int randomFrameLength(final Random random, final int actual)
    {
        return switch (random.nextInt(4))
        {
            case 0 -> EDGE_INTS[random.nextInt(EDGE_INTS.length)];
            case 1 -> actual + random.nextInt(17) - 8;
            case 2 -> random.nextInt();
            default -> random.nextInt(ControlFrame.MAX_FRAME_LENGTH * 2);
        };
    }

    private static int randomInt(final Random random)
    {
        return random.nextBoolean() ? EDGE_INTS[random.nextInt(EDGE_INTS.length)] : random.nextInt();
    }

}
