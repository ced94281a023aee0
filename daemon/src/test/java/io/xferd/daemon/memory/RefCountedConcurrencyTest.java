package io.xferd.daemon.memory;

import io.xferd.daemon.control.SessionRegions;
import io.xferd.daemon.control.TestClient;
import io.xferd.daemon.session.ClientSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock-free heart of memory safety under real threads: the conductor publishes and retires regions (copy-on-write
 * {@link RegionTable} in a volatile field, {@link RefCounted#markClosed()}, free once {@link RefCounted#isReclaimable()})
 * while data-plane threads look regions up and borrow them, exactly as {@code TransferWorker} does. Bounded rounds,
 * seeded ({@code -Dxferd.test.seed=N}), no sleeps; every violation is collected and named.
 * <p>
 * What must hold: a region is never freed while borrowed; a borrow after close fails; each region is freed exactly
 * once and stays reclaimable after; a lookup never sees a half-built table.
 */
@Timeout(60)
class RefCountedConcurrencyTest
{
    private static final long SEED = Long.getLong("xferd.test.seed", 0x5EED_11L);
    private static final long BASE = 0x7f00_0000_0000L;
    private static final long STRIDE = 1 << 20;
    private static final int STABLE = 4;

    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();

    private static final class Borrowable extends RefCounted
    {
    }

    /**
     * Many short rounds, each a fresh object with three borrowers racing one closer: whichever interleaving the
     * scheduler picks, the closer frees once, after every successful borrow was given back, and no borrow that
     * started after the close succeeds.
     */
    @Test
    void shouldNeverFreeWhileBorrowedAndRefuseEveryBorrowAfterClose() throws Exception
    {
        final int rounds = 2_000;
        final int borrowers = 3;
        final Borrowable[] objects = new Borrowable[rounds];
        final AtomicIntegerArray freed = new AtomicIntegerArray(rounds);
        final AtomicIntegerArray frees = new AtomicIntegerArray(rounds);
        for (int i = 0; i < rounds; i++)
        {
            objects[i] = new Borrowable();
        }
        final CyclicBarrier start = new CyclicBarrier(borrowers + 1);
        final List<Thread> threads = new ArrayList<>();
        for (int b = 0; b < borrowers; b++)
        {
            final Random random = new Random(SEED + b);
            threads.add(Thread.ofPlatform().name("borrower-" + b).start(() ->
            {
                for (int round = 0; round < rounds; round++)
                {
                    await(start);
                    final Borrowable object = objects[round];
                    for (int attempt = 0; attempt < 64; attempt++)
                    {
                        final boolean closedBefore = object.isClosed();
                        if (!object.tryAcquire())
                        {
                            continue;
                        }
                        if (closedBefore)
                        {
                            violations.add("round " + round + ": a borrow after close succeeded");
                        }
                        spin(random.nextInt(20));
                        if (freed.get(round) != 0)
                        {
                            violations.add("round " + round + ": freed while borrowed");
                        }
                        object.release();
                    }
                }
            }));
        }
        final Random random = new Random(SEED);
        for (int round = 0; round < rounds; round++)
        {
            await(start);
            final Borrowable object = objects[round];
            spin(random.nextInt(200));
            object.markClosed();
            object.markClosed(); // idempotent
            while (!object.isReclaimable())
            {
                Thread.onSpinWait(); // every borrower gives back within a bounded number of attempts
            }
            freed.set(round, 1);
            frees.incrementAndGet(round);
        }
        for (final Thread thread : threads)
        {
            assertThat(thread.join(java.time.Duration.ofSeconds(30))).isTrue();
        }

        assertThat(violations).as("seed " + SEED).isEmpty();
        for (int round = 0; round < rounds; round++)
        {
            assertThat(frees.get(round)).as("round %d freed once", round).isEqualTo(1);
            assertThat(objects[round].isReclaimable()).as("round %d stays reclaimable", round).isTrue();
            assertThat(objects[round].tryAcquire()).isFalse();
        }
    }

    /**
     * The conductor's whole protocol against the data plane's: the conductor adds a region to a segment's table,
     * removes it (a new table without it, then close), and frees it once reclaimable; readers take whatever table
     * is current, check it is whole, find regions in it and borrow them for a "copy".
     */
    @Test
    void shouldNeverFreeARegionAReaderBorrowedFromAnyTableItCouldSee() throws Exception
    {
        final int retired = 20_000;
        final int readers = 3;
        final ClientSession session = new TestClient(0, "seg", 4096).session;
        final Region[] regions = new Region[STABLE + retired];
        final AtomicIntegerArray freed = new AtomicIntegerArray(regions.length);
        final AtomicIntegerArray frees = new AtomicIntegerArray(regions.length);
        RegionTable table = RegionTable.EMPTY;
        for (int i = 0; i < STABLE; i++)
        {
            regions[i] = region(i);
            table = table.with(regions[i]);
        }
        SessionRegions.set(session, table);
        final AtomicBoolean done = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        final long[] borrows = new long[readers];
        for (int r = 0; r < readers; r++)
        {
            final int reader = r;
            final Random random = new Random(SEED + 100 + r);
            threads.add(Thread.ofPlatform().name("reader-" + r).start(() ->
            {
                while (!done.get())
                {
                    final RegionTable seen = session.regions();
                    checkWhole(seen);
                    final Region stable = regions[random.nextInt(STABLE)];
                    if (seen.find(stable.ownerAddress() + 8, 64) != stable)
                    {
                        violations.add("a region that was never removed was not found");
                    }
                    final Region candidate = seen.get(random.nextInt(seen.size()));
                    final Region found = seen.find(candidate.ownerAddress(), candidate.length());
                    if (found != candidate)
                    {
                        violations.add("lookup of " + candidate + " found " + found);
                        continue;
                    }
                    if (found.tryAcquire())
                    {
                        final int id = idOf(found);
                        if (freed.get(id) != 0)
                        {
                            violations.add(found + " borrowed after it was freed");
                        }
                        spin(random.nextInt(10));
                        if (freed.get(id) != 0)
                        {
                            violations.add(found + " freed while borrowed");
                        }
                        found.release();
                        borrows[reader]++;
                    }
                }
            }));
        }

        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (int i = STABLE; i < regions.length && violations.isEmpty(); i++)
        {
            final Region region = region(i);
            regions[i] = region;
            SessionRegions.set(session, session.regions().with(region));
            SessionRegions.set(session, session.regions().without(region));
            region.markClosed();
            while (!region.isReclaimable())
            {
                assertThat(System.nanoTime()).as("a borrower gives back a region").isLessThan(deadline);
                Thread.onSpinWait();
            }
            freed.set(i, 1);
            frees.incrementAndGet(i);
        }
        done.set(true);
        for (final Thread thread : threads)
        {
            assertThat(thread.join(java.time.Duration.ofSeconds(30))).isTrue();
        }

        assertThat(violations).as("seed " + SEED).isEmpty();
        assertThat(session.regions().size()).isEqualTo(STABLE);
        long totalBorrows = 0;
        for (final long b : borrows)
        {
            totalBorrows += b;
        }
        assertThat(totalBorrows).as("the readers really borrowed").isPositive();
        for (int i = STABLE; i < regions.length; i++)
        {
            assertThat(frees.get(i)).as("region %d freed once", i).isEqualTo(1);
            assertThat(regions[i].isReclaimable()).isTrue();
        }
        for (int i = 0; i < STABLE; i++)
        {
            assertThat(regions[i].isClosed()).isFalse();
        }
    }

    /**
     * Single-threaded edges of the state word.
     */
    @Test
    void shouldCountBorrowersAndBecomeReclaimableOnlyWhenClosedAndEmpty()
    {
        final Borrowable object = new Borrowable();
        assertThat(object.isReclaimable()).as("open, nobody borrowing").isFalse();
        assertThat(object.tryAcquire()).isTrue();
        assertThat(object.tryAcquire()).isTrue();
        object.markClosed();
        assertThat(object.isClosed()).isTrue();
        assertThat(object.tryAcquire()).isFalse();
        object.release();
        assertThat(object.isReclaimable()).as("one borrower left").isFalse();
        object.release();
        assertThat(object.isReclaimable()).isTrue();
        object.markClosed();
        assertThat(object.isReclaimable()).isTrue();
    }

    private void checkWhole(final RegionTable table)
    {
        if (table.size() < STABLE || table.size() > STABLE + 1)
        {
            violations.add("a table of " + table.size() + " regions");
            return;
        }
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < table.size(); i++)
        {
            final Region region = table.get(i);
            if (region == null || region.ownerAddress() <= previous)
            {
                violations.add("a table not whole or not sorted at index " + i);
                return;
            }
            previous = region.ownerAddress();
        }
    }

    private static Region region(final int id)
    {
        return new Region(BASE + id * STRIDE, 4096, "cpu:0", MemorySegment.NULL, MemorySegment.NULL);
    }

    private static int idOf(final Region region)
    {
        return (int)((region.ownerAddress() - BASE) / STRIDE);
    }

    private static void spin(final int iterations)
    {
        for (int i = 0; i < iterations; i++)
        {
            Thread.onSpinWait();
        }
    }

    private static void await(final CyclicBarrier barrier)
    {
        try
        {
            barrier.await(30, TimeUnit.SECONDS);
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
