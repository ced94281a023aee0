package io.xferd.daemon.transport.rdma;

import java.lang.foreign.MemorySegment;

/**
 * The seam between the RDMA transport's logic and the verbs calls: one opened device (its protection domain and
 * completion queue) as the transport uses it. {@link VerbsRdmaDevice} is the implementation on libibverbs; tests
 * use a simulated fabric. One thread (the {@link RdmaAgent}'s) posts and polls; registration and QP set-up are
 * control-plane calls from other threads.
 */
public interface RdmaDevice extends AutoCloseable
{
    /** {@code IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ}. */
    int ACCESS = 1 | 1 << 1 | 1 << 2;

    /**
     * @return the device name as {@code device_name} lists it (e.g. {@code mlx5_0}).
     */
    String name();

    /**
     * Register {@code mapping} (the daemon's view of a client's region) so that work requests name its bytes by
     * the owner's address: byte {@code i} of the mapping is {@code iova + i} for both keys.
     *
     * @throws RuntimeException when the device refuses the registration.
     */
    RdmaMemoryKeys register(MemorySegment mapping, long iova);

    /**
     * A new reliable-connected QP on this device's protection domain and completion queue, in RESET.
     *
     * @param maxOutstanding send work requests it must hold at once.
     */
    RdmaQueuePair createQueuePair(int maxOutstanding);

    /**
     * Poll this device's completion queue once, handing each completion to {@code handler}. Allocation-free.
     *
     * @return how many completions were handled.
     */
    int poll(CompletionHandler handler);

    @Override
    void close();
}
