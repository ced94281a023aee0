package io.xferd.daemon.agent;

/**
 * How the data plane is laid on threads.
 */
public enum ThreadingMode
{
    /**
     * One thread runs intake and transfers (Aeron's SHARED): right for small hosts, where a second spinning
     * thread only steals the core the clients need.
     */
    SHARED,
    /**
     * Intake and each transfer worker on their own thread: for hosts with cores to spare, with a spinning
     * idle strategy for the lowest latency.
     */
    DEDICATED
}
