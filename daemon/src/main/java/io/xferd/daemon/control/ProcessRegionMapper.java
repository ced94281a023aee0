package io.xferd.daemon.control;

import io.xferd.daemon.memory.ProcessMemory;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.RegistrationRefusedException;
import io.xferd.ipc.ControlError;
import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.libc.Process;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Registers ordinary memory of a client process (heap, anonymous, a numpy array or torch CPU tensor: memory it did
 * not allocate as shared memory) as a region the daemon reaches with process_vm_readv/writev on the client's pid, the
 * one its socket's peer credentials name (never a pid the client claims). The kernel allows that where ptrace would
 * be allowed: the same uid (or CAP_SYS_PTRACE in the daemon), and under Yama's ptrace_scope 1 the client naming the
 * daemon with {@code prctl(PR_SET_PTRACER, daemon pid)}. Registration proves access by reading the range's first and
 * last byte, so a refused or unmapped range is refused now, not at its first transfer. Nothing is held: freeing such
 * a region has nothing to undo. Runs on the conductor's thread.
 */
final class ProcessRegionMapper
{
    private final MemorySegment probe = Arena.ofAuto().allocate(8, 8);

    /**
     * @param pid the client's pid from SO_PEERCRED.
     * @throws RegistrationRefusedException with INVALID_ARGUMENT for a bad range, a location that is not host
     *                                      memory, or a range not mapped in the client; MAP_FAILED when the daemon may
     *                                      not reach the client's memory.
     */
    Region map(final int pid, final long address, final long length, final String location)
    {
        if (address <= 0 || length <= 0 || address + length < address)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT,
                "bad range: address 0x" + Long.toHexString(address) + " length " + length);
        }
        if (!isHostLocation(location))
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT,
                "process memory is host memory: its location is cpu:N or *, not " + location);
        }
        if (pid <= 0)
        {
            throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                "the client's pid is unknown (its socket carries no peer credentials): its memory cannot be reached");
        }
        probe(pid, address);
        if (length > 1)
        {
            probe(pid, address + length - 1);
        }
        return Region.inProcess(address, length, location, pid);
    }

    private void probe(final int pid, final long address)
    {
        final int errno = ProcessMemory.read(pid, address, probe.address(), 1);
        if (errno == 0)
        {
            return;
        }
        if (errno == Errno.EFAULT)
        {
            throw new RegistrationRefusedException(ControlError.INVALID_ARGUMENT,
                "0x" + Long.toHexString(address) + " is not mapped readable in process " + pid);
        }
        if (errno == Errno.EPERM)
        {
            throw new RegistrationRefusedException(ControlError.MAP_FAILED,
                "process_vm_readv of process " + pid + " not permitted (EPERM): the daemon (pid " + Process.pid() +
                ") reaches a client's ordinary memory only with the client's uid or CAP_SYS_PTRACE, and under Yama " +
                "ptrace_scope 1 after the client called prctl(PR_SET_PTRACER, daemon pid); or register shared " +
                "memory (REGISTER_MEMORY with a memfd) instead");
        }
        throw new RegistrationRefusedException(ControlError.MAP_FAILED,
            "process_vm_readv of process " + pid + " failed: " + Errno.name(errno));
    }

    /**
     * @return true for {@code *} and {@code cpu:N}.
     */
    static boolean isHostLocation(final String location)
    {
        if ("*".equals(location))
        {
            return true;
        }
        if (location == null || !location.startsWith("cpu:") || location.length() == 4 || location.length() > 9)
        {
            return false;
        }
        for (int i = 4; i < location.length(); i++)
        {
            if (location.charAt(i) < '0' || location.charAt(i) > '9')
            {
                return false;
            }
        }
        return true;
    }
}
