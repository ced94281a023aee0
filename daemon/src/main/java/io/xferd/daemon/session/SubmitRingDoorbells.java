package io.xferd.daemon.session;

import io.xferd.daemon.agent.Doorbell;
import io.xferd.ipc.RingsFileDescriptor;
import io.xferd.nativebindings.NativeException;
import io.xferd.nativebindings.libc.Futex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;

/**
 * The intake thread's {@link Doorbell}: the doorbell word of every connected client's submit ring
 * ({@link RingsFileDescriptor#SUBMIT_DOORBELL_OFFSET}) plus one of the daemon's own, waited on together with one
 * {@code futex_waitv}. A client that publishes while its word is marked asleep clears it and wakes the thread; the
 * daemon's own threads {@link #wake()} it when something else changes what intake must look at (a new client, whose
 * word was not marked yet). Arms only while {@code quiescent} says nothing is in flight (a remote request's completion
 * comes from elsewhere and rings no doorbell) and while every client fits one futex_waitv; and sleeps only while it
 * still says so after intake's look between arming and waiting.
 */
public final class SubmitRingDoorbells implements Doorbell
{
    private static final Logger LOG = LoggerFactory.getLogger(SubmitRingDoorbells.class);
    private static final VarHandle OWN_WORD = ValueLayout.JAVA_INT.varHandle();

    private final SessionTable sessions;
    private final BooleanSupplier quiescent;
    private final Wait wait;
    private final MemorySegment waiters;
    private final MemorySegment timespec;
    private final MemorySegment ownWord;
    private int count;
    private volatile boolean failed;
    private volatile boolean stopped;

    /**
     * @param quiescent true when nothing is in flight; intake thread.
     */
    public SubmitRingDoorbells(final SessionTable sessions, final BooleanSupplier quiescent)
    {
        this(sessions, quiescent, Futex::waitv);
    }

    /**
     * @param wait the blocking step (futex_waitv); a test's records whether the thread would sleep.
     */
    public SubmitRingDoorbells(final SessionTable sessions, final BooleanSupplier quiescent, final Wait wait)
    {
        this.sessions = sessions;
        this.quiescent = quiescent;
        this.wait = wait;
        final Arena arena = Arena.ofAuto();
        this.waiters = arena.allocate((long)Futex.WAITER_LENGTH * Futex.WAITV_MAX, 8);
        this.timespec = arena.allocate(16, 8);
        this.ownWord = arena.allocate(64, 64);
    }

    /**
     * Wake the intake thread if it sleeps; any thread of the daemon.
     */
    public void wake()
    {
        OWN_WORD.setVolatile(ownWord, 0L, 0); // an intake thread about to sleep on the old value returns at once
        Futex.wake(ownWord.address(), 1);
    }

    /**
     * Never sleep again, and wake the intake thread if it sleeps now: the daemon is closing. Any thread.
     */
    public void stop()
    {
        stopped = true;
        wake();
    }

    @Override
    public boolean arm()
    {
        if (failed || stopped || !quiescent.getAsBoolean())
        {
            return false;
        }
        int n = 0;
        // a volatile store, so that the session scan below cannot be ordered before it (a client that connects
        // meanwhile wakes this word)
        OWN_WORD.setVolatile(ownWord, 0L, RingsFileDescriptor.DOORBELL_ASLEEP);
        Futex.waiter(waiters, n++, ownWord.address(), RingsFileDescriptor.DOORBELL_ASLEEP);
        for (int slot = 0, slots = sessions.capacity(); slot < slots; slot++)
        {
            final ClientSession session = sessions.inSlot(slot);
            if (session == null || session.submitRing().isBroken() || !session.tryAcquire())
            {
                continue;
            }
            try
            {
                if (n == Futex.WAITV_MAX)
                {
                    n = -1; // more clients than one wait takes: keep polling
                    break;
                }
                session.submitRing().doorbell(RingsFileDescriptor.DOORBELL_ASLEEP);
                Futex.waiter(waiters, n++, session.submitRing().doorbellAddress(), RingsFileDescriptor.DOORBELL_ASLEEP);
            }
            finally
            {
                session.release();
            }
        }
        VarHandle.fullFence(); // the marks before intake's next look at the rings
        // a stop() between the first look and the mark above cleared the word before it was set: look again
        if (n < 0 || stopped)
        {
            disarm();
            return false;
        }
        count = n;
        return true;
    }

    @Override
    public void await(final long timeoutNs)
    {
        // intake's look after arming may have left what rings nothing when it becomes runnable: a SUBMIT_BATCH its
        // client published before it saw the mark, waiting in its ring for a batch tracker a TCP completion gives back.
        // Asleep, it would wait out the whole sleep; the next idle arms again (refused now) and parks instead
        if (!quiescent.getAsBoolean())
        {
            return;
        }
        try
        {
            // a word a client cleared (or a ring unmapped since) returns at once; the next idle arms again
            wait.waitv(waiters, count, System.nanoTime() + timeoutNs, timespec);
        }
        catch (final NativeException ex)
        {
            failed = true; // e.g. ENOSYS before Linux 5.16: the idle strategy dozes instead
            LOG.warn("the data plane cannot sleep on its clients' doorbells ({}): it keeps polling", ex.getMessage());
        }
    }

    @Override
    public void disarm()
    {
        ownWord.set(ValueLayout.JAVA_INT, 0, 0);
        for (int slot = 0, slots = sessions.capacity(); slot < slots; slot++)
        {
            final ClientSession session = sessions.inSlot(slot);
            if (session != null && !session.submitRing().isBroken() && session.tryAcquire())
            {
                try
                {
                    session.submitRing().doorbell(0);
                }
                finally
                {
                    session.release();
                }
            }
        }
    }

    /**
     * Block on the first {@code count} words of {@code waiters} until one is woken or changed, or the deadline
     * ({@link Futex#waitv}).
     */
    @FunctionalInterface
    public interface Wait
    {
        void waitv(MemorySegment waiters, int count, long deadlineNanos, MemorySegment timespec);
    }
}
