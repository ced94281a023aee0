package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.awaitCounter;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Anyone who can map the cnc file can write anything into the to-daemon ring. A rogue client that connected
 * normally (so it holds a slot and a session token) writes records of random type, length and content, some
 * under its own credentials, some forged: the daemon drops every record it cannot trust and counts it, cuts the
 * rogue off when a record under its own credentials is malformed, never lets a rogue record touch another
 * client's memory, and an honest client of the same daemon keeps completing verified transfers.
 * <p>
 * One daemon serves all tries of the property (every wait here is bounded). The tries come from a seeded
 * generator: a failure names its seed and try, and {@code -Dxferd.test.seed=N} replays that run.
 */
@Tag("integration")
class MalformedRingRecordsTest
{
    private static final long SEED = Long.getLong("xferd.test.seed", 0xBAD_5EEDL);
    private static final int TRIES = 200;
    private static final int KIB = 1024;
    private static final int HONEST_SIZE = 64 * KIB;
    private static final long CANARY_SEED = 0xCA7A_27L;
    private static final Duration DAEMON_REACTS_WITHIN = Duration.ofSeconds(10);

    private static Path directory;
    private static XferDaemon daemon;
    private static XferClient honest;
    private static SharedBuffer honestBuffer;
    private static MappedByteBuffer cncMapping;
    private static ManyToOneRingBuffer toDaemon;
    private static int rogues;
    private static long honestSeed;

    /**
     * Whose credentials a rogue record carries in its first 16 bytes (slot at 0, session token at 8).
     */
    enum Credentials
    {
        /** None: the record's random bytes as they are. */
        RANDOM,
        /** The rogue's own slot and token: the daemon knows who wrote it. */
        OWN,
        /** The rogue's slot with a wrong token. */
        FORGED_TOKEN,
        /** The honest client's slot with a guessed token. */
        HONEST_SLOT_GUESSED_TOKEN
    }

    /**
     * @param wellFormed when true (and the credentials are the rogue's own), header lengths are made consistent
     *                   so the record passes intake as a SUBMIT of random fields aimed at the honest client.
     */
    record RogueRecord(Credentials credentials, int type, int length, byte[] body, boolean wellFormed)
    {
        @Override
        public String toString()
        {
            return credentials + " type " + type + " length " + length + (wellFormed ? " well-formed" : "");
        }
    }

    @BeforeAll
    static void startDaemonAndHonestClient()
    {
        directory = SystemTests.newDaemonDirectory();
        daemon = XferDaemon.launch(SystemTests.daemonContext(directory));
        honest = XferClient.connect(SystemTests.clientContext(directory, "honest"));
        honestBuffer = honest.allocateMemory(HONEST_SIZE);
        honest.registerMemory(honestBuffer, "cpu:0");
        SystemTests.fill(honestBuffer.segment().asSlice(0, 16 * KIB), CANARY_SEED);
        cncMapping = IoUtil.mapExistingFile(directory.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc");
        toDaemon = new ManyToOneRingBuffer(CncFileDescriptor.toDaemonBuffer(new UnsafeBuffer(cncMapping)));
    }

    @AfterAll
    static void stopDaemon()
    {
        if (cncMapping != null)
        {
            IoUtil.unmap(cncMapping);
        }
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

    /**
     * 1 to 6 records, each of random credentials, type (mostly SUBMIT), length (mostly a SUBMIT's, some too short
     * for credentials or a header, some too long), 2 KiB of random bytes, and well-formed or not.
     */
    private static List<RogueRecord> rogueRecords(final Random random)
    {
        final int count = 1 + random.nextInt(6);
        final List<RogueRecord> records = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final Credentials credentials = Credentials.values()[random.nextInt(Credentials.values().length)];
            final int type = random.nextInt(4) < 3 ? RecordTypes.SUBMIT : between(random, 1, Integer.MAX_VALUE);
            final int lengthKind = random.nextInt(8);
            final int length;
            if (lengthKind < 1)
            {
                length = between(random, 0, 15);
            }
            else if (lengthKind < 3)
            {
                length = between(random, 16, SubmitRequestFlyweight.HEADER_LENGTH - 1);
            }
            else if (lengthKind < 7)
            {
                length = between(random, SubmitRequestFlyweight.HEADER_LENGTH, SubmitRequestFlyweight.MAX_LENGTH);
            }
            else
            {
                length = between(random, SubmitRequestFlyweight.MAX_LENGTH + 1, 2048);
            }
            final byte[] body = new byte[2048];
            random.nextBytes(body);
            records.add(new RogueRecord(credentials, type, length, body, random.nextBoolean()));
        }
        return records;
    }

    /**
     * A value in [min, max], one of the two ends a quarter of the time: the boundaries are where bugs live.
     */
    private static int between(final Random random, final int min, final int max)
    {
        return switch (random.nextInt(8))
        {
            case 0 -> min;
            case 1 -> max;
            default -> (int)random.nextLong(min, (long)max + 1);
        };
    }

    @Test
    void shouldDropRecordsItCannotTrustAndKeepServingHonestClients()
    {
        final Random random = new Random(SEED);
        for (int i = 0; i < TRIES; i++)
        {
            final List<RogueRecord> records = rogueRecords(random);
            try
            {
                shouldDropRecordsItCannotTrustAndKeepServingHonestClients(records);
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError("try " + i + " of seed " + SEED + ": " + records, ex);
            }
        }
    }

    private void shouldDropRecordsItCannotTrustAndKeepServingHonestClients(final List<RogueRecord> records)
    {
        final long connected = counter(daemon, SystemCounter.CLIENTS_CONNECTED);
        final long disconnected = counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);
        try (RawControlSession rogue = RawControlSession.hello(directory, "rogue-" + rogues++, WAIT))
        {
            awaitCounter(daemon, SystemCounter.CLIENTS_CONNECTED, n -> n == connected + 1, "the rogue is welcome");
            final long malformedBefore = counter(daemon, SystemCounter.MALFORMED_RECORDS);
            final long submittedBefore = counter(daemon, SystemCounter.REQUESTS_SUBMITTED);

            int certainlyMalformed = 0;
            int certainlySubmitted = 0;
            int uncertain = 0;
            boolean cutOff = false;
            for (final RogueRecord record : records)
            {
                final Written written = write(rogue, record);
                if (!written.ownCredentials())
                {
                    certainlyMalformed++;
                }
                else if (!written.wellFormedSubmit())
                {
                    // malformed whether or not the rogue is still registered
                    certainlyMalformed++;
                    cutOff = true;
                }
                else if (cutOff)
                {
                    // taken if the daemon has not removed the rogue yet, else dropped as unattributable
                    uncertain++;
                }
                else
                {
                    certainlySubmitted++;
                }
            }
            SystemTests.awaitCondition(() -> toDaemon.consumerPosition() == toDaemon.producerPosition(),
                DAEMON_REACTS_WITHIN, () -> "the daemon reads every rogue record");

            final long malformed = counter(daemon, SystemCounter.MALFORMED_RECORDS) - malformedBefore;
            final long submitted = counter(daemon, SystemCounter.REQUESTS_SUBMITTED) - submittedBefore;
            assertThat(malformed).isBetween((long)certainlyMalformed, (long)certainlyMalformed + uncertain);
            assertThat(submitted).isBetween((long)certainlySubmitted, (long)certainlySubmitted + uncertain);
            if (cutOff)
            {
                assertThat(rogue.awaitClosedByDaemon(DAEMON_REACTS_WITHIN))
                    .as("the daemon cuts off a client that wrote a malformed record under its own token").isTrue();
            }
            else
            {
                assertThat(rogue.isOpenedByDaemon()).as("records without its token do not cost it the connection")
                    .isTrue();
            }
        }
        awaitCounter(daemon, SystemCounter.CLIENTS_DISCONNECTED, n -> n == disconnected + 1, "the rogue is gone");

        assertTheHonestClientIsServed();
    }

    /**
     * What a record written into the ring is, by the daemon's rules.
     *
     * @param ownCredentials   it carries the rogue's slot and token.
     * @param wellFormedSubmit a SUBMIT whose lengths agree: intake takes it as a request.
     */
    record Written(boolean ownCredentials, boolean wellFormedSubmit)
    {
    }

    private static Written write(final RawControlSession rogue, final RogueRecord record)
    {
        final UnsafeBuffer body = new UnsafeBuffer(record.body().clone());
        final int length = record.length();
        if (length >= 16)
        {
            switch (record.credentials())
            {
                case OWN -> credentials(body, rogue.slot(), rogue.sessionToken());
                case FORGED_TOKEN -> credentials(body, rogue.slot(), ~rogue.sessionToken());
                case HONEST_SLOT_GUESSED_TOKEN -> credentials(body, 0, body.getLong(8) | 1);
                case RANDOM -> { }
            }
        }
        final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(body, 0);
        if (record.wellFormed() && length >= SubmitRequestFlyweight.HEADER_LENGTH &&
            length <= SubmitRequestFlyweight.MAX_LENGTH)
        {
            request.putNotify(record.body(), 0, length - SubmitRequestFlyweight.HEADER_LENGTH);
            request.segmentHandle(honest.ownSegment());
            if ((record.body()[1] & 1) == 0)
            {
                // aim inside the honest client's memory, with a length that fits
                request.targetAddress(honestBuffer.address()).length(4 * KIB);
            }
        }
        assertThat(toDaemon.write(record.type(), body, 0, length)).as("ring has room").isTrue();

        final boolean own = length >= 16 && body.getInt(0) == rogue.slot() &&
            body.getLong(8) == rogue.sessionToken();
        final boolean wellFormed = record.type() == RecordTypes.SUBMIT &&
            length >= SubmitRequestFlyweight.HEADER_LENGTH &&
            request.notifyLength() >= 0 && request.notifyLength() <= SubmitRequestFlyweight.MAX_NOTIFY_LENGTH &&
            SubmitRequestFlyweight.recordLength(request.notifyLength()) == length;
        return new Written(own, wellFormed);
    }

    private static void credentials(final UnsafeBuffer body, final int slot, final long token)
    {
        body.putInt(SubmitRequestFlyweight.CLIENT_SLOT_OFFSET, slot);
        body.putLong(SubmitRequestFlyweight.SESSION_TOKEN_OFFSET, token);
    }

    private static void assertTheHonestClientIsServed()
    {
        final long seed = ++honestSeed;
        final int block = 4 * KIB;
        final SharedBuffer buffer = honestBuffer;
        SystemTests.fill(buffer.segment().asSlice(16 * KIB, block), seed);
        final long batch = honest.allocateBatch(2);
        honest.submitTransfer(batch, TransferRequest.write(buffer.address() + 16 * KIB, honest.ownSegment(),
            buffer.address() + 32 * KIB, block));
        honest.submitTransfer(batch, TransferRequest.read(buffer.address() + 48 * KIB, honest.ownSegment(),
            buffer.address() + 16 * KIB, block));
        assertThat(honest.awaitBatch(batch, WAIT.toMillis())).as("the honest client's requests complete").isTrue();
        honest.freeBatch(batch);

        final byte[] expected = SystemTests.randomBytes(seed, block);
        assertThat(SystemTests.firstMismatch(buffer.segment(), 32 * KIB, expected, 0, block)).isEqualTo(-1);
        assertThat(SystemTests.firstMismatch(buffer.segment(), 48 * KIB, expected, 0, block)).isEqualTo(-1);
        assertThat(SystemTests.firstMismatch(buffer.segment(), 0, SystemTests.randomBytes(CANARY_SEED, 16 * KIB),
            0, 16 * KIB)).as("no rogue record wrote into the honest client's memory").isEqualTo(-1);
        assertThat(honest.isDaemonGone()).isFalse();
    }
}
