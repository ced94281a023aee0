package io.xferd.nativebindings.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_PD;

/**
 * A protection domain ({@code ibv_alloc_pd}): memory regions and queue pairs made in it may be used together.
 */
public final class ProtectionDomain implements AutoCloseable
{
    private final VerbsContext context;
    private final MemorySegment pd;
    private boolean closed;

    private ProtectionDomain(final VerbsContext context, final MemorySegment pd)
    {
        this.context = context;
        this.pd = pd;
    }

    static ProtectionDomain allocate(final VerbsContext context)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment pd = (MemorySegment)VerbsFunctions.ALLOC_PD.invokeExact(capture, context.pointer());
            return new ProtectionDomain(context, VerbsCalls.requireNonNull(
                pd, IBV_PD.byteSize(), capture, "ibv_alloc_pd", context.deviceName()));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * Registers a native segment ({@code ibv_reg_mr}); see {@link #register(long, long, int)}.
     */
    public MemoryRegion register(final MemorySegment memory, final int access)
    {
        return register(memory.address(), memory.byteSize(), access);
    }

    /**
     * Registers {@code length} bytes at virtual address {@code address} (host memory, or GPU memory where the
     * platform supports GPUDirect RDMA). As the header's {@code ibv_reg_mr} macro does, access flags within
     * {@link VerbsLayouts#IBV_ACCESS_OPTIONAL_RANGE} (e.g. relaxed ordering) go through {@code ibv_reg_mr_iova2}
     * with iova = address, and plain flags through the exported {@code ibv_reg_mr}.
     *
     * @param access {@code IBV_ACCESS_*} flags.
     */
    public MemoryRegion register(final long address, final long length, final int access)
    {
        return MemoryRegion.register(this, address, length, address, access);
    }

    /**
     * Registers {@code length} bytes at virtual address {@code address} so that work requests name them by
     * {@code iova} ({@code ibv_reg_mr_iova2}): a daemon registers a client's memory through its own mapping but
     * under the client's address, which is the address peers were told.
     *
     * @param iova the address local SGEs and remote work requests use for the first byte.
     */
    public MemoryRegion register(final long address, final long length, final long iova, final int access)
    {
        return MemoryRegion.register(this, address, length, iova, access);
    }

    /**
     * {@code ibv_create_qp} for a reliable-connected QP in this domain.
     */
    public QueuePair createQueuePair(
        final CompletionQueue sendCq, final CompletionQueue recvCq, final int maxSendWr, final int maxRecvWr,
        final int maxSge)
    {
        return QueuePair.create(this, sendCq, recvCq, maxSendWr, maxRecvWr, maxSge);
    }

    public VerbsContext context()
    {
        return context;
    }

    MemorySegment pointer()
    {
        return pd;
    }

    /**
     * {@code ibv_dealloc_pd}; idempotent. Fails (EBUSY) while regions or QPs of the domain exist.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final int rc = (int)VerbsFunctions.DEALLOC_PD.invokeExact(capture, pd);
            VerbsCalls.requireZero(rc, capture, "ibv_dealloc_pd", context.deviceName());
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }
}
