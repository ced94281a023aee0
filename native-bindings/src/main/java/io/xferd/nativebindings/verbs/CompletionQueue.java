package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static io.xferd.nativebindings.verbs.VerbsLayouts.CONTEXT_OPS_POLL_CQ;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_CQ;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_WC;
import static io.xferd.nativebindings.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A completion queue ({@code ibv_create_cq}) polled without allocation: {@link #poll()} fills a pre-allocated
 * array of {@code struct ibv_wc}, read with the indexed accessors until the next poll.
 * <p>
 * {@code ibv_poll_cq} is a static inline function in {@code verbs.h} that calls {@code cq->context->ops.poll_cq};
 * this class reads that function pointer once, at creation (a provider fills the ops table when the device is
 * opened and never changes it), and downcalls through it. One thread polls a given queue.
 */
public final class CompletionQueue implements AutoCloseable
{
    /** {@code int (*poll_cq)(struct ibv_cq *, int, struct ibv_wc *)}, called with the ops-table pointer first. */
    @SuppressWarnings("restricted")
    private static final MethodHandle POLL_CQ =
        Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final long WC_SIZE = IBV_WC.byteSize();
    private static final long WR_ID = offset(IBV_WC, "wr_id");
    private static final long STATUS = offset(IBV_WC, "status");
    private static final long OPCODE = offset(IBV_WC, "opcode");
    private static final long VENDOR_ERR = offset(IBV_WC, "vendor_err");
    private static final long BYTE_LEN = offset(IBV_WC, "byte_len");
    private static final long QP_NUM = offset(IBV_WC, "qp_num");

    private final String deviceName;
    private final MemorySegment cq;
    private final MemorySegment pollFunction;
    private final Arena arena;
    private final MemorySegment completions;
    private final int pollBatch;
    private boolean closed;

    /**
     * @param cq an {@code ibv_cq} whose {@code context->ops.poll_cq} is the function {@link #poll()} calls.
     */
    CompletionQueue(final String deviceName, final MemorySegment cq, final int pollBatch)
    {
        this.deviceName = deviceName;
        this.cq = cq;
        this.pollBatch = pollBatch;
        this.pollFunction = VerbsContext.opsFunctionOf(cq, offset(IBV_CQ, "context"), CONTEXT_OPS_POLL_CQ);
        this.arena = Arena.ofShared();
        this.completions = arena.allocate(WC_SIZE * pollBatch, IBV_WC.byteAlignment());
    }

    static CompletionQueue create(final VerbsContext context, final int entries, final int pollBatch)
    {
        if (entries < 1 || pollBatch < 1)
        {
            throw new IllegalArgumentException("entries and pollBatch must be positive: " + entries + ", " + pollBatch);
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment cq = (MemorySegment)VerbsFunctions.CREATE_CQ.invokeExact(
                capture, context.pointer(), entries, MemorySegment.NULL, MemorySegment.NULL, 0);
            return new CompletionQueue(context.deviceName(), VerbsCalls.requireNonNull(
                cq, IBV_CQ.byteSize(), capture, "ibv_create_cq", context.deviceName() + " entries=" + entries), pollBatch);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * Polls up to {@link #pollBatch()} completions ({@code ibv_poll_cq}).
     *
     * @return how many were polled (0 when the queue is empty); read them with {@link #wrId(int)} etc.
     */
    public int poll()
    {
        final int polled;
        try
        {
            polled = (int)POLL_CQ.invokeExact(pollFunction, cq, pollBatch, completions);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
        if (polled < 0)
        {
            throw new NativeException("ibv_poll_cq", Errno.EIO, "returned " + polled + " on " + deviceName);
        }
        return polled;
    }

    public int pollBatch()
    {
        return pollBatch;
    }

    /**
     * @return the entries the queue holds ({@code ibv_cq.cqe}): at least those asked for, providers round up.
     */
    public int capacity()
    {
        return cq.get(JAVA_INT, offset(IBV_CQ, "cqe"));
    }

    public long wrId(final int index)
    {
        return completions.get(JAVA_LONG, index * WC_SIZE + WR_ID);
    }

    /**
     * @return {@code IBV_WC_*} status; {@link VerbsLayouts#IBV_WC_SUCCESS} when the work request succeeded.
     */
    public int status(final int index)
    {
        return completions.get(JAVA_INT, index * WC_SIZE + STATUS);
    }

    public int opcode(final int index)
    {
        return completions.get(JAVA_INT, index * WC_SIZE + OPCODE);
    }

    public int vendorError(final int index)
    {
        return completions.get(JAVA_INT, index * WC_SIZE + VENDOR_ERR);
    }

    public int byteLength(final int index)
    {
        return completions.get(JAVA_INT, index * WC_SIZE + BYTE_LEN);
    }

    public int qpNum(final int index)
    {
        return completions.get(JAVA_INT, index * WC_SIZE + QP_NUM);
    }

    /**
     * @return libibverbs' text for a completion status ({@code ibv_wc_status_str}).
     */
    @SuppressWarnings("restricted")
    public static String statusString(final int status)
    {
        try
        {
            final MemorySegment text = (MemorySegment)VerbsFunctions.WC_STATUS_STR.invokeExact(status);
            return text.reinterpret(256).getString(0);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    MemorySegment pointer()
    {
        return cq;
    }

    /**
     * {@code ibv_destroy_cq}; idempotent. Destroy the QPs using it first.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try (Arena call = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(call);
            final int rc = (int)VerbsFunctions.DESTROY_CQ.invokeExact(capture, cq);
            VerbsCalls.requireZero(rc, capture, "ibv_destroy_cq", deviceName);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
        finally
        {
            arena.close();
        }
    }
}
