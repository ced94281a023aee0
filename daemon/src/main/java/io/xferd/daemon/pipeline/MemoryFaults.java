package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.MappedFault;
import io.xferd.daemon.memory.ProcessMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.nativebindings.libc.Process;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Faults on mapped memory, as the JVM reports them: HotSpot's SIGBUS handler turns a fault inside an Unsafe access
 * or copy (which {@link MemorySegment#copy} is) into a {@link InternalError} thrown at the faulting call, and the
 * thread lives on. Checked on this JDK (Temurin 25): a memfd mapped, truncated from a second descriptor, then copied
 * into and out of, interpreted, C1 and C2 alike, 3000 times each.
 */
final class MemoryFaults
{
    private static final int SELF = Process.pid();
    /** Where probes land; its contents are never read, so the workers may share it. */
    private static final MemorySegment SCRATCH = Arena.global().allocate(8);

    private MemoryFaults()
    {
    }

    static boolean isMemoryFault(final InternalError error)
    {
        return MappedFault.is(error);
    }

    /**
     * Whether a mapped region's range faults now, asked without touching it: process_vm_readv of this very process
     * reports a page beyond the end of its file as EFAULT instead of raising SIGBUS (which, from compiled code, the
     * JVM may raise a little after the access, outside any handler here). A truncate cuts a file's tail, so a range
     * that lost any page lost its last one; the first is asked too.
     */
    static boolean faults(final Region region, final long address, final long length)
    {
        if (!region.isMapped())
        {
            return false;
        }
        return ProcessMemory.read(SELF, region.daemonAddress(address), SCRATCH.address(), 1) != 0 ||
            ProcessMemory.read(SELF, region.daemonAddress(address + length - 1), SCRATCH.address(), 1) != 0;
    }
}
