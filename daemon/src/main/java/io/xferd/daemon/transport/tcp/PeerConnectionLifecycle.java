package io.xferd.daemon.transport.tcp;

/**
 * The decisions of one pooled connection to a peer, apart from its socket and threads: when it may connect, how
 * long it backs off after a failed attempt, when its peer has owed an answer for too long, and which channel is the
 * current one. {@link PeerConnection} does the I/O and reports each event here; tests drive the same events and move
 * time by hand.
 * <pre>
 *   IDLE --connecting--&gt; CONNECTING --handshaking--&gt; HANDSHAKING --ready--&gt; READY
 *   CONNECTING, HANDSHAKING --connectFailed--&gt; BACKING_OFF --(back-off ends)--&gt; may connect again
 *   CONNECTING, HANDSHAKING, READY --broken, or expire past the timeout--&gt; IDLE (may connect at once)
 *   any --close--&gt; CLOSED (for good)
 * </pre>
 * A broken connection may be re-opened at once (the path's pause already steers new slices to other paths); a
 * failed attempt waits 100 ms, doubling up to 1 s, and a handshake that succeeds resets that back-off. The peer owes
 * an answer from the start of a connect, and while slices are in flight from the oldest unanswered one; it has timed
 * out only strictly after {@code timeoutNs}.
 * <p>
 * Thread safety: transitions are synchronized (rare: connects and breaks); the channel and the waiting time are
 * volatile, read and written per slice without a lock.
 *
 * @param <C> the connection's channel, compared by identity: a thread that worked with one learns here that it is
 *            no longer current.
 */
final class PeerConnectionLifecycle<C>
{
    enum State
    {
        IDLE, CONNECTING, HANDSHAKING, READY, BACKING_OFF, CLOSED
    }

    static final long MIN_RECONNECT_DELAY_NS = 100_000_000L;
    static final long MAX_RECONNECT_DELAY_NS = 1_000_000_000L;

    private final long timeoutNs;
    private volatile State state = State.IDLE;
    private volatile C channel;
    // since when the peer owes an answer (a connect, a handshake, the oldest slice in flight); 0 when it owes none
    private volatile long waitingSinceNs;
    private long reconnectAfterNs;
    private long reconnectDelayNs = MIN_RECONNECT_DELAY_NS;

    /**
     * @param timeoutNs how long the peer may owe an answer before the connection is given up.
     */
    PeerConnectionLifecycle(final long timeoutNs)
    {
        this.timeoutNs = timeoutNs;
    }

    /**
     * @return the channel of the connection being opened or open, or null when there is none.
     */
    C channel()
    {
        return channel;
    }

    State state()
    {
        return state;
    }

    /**
     * @return true when a connect may start now: idle, or backing off and the back-off has ended.
     */
    synchronized boolean mayConnect(final long nowNs)
    {
        return state == State.IDLE || (state == State.BACKING_OFF && nowNs >= reconnectAfterNs);
    }

    /**
     * A connect to the peer starts on {@code fresh}; the peer owes an answer from {@code nowNs}.
     *
     * @return false when it may not ({@link #mayConnect} is false): {@code fresh} is not used.
     */
    synchronized boolean connecting(final C fresh, final long nowNs)
    {
        if (!mayConnect(nowNs))
        {
            return false;
        }
        state = State.CONNECTING;
        waitingSinceNs = nowNs;
        channel = fresh;
        return true;
    }

    /**
     * The socket connected; the handshake starts (under the same deadline).
     *
     * @return false when {@code which} was given up meanwhile (broken, timed out, closed).
     */
    synchronized boolean handshaking(final C which)
    {
        if (state != State.CONNECTING || channel != which)
        {
            return false;
        }
        state = State.HANDSHAKING;
        return true;
    }

    /**
     * The handshake passed: slices may be sent on {@code which}, and the next failed attempt backs off from the
     * shortest delay again.
     *
     * @return false when {@code which} was given up meanwhile.
     */
    synchronized boolean ready(final C which)
    {
        if (state != State.HANDSHAKING || channel != which)
        {
            return false;
        }
        state = State.READY;
        waitingSinceNs = 0;
        reconnectDelayNs = MIN_RECONNECT_DELAY_NS;
        return true;
    }

    /**
     * The attempt failed: back off from {@code nowNs} (when it failed: a connect can take the whole timeout), twice
     * as long as the last time, up to the longest delay.
     */
    synchronized void connectFailed(final long nowNs)
    {
        if (state == State.CLOSED)
        {
            return;
        }
        state = State.BACKING_OFF;
        channel = null;
        waitingSinceNs = 0;
        reconnectAfterNs = nowNs + reconnectDelayNs;
        reconnectDelayNs = Math.min(MAX_RECONNECT_DELAY_NS, reconnectDelayNs * 2);
    }

    /**
     * The peer owes an answer from {@code sinceNs} (the first slice went in flight, or the next-oldest one is now the
     * oldest), or none when it is 0. Per slice: no lock.
     */
    void waitingSince(final long sinceNs)
    {
        waitingSinceNs = sinceNs;
    }

    /**
     * {@code which} broke (a failed read or write).
     *
     * @return true for the one caller that gave it up (who closes it and fails its slices); false when it was not
     * current any more.
     */
    synchronized boolean broken(final C which)
    {
        if (which == null || channel != which)
        {
            return false;
        }
        giveUp(State.IDLE);
        return true;
    }

    /**
     * The watchdog's tick: give the current channel up when its peer has owed an answer for more than the timeout.
     *
     * @return the channel given up (the caller closes it and fails its slices), or null.
     */
    synchronized C expire(final long nowNs)
    {
        final C current = channel;
        final long since = waitingSinceNs;
        if (current == null || since == 0 || nowNs - since <= timeoutNs)
        {
            return null;
        }
        giveUp(State.IDLE);
        return current;
    }

    /**
     * For good: nothing connects again.
     *
     * @return the channel that was current (the caller closes it and fails its slices), or null.
     */
    synchronized C close()
    {
        final C current = channel;
        giveUp(State.CLOSED);
        return current;
    }

    private void giveUp(final State next)
    {
        state = next;
        channel = null;
        waitingSinceNs = 0;
        reconnectAfterNs = 0;
    }
}
