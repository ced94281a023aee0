package io.xferd.daemon.agent;

/**
 * What a polling thread sleeps on after a long quiet spell, as io_uring's SQPOLL thread does with
 * IORING_SQ_NEED_WAKEUP: {@link #arm() arm} it (tell producers "I may sleep"), run one more duty cycle to look for
 * work that came before they could see that, and only then {@link #await(long) wait}. A producer that publishes
 * after arming sees the mark and wakes the thread; one that cannot (an older client) is served when the bounded
 * wait ends. Polling thread only, apart from wake-ups.
 */
public interface Doorbell
{
    /**
     * Mark every producer's doorbell asleep, with a full fence after the marks.
     *
     * @return false when the thread must not sleep now (work in flight elsewhere): nothing was marked.
     */
    boolean arm();

    /**
     * Block until a producer rings, a mark changed since {@link #arm()}, or {@code timeoutNs} passed.
     */
    void await(long timeoutNs);

    /**
     * Clear the marks: the thread polls again, so producers need not ring.
     */
    void disarm();
}
