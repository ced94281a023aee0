package io.xferd.daemon;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.ipc.SubmitBatchFlyweight;
import io.xferd.ipc.SubmitRequestFlyweight;
import io.xferd.ipc.SystemCounter;
import io.xferd.ipc.TransferStatus;
import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

import static io.xferd.daemon.SystemTests.WAIT;
import static io.xferd.daemon.SystemTests.counter;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every client writes only its own submit ring, so whatever a rogue client writes there can cost only itself: the
 * daemon cuts it off when its ring breaks the protocol, lets a half-written record stall only its author, never
 * throws or moves its head past the tail, and an honest client in another process keeps completing verified
 * transfers after every attack while the daemon's heartbeat advances.
 * <p>
 * Seeded cases (system property {@code xferd.fuzz.cases}, default 1200; {@code xferd.test.seed} to replay): each
 * is one rogue connection, one attack on its own ring, the expected outcome for it, then one honest round.
 */
@Tag("integration")
@Timeout(600)
class SubmitRingIsolationTest
{
    private static final int CASES = Integer.getInteger("xferd.fuzz.cases", 1200);
    private static final long SEED = Long.getLong("xferd.test.seed", 0x5EED_12L);
    private static final Duration REACTS_WITHIN = Duration.ofSeconds(10);

    private static Path directory;
    private static XferDaemon daemon;
    private static HonestWitness honest;
    private static int rogues;
    private static long clientsWithoutRogues = -1;

    /** What an attack must lead to. */
    enum Outcome
    {
        /** The rogue is disconnected and counted. */
        CUT_OFF,
        /** The rogue's ring stalls; it stays connected. */
        STALLS,
        /** Well framed: the request fails with a status; the rogue stays connected. */
        FAILS,
        /** Random bytes: cut off or stalled, whichever the bytes say; never anything worse. */
        EITHER
    }

    enum Attack
    {
        LENGTH_BEYOND_RING(Outcome.CUT_OFF),
        LENGTH_BELOW_HEADER(Outcome.CUT_OFF),
        UNKNOWN_TYPE(Outcome.CUT_OFF),
        SUBMIT_LENGTH_DISAGREES(Outcome.CUT_OFF),
        NEGATIVE_NOTIFY_LENGTH(Outcome.CUT_OFF),
        BATCH_COUNT_OUT_OF_RANGE(Outcome.CUT_OFF),
        BATCH_LENGTH_DISAGREES(Outcome.CUT_OFF),
        PADDING_NOT_TO_THE_END(Outcome.CUT_OFF),
        TAIL_BEYOND_CAPACITY(Outcome.CUT_OFF),
        TAIL_BEHIND_HEAD(Outcome.CUT_OFF),
        HALF_WRITTEN_RECORD(Outcome.STALLS),
        TAIL_NOT_COVERING(Outcome.STALLS),
        HEAD_FIELD_OVERWRITTEN(Outcome.STALLS),
        WELL_FRAMED_RANDOM_REQUEST(Outcome.FAILS),
        RANDOM_BYTES(Outcome.EITHER);

        final Outcome outcome;

        Attack(final Outcome outcome)
        {
            this.outcome = outcome;
        }
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
    void shouldCostOnlyTheRogueItsConnectionWhateverItWritesIntoItsOwnRing()
    {
        final Random random = new Random(SEED);
        final Attack[] attacks = Attack.values();
        final int[] tried = new int[attacks.length];
        for (int i = 0; i < CASES; i++)
        {
            final Attack attack = i < attacks.length ? attacks[i] : attacks[random.nextInt(attacks.length)];
            tried[attack.ordinal()]++;
            final long caseSeed = random.nextLong();
            try
            {
                attackAndCheck(attack, new Random(caseSeed));
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError("case " + i + " " + attack + " (seed " + caseSeed + ") " + ex.getMessage(), ex);
            }
        }
        for (final Attack attack : attacks)
        {
            assertThat(tried[attack.ordinal()]).as("tried " + attack).isPositive();
        }
        assertThat(counter(daemon, SystemCounter.CLIENTS_CUT_OFF)).isPositive();
        // an honest round is two requests (a WRITE, a batch READ); each was verified or the test failed already
        System.out.printf("submit-ring fuzz: %d cases, %d attacks tried %s, rogues cut off %d; honest requests %d " +
            "verified, lost 0 (seed %d)%n", CASES, attacks.length, java.util.Arrays.toString(tried),
            counter(daemon, SystemCounter.CLIENTS_CUT_OFF), 2 * honest.rounds(), SEED);
    }

    private static void attackAndCheck(final Attack attack, final Random random)
    {
        // a rogue whose garbage the daemon had not yet read when its case ended (RANDOM_BYTES) is cut off or closed
        // later: once the daemon has disconnected it, its counting is over, and this case's count starts clean
        if (clientsWithoutRogues < 0)
        {
            clientsWithoutRogues = liveClients();
        }
        SystemTests.awaitCondition(() -> liveClients() == clientsWithoutRogues, WAIT,
            () -> "the last rogue is still connected");
        final long cutOffBefore = counter(daemon, SystemCounter.CLIENTS_CUT_OFF);
        final long heartbeatBefore = honest.heartbeatMs();
        try (RawControlSession rogue = RawControlSession.hello(directory, "rogue-" + rogues++, WAIT))
        {
            final long requestId = write(attack, rogue, random);
            switch (attack.outcome)
            {
                case CUT_OFF ->
                {
                    assertThat(rogue.awaitClosedByDaemon(REACTS_WITHIN)).as("the rogue is cut off").isTrue();
                    SystemTests.awaitCondition(
                        () -> counter(daemon, SystemCounter.CLIENTS_CUT_OFF) == cutOffBefore + 1, WAIT,
                        () -> "counted once");
                    honest.assertRound();
                }
                case STALLS ->
                {
                    honest.assertRound(); // the intake visited the rogue's ring meanwhile
                    assertThat(rogue.isOpenedByDaemon()).as("a stalled ring costs nobody the connection").isTrue();
                    assertThat(counter(daemon, SystemCounter.CLIENTS_CUT_OFF)).isEqualTo(cutOffBefore);
                }
                case FAILS ->
                {
                    final long[] completion = rogue.awaitCompletion(requestId, REACTS_WITHIN);
                    assertThat(completion[0]).as("a request into memory it never registered fails")
                        .isNotEqualTo(TransferStatus.OK);
                    assertThat(completion[1]).isZero();
                    assertThat(rogue.isOpenedByDaemon()).isTrue();
                    honest.assertRound();
                }
                case EITHER ->
                {
                    honest.assertRound();
                    if (!rogue.isOpenedByDaemon())
                    {
                        SystemTests.awaitCondition(
                            () -> counter(daemon, SystemCounter.CLIENTS_CUT_OFF) == cutOffBefore + 1, WAIT,
                            () -> "a rogue closed by the daemon was cut off");
                    }
                }
            }
        }
        honest.assertHeartbeatAdvancesPast(heartbeatBefore);
    }


    private static long liveClients()
    {
        return counter(daemon, SystemCounter.CLIENTS_CONNECTED) - counter(daemon, SystemCounter.CLIENTS_DISCONNECTED);
    }

    /**
     * Write the attack into the rogue's own submit ring, raw.
     *
     * @return the request id of a well framed request, else 0.
     */
    private static long write(final Attack attack, final RawControlSession rogue, final Random random)
    {
        final UnsafeBuffer ring = rogue.submitRingBuffer();
        final int capacity = ring.capacity() - RingsFileDescriptor.TRAILER_LENGTH;
        final int tailIndex = capacity + RingsFileDescriptor.TAIL_OFFSET;
        final int headIndex = capacity + RingsFileDescriptor.HEAD_OFFSET;
        switch (attack)
        {
            case LENGTH_BEYOND_RING ->
                record(ring, RecordTypes.SUBMIT, capacity + 1 + random.nextInt(Integer.MAX_VALUE - capacity), 64);
            case LENGTH_BELOW_HEADER -> record(ring, RecordTypes.SUBMIT, 1 + random.nextInt(7), 8);
            case UNKNOWN_TYPE ->
            {
                int type;
                do
                {
                    type = random.nextInt();
                }
                while (type == RecordTypes.SUBMIT || type == RecordTypes.SUBMIT_BATCH || type == -1);
                record(ring, type, 8 + SubmitRequestFlyweight.HEADER_LENGTH, 8 + SubmitRequestFlyweight.HEADER_LENGTH);
            }
            case SUBMIT_LENGTH_DISAGREES ->
            {
                final int notify = random.nextInt(257);
                int length;
                do
                {
                    length = 8 + 16 + random.nextInt(600);
                }
                while (length == 8 + SubmitRequestFlyweight.HEADER_LENGTH + notify);
                ring.putInt(8 + SubmitRequestFlyweight.NOTIFY_LENGTH_OFFSET, notify);
                record(ring, RecordTypes.SUBMIT, length, Math.max(length, 8 + SubmitRequestFlyweight.HEADER_LENGTH));
            }
            case NEGATIVE_NOTIFY_LENGTH ->
            {
                ring.putInt(8 + SubmitRequestFlyweight.NOTIFY_LENGTH_OFFSET, -1 - random.nextInt(1 << 20));
                record(ring, RecordTypes.SUBMIT, 8 + SubmitRequestFlyweight.HEADER_LENGTH,
                    8 + SubmitRequestFlyweight.HEADER_LENGTH);
            }
            case BATCH_COUNT_OUT_OF_RANGE ->
            {
                final int count = random.nextBoolean() ? -random.nextInt(5) :
                    rogue.maxBatchEntries() + 1 + random.nextInt(100);
                ring.putInt(8 + SubmitBatchFlyweight.ENTRY_COUNT_OFFSET, count);
                ring.putInt(8 + SubmitBatchFlyweight.NOTIFY_LENGTH_OFFSET, 0);
                final int length = 8 + SubmitBatchFlyweight.HEADER_LENGTH + 24 * Math.max(0, Math.min(count, 1000));
                record(ring, RecordTypes.SUBMIT_BATCH, length, length);
            }
            case BATCH_LENGTH_DISAGREES ->
            {
                final int count = 1 + random.nextInt(50);
                ring.putInt(8 + SubmitBatchFlyweight.ENTRY_COUNT_OFFSET, count);
                ring.putInt(8 + SubmitBatchFlyweight.NOTIFY_LENGTH_OFFSET, 0);
                final int length = 8 + SubmitBatchFlyweight.HEADER_LENGTH + 24 * count + 1 + random.nextInt(23);
                record(ring, RecordTypes.SUBMIT_BATCH, length, length);
            }
            case PADDING_NOT_TO_THE_END ->
            {
                final int length = 8 + 8 * random.nextInt(capacity / 8 - 1);
                record(ring, -1, length, length);
            }
            case TAIL_BEYOND_CAPACITY -> ring.putLongRelease(tailIndex, capacity + 1 + (random.nextLong() >>> 2));
            case TAIL_BEHIND_HEAD -> ring.putLongRelease(tailIndex, -1 - (random.nextLong() >>> 2));
            case HALF_WRITTEN_RECORD ->
            {
                // a producer that died between claiming and committing: the length stays negative for ever
                ring.putInt(4, RecordTypes.SUBMIT);
                ring.putInt(0, -(8 + SubmitRequestFlyweight.HEADER_LENGTH));
                ring.putLongRelease(tailIndex, BitUtil.align(8 + SubmitRequestFlyweight.HEADER_LENGTH, 8));
            }
            case TAIL_NOT_COVERING ->
            {
                ring.putInt(4, RecordTypes.SUBMIT);
                ring.putIntRelease(0, 8 + SubmitRequestFlyweight.HEADER_LENGTH); // committed, tail never moved
            }
            case HEAD_FIELD_OVERWRITTEN ->
            {
                // the head in shared memory is only written by the daemon, never trusted back; then a record the
                // tail does not cover, so the ring stalls whatever the daemon made of the head
                ring.putLongRelease(headIndex, random.nextLong());
                ring.putInt(4, RecordTypes.SUBMIT);
                ring.putIntRelease(0, 8 + SubmitRequestFlyweight.HEADER_LENGTH);
            }
            case WELL_FRAMED_RANDOM_REQUEST ->
            {
                final int notify = random.nextInt(SubmitRequestFlyweight.MAX_NOTIFY_LENGTH + 1);
                final byte[] body = new byte[SubmitRequestFlyweight.HEADER_LENGTH + notify];
                random.nextBytes(body);
                final UnsafeBuffer bytes = new UnsafeBuffer(body);
                final SubmitRequestFlyweight request = new SubmitRequestFlyweight().wrap(bytes, 0);
                request.putNotify(body, SubmitRequestFlyweight.HEADER_LENGTH, notify);
                if (random.nextBoolean())
                {
                    // aimed at another client's segment: the rogue registered nothing to copy from or into
                    request.segmentHandle(rogue.segmentHandle() - 1 + random.nextInt(3))
                        .length(1 + random.nextInt(1 << 20));
                }
                assertThat(rogue.submitRing().write(RecordTypes.SUBMIT, bytes, 0, body.length)).isTrue();
                rogue.ringDoorbell();
                return request.requestId();
            }
            case RANDOM_BYTES ->
            {
                final byte[] garbage = new byte[8 + random.nextInt(4096)];
                random.nextBytes(garbage);
                ring.putBytes(0, garbage);
                ring.putLongRelease(tailIndex, random.nextInt(capacity + 1));
            }
        }
        return 0;
    }

    /**
     * A record header at index 0 and the tail covering {@code covered} bytes (whatever the length claims).
     */
    private static void record(final UnsafeBuffer ring, final int type, final int length, final int covered)
    {
        final int capacity = ring.capacity() - RingsFileDescriptor.TRAILER_LENGTH;
        ring.putLongRelease(capacity + RingsFileDescriptor.TAIL_OFFSET,
            Math.min(capacity, BitUtil.align(Math.max(8, covered), 8)));
        ring.putInt(4, type);
        ring.putIntRelease(0, length);
    }
}
