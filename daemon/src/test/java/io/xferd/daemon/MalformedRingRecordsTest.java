package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

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
 * One daemon serves all tries of the property (jqwik has no per-try timeout: every wait here is bounded instead).
 */
class MalformedRingRecordsTest
{
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

    @BeforeContainer
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

    @AfterContainer
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

    @Provide
    Arbitrary<List<RogueRecord>> rogueRecords()
    {
        final Arbitrary<Integer> types = Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.just(RecordTypes.SUBMIT)),
            Tuple.of(1, Arbitraries.integers().between(1, Integer.MAX_VALUE)));
        final Arbitrary<Integer> lengths = Arbitraries.frequencyOf(
            Tuple.of(1, Arbitraries.integers().between(0, 15)),
            Tuple.of(2, Arbitraries.integers().between(16, SubmitRequestFlyweight.HEADER_LENGTH - 1)),
            Tuple.of(4, Arbitraries.integers().between(SubmitRequestFlyweight.HEADER_LENGTH,
                SubmitRequestFlyweight.MAX_LENGTH)),
            Tuple.of(1, Arbitraries.integers().between(SubmitRequestFlyweight.MAX_LENGTH + 1, 2048)));
        final Arbitrary<byte[]> bodies = Arbitraries.bytes().array(byte[].class).ofSize(2048);
        return Combinators.combine(Arbitraries.of(Credentials.class), types, lengths, bodies,
                Arbitraries.of(true, false))
            .as(RogueRecord::new)
            .list().ofMinSize(1).ofMaxSize(6);
    }

    @Property(tries = 200, shrinking = ShrinkingMode.BOUNDED)
    void shouldDropRecordsItCannotTrustAndKeepServingHonestClients(
        @ForAll("rogueRecords") final List<RogueRecord> records)
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
