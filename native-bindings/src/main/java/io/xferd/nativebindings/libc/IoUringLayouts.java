package io.xferd.nativebindings.libc;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The io_uring ABI from {@code linux/io_uring.h}: the setup parameters with the ring offsets the kernel fills in,
 * the 64-byte submission entry and the 16-byte completion entry, and the constants xferd uses. Checked against the
 * installed header by {@code IoUringLayoutTest}.
 * <pre>
 *   io_uring_sqe (64 bytes)                     io_uring_cqe (16 bytes)
 *   0  u8 opcode  1 u8 flags  2 u16 ioprio       0  u64 user_data
 *   4  s32 fd                                    8  s32 res (bytes, or -errno)
 *   8  u64 off (file offset)                     12 u32 flags
 *   16 u64 addr (buffer)
 *   24 u32 len   28 u32 rw_flags / fsync_flags
 *   32 u64 user_data
 *   40 u16 buf_index 42 u16 personality 44 s32 splice_fd_in
 *   48 u64 addr3  56 u64 pad
 * </pre>
 */
public final class IoUringLayouts
{
    public static final int SYS_IO_URING_SETUP = 425;
    public static final int SYS_IO_URING_ENTER = 426;

    public static final byte IORING_OP_FSYNC = 3;
    public static final byte IORING_OP_POLL_ADD = 6;
    public static final byte IORING_OP_ASYNC_CANCEL = 14;
    public static final byte IORING_OP_READ = 22;
    public static final byte IORING_OP_WRITE = 23;
    public static final int IORING_FSYNC_DATASYNC = 1;
    public static final byte IOSQE_IO_LINK = 1 << 2;
    public static final int IORING_ENTER_GETEVENTS = 1;
    public static final int IORING_ENTER_EXT_ARG = 1 << 3;
    public static final int IORING_FEAT_EXT_ARG = 1 << 8;
    public static final int IORING_ASYNC_CANCEL_ALL = 1;
    public static final int IORING_ASYNC_CANCEL_ANY = 1 << 2;
    public static final int POLLIN = 1;
    /** struct io_uring_getevents_arg: u64 sigmask, u32 sigmask_sz, u32 min_wait_usec (pad before 6.12), u64 ts. */
    public static final long GETEVENTS_ARG_SIZE = 24;
    public static final long GETEVENTS_ARG_TS = 16;
    /** struct __kernel_timespec: s64 tv_sec, s64 tv_nsec. */
    public static final long TIMESPEC_SIZE = 16;
    public static final int IORING_FEAT_SINGLE_MMAP = 1;
    public static final long IORING_OFF_SQ_RING = 0L;
    public static final long IORING_OFF_CQ_RING = 0x8000000L;
    public static final long IORING_OFF_SQES = 0x10000000L;

    public static final GroupLayout IO_SQRING_OFFSETS = MemoryLayout.structLayout(
        JAVA_INT.withName("head"),
        JAVA_INT.withName("tail"),
        JAVA_INT.withName("ring_mask"),
        JAVA_INT.withName("ring_entries"),
        JAVA_INT.withName("flags"),
        JAVA_INT.withName("dropped"),
        JAVA_INT.withName("array"),
        JAVA_INT.withName("resv1"),
        // resv2 in older headers, user_addr since Linux 6.5: unused here, so left unnamed
        MemoryLayout.paddingLayout(8)).withByteAlignment(8).withName("io_sqring_offsets");

    public static final GroupLayout IO_CQRING_OFFSETS = MemoryLayout.structLayout(
        JAVA_INT.withName("head"),
        JAVA_INT.withName("tail"),
        JAVA_INT.withName("ring_mask"),
        JAVA_INT.withName("ring_entries"),
        JAVA_INT.withName("overflow"),
        JAVA_INT.withName("cqes"),
        JAVA_INT.withName("flags"),
        JAVA_INT.withName("resv1"),
        // resv2 in older headers, user_addr since Linux 6.5: unused here, so left unnamed
        MemoryLayout.paddingLayout(8)).withByteAlignment(8).withName("io_cqring_offsets");

    public static final GroupLayout IO_URING_PARAMS = MemoryLayout.structLayout(
        JAVA_INT.withName("sq_entries"),
        JAVA_INT.withName("cq_entries"),
        JAVA_INT.withName("flags"),
        JAVA_INT.withName("sq_thread_cpu"),
        JAVA_INT.withName("sq_thread_idle"),
        JAVA_INT.withName("features"),
        JAVA_INT.withName("wq_fd"),
        MemoryLayout.sequenceLayout(3, JAVA_INT).withName("resv"),
        IO_SQRING_OFFSETS.withName("sq_off"),
        IO_CQRING_OFFSETS.withName("cq_off")).withName("io_uring_params");

    public static final long SQE_SIZE = 64;
    public static final long SQE_OPCODE = 0;
    public static final long SQE_FLAGS = 1;
    public static final long SQE_IOPRIO = 2;
    public static final long SQE_FD = 4;
    public static final long SQE_OFF = 8;
    public static final long SQE_ADDR = 16;
    public static final long SQE_LEN = 24;
    public static final long SQE_RW_FLAGS = 28;
    public static final long SQE_USER_DATA = 32;
    public static final long SQE_BUF_INDEX = 40;
    public static final long SQE_PERSONALITY = 42;
    public static final long SQE_SPLICE_FD_IN = 44;
    public static final long SQE_ADDR3 = 48;

    public static final long CQE_SIZE = 16;
    public static final long CQE_USER_DATA = 0;
    public static final long CQE_RES = 8;
    public static final long CQE_FLAGS = 12;

    static final long PARAMS_SQ_ENTRIES = offset("sq_entries");
    static final long PARAMS_CQ_ENTRIES = offset("cq_entries");
    static final long PARAMS_FEATURES = offset("features");


    private IoUringLayouts()
    {
    }

    static long sq(final String field)
    {
        return IO_URING_PARAMS.byteOffset(groupElement("sq_off"), groupElement(field));
    }

    static long cq(final String field)
    {
        return IO_URING_PARAMS.byteOffset(groupElement("cq_off"), groupElement(field));
    }

    private static long offset(final String field)
    {
        return IO_URING_PARAMS.byteOffset(groupElement(field));
    }
}
