package io.xferd.nativebindings.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_ACCESS_OPTIONAL_RANGE;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_MR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A registered memory region ({@code struct ibv_mr}): the local key goes in this side's scatter/gather entries,
 * the remote key and address are what a peer needs to RDMA READ or WRITE it.
 */
public final class MemoryRegion implements AutoCloseable
{
    private static final long LKEY = offset(IBV_MR, "lkey");
    private static final long RKEY = offset(IBV_MR, "rkey");
    private static final long ADDR = offset(IBV_MR, "addr");
    private static final long LENGTH = offset(IBV_MR, "length");

    private final MemorySegment mr;
    private final int lkey;
    private final int rkey;
    private final long address;
    private final long length;
    private boolean closed;

    private MemoryRegion(final MemorySegment mr)
    {
        this.mr = mr;
        this.lkey = mr.get(JAVA_INT, LKEY);
        this.rkey = mr.get(JAVA_INT, RKEY);
        this.address = mr.get(ADDRESS, ADDR).address();
        this.length = mr.get(JAVA_LONG, LENGTH);
    }

    static MemoryRegion register(
        final ProtectionDomain pd, final long address, final long length, final long iova, final int access)
    {
        final String detail = String.format("%s addr=0x%x length=%d iova=0x%x access=0x%x",
            pd.context().deviceName(), address, length, iova, access);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment mr;
            final String function;
            if ((access & IBV_ACCESS_OPTIONAL_RANGE) == 0 && iova == address)
            {
                function = "ibv_reg_mr";
                mr = (MemorySegment)VerbsFunctions.REG_MR.invokeExact(capture, pd.pointer(), address, length, access);
            }
            else
            {
                function = "ibv_reg_mr_iova2";
                mr = (MemorySegment)VerbsFunctions.REG_MR_IOVA2.invokeExact(
                    capture, pd.pointer(), address, length, iova, access);
            }
            return new MemoryRegion(VerbsCalls.requireNonNull(mr, IBV_MR.byteSize(), capture, function, detail));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    public int lkey()
    {
        return lkey;
    }

    public int rkey()
    {
        return rkey;
    }

    public long address()
    {
        return address;
    }

    public long length()
    {
        return length;
    }

    /**
     * {@code ibv_dereg_mr}; idempotent.
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
            final int rc = (int)VerbsFunctions.DEREG_MR.invokeExact(capture, mr);
            VerbsCalls.requireZero(rc, capture, "ibv_dereg_mr", String.format("addr=0x%x", address));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }
}
