package io.xferd.daemon.memory;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.libc.ProcessVm;

/**
 * Whole copies between this process and a client's {@link Region#isProcess() process memory}: one
 * {@code process_vm_readv}/{@code process_vm_writev} per call, repeated only when the kernel moved fewer bytes than
 * asked (it stops at the first unmapped page; the next call then reports EFAULT) or the range is larger than one call
 * may move. Never throws for a failed call, never allocates: a failure is the errno, for a typed status.
 */
public final class ProcessMemory
{
    /** Stays below the kernel's per-call cap (MAX_RW_COUNT, 2 GiB less a page). */
    static final long MAX_PER_CALL = 1L << 30;

    private ProcessMemory()
    {
    }

    /**
     * Copy {@code length} bytes at {@code remoteAddress} of process {@code pid} to {@code localAddress} here.
     *
     * @return 0 when every byte arrived, else the errno (EFAULT: the client unmapped the memory; ESRCH: the process
     * is gone; EPERM: not permitted).
     */
    public static int read(final int pid, final long remoteAddress, final long localAddress, final long length)
    {
        long done = 0;
        while (done < length)
        {
            final long moved = ProcessVm.readInto(pid, remoteAddress + done, localAddress + done,
                Math.min(MAX_PER_CALL, length - done));
            if (moved <= 0)
            {
                return moved == 0 ? Errno.EFAULT : (int)-moved;
            }
            done += moved;
        }
        return 0;
    }

    /**
     * Copy {@code length} bytes from {@code localAddress} here to {@code remoteAddress} of process {@code pid}.
     *
     * @return 0 when every byte landed, else the errno, as {@link #read}.
     */
    public static int write(final int pid, final long remoteAddress, final long localAddress, final long length)
    {
        long done = 0;
        while (done < length)
        {
            final long moved = ProcessVm.writeFrom(pid, remoteAddress + done, localAddress + done,
                Math.min(MAX_PER_CALL, length - done));
            if (moved <= 0)
            {
                return moved == 0 ? Errno.EFAULT : (int)-moved;
            }
            done += moved;
        }
        return 0;
    }
}
