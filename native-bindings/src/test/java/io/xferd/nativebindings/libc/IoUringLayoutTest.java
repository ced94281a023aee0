package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.CLayoutProgram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static io.xferd.nativebindings.libc.IoUringLayouts.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link IoUringLayouts} and {@link FileIo}'s constants against {@code linux/io_uring.h}, {@code fcntl.h} and
 * {@code sys/stat.h} (and {@code sys/vfs.h}'s statfs, {@code linux/fs.h}'s BLKGETSIZE64) as gcc sees them.
 */
class IoUringLayoutTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void shouldMatchTheKernelHeaders() throws Exception
    {
        assumeTrue(CLayoutProgram.headerCompiles(dir, "linux/io_uring.h"), "gcc or linux/io_uring.h missing");

        final CLayoutProgram program = new CLayoutProgram("linux/io_uring.h", "sys/syscall.h", "fcntl.h",
            "sys/stat.h", "unistd.h", "poll.h", "sys/eventfd.h", "sys/vfs.h", "linux/magic.h", "linux/fs.h")
            .type("struct io_sqring_offsets", IO_SQRING_OFFSETS)
            .type("struct io_cqring_offsets", IO_CQRING_OFFSETS)
            .type("struct io_uring_params", IO_URING_PARAMS)
            .constant("sizeof(struct io_uring_sqe)", SQE_SIZE)
            .constant("offsetof(struct io_uring_sqe, opcode)", SQE_OPCODE)
            .constant("offsetof(struct io_uring_sqe, flags)", SQE_FLAGS)
            .constant("offsetof(struct io_uring_sqe, ioprio)", SQE_IOPRIO)
            .constant("offsetof(struct io_uring_sqe, fd)", SQE_FD)
            .constant("offsetof(struct io_uring_sqe, off)", SQE_OFF)
            .constant("offsetof(struct io_uring_sqe, addr)", SQE_ADDR)
            .constant("offsetof(struct io_uring_sqe, len)", SQE_LEN)
            .constant("offsetof(struct io_uring_sqe, rw_flags)", SQE_RW_FLAGS)
            .constant("offsetof(struct io_uring_sqe, fsync_flags)", SQE_RW_FLAGS)
            .constant("offsetof(struct io_uring_sqe, user_data)", SQE_USER_DATA)
            .constant("offsetof(struct io_uring_sqe, buf_index)", SQE_BUF_INDEX)
            .constant("offsetof(struct io_uring_sqe, personality)", SQE_PERSONALITY)
            .constant("offsetof(struct io_uring_sqe, splice_fd_in)", SQE_SPLICE_FD_IN)
            .constant("offsetof(struct io_uring_sqe, addr3)", SQE_ADDR3)
            .constant("sizeof(struct io_uring_cqe)", CQE_SIZE)
            .constant("offsetof(struct io_uring_cqe, user_data)", CQE_USER_DATA)
            .constant("offsetof(struct io_uring_cqe, res)", CQE_RES)
            .constant("offsetof(struct io_uring_cqe, flags)", CQE_FLAGS)
            .constant("__NR_io_uring_setup", SYS_IO_URING_SETUP)
            .constant("__NR_io_uring_enter", SYS_IO_URING_ENTER)
            .constant("IORING_OP_FSYNC", IORING_OP_FSYNC)
            .constant("IORING_OP_READ", IORING_OP_READ)
            .constant("IORING_OP_WRITE", IORING_OP_WRITE)
            .constant("IORING_FSYNC_DATASYNC", IORING_FSYNC_DATASYNC)
            .constant("IOSQE_IO_LINK", IOSQE_IO_LINK)
            .constant("IORING_OP_POLL_ADD", IORING_OP_POLL_ADD)
            .constant("IORING_OP_ASYNC_CANCEL", IORING_OP_ASYNC_CANCEL)
            .constant("IORING_ENTER_EXT_ARG", IORING_ENTER_EXT_ARG)
            .constant("IORING_FEAT_EXT_ARG", IORING_FEAT_EXT_ARG)
            .constant("IORING_ASYNC_CANCEL_ALL", IORING_ASYNC_CANCEL_ALL)
            .constant("IORING_ASYNC_CANCEL_ANY", IORING_ASYNC_CANCEL_ANY)
            .constant("sizeof(struct io_uring_getevents_arg)", GETEVENTS_ARG_SIZE)
            .constant("offsetof(struct io_uring_getevents_arg, ts)", GETEVENTS_ARG_TS)
            .constant("sizeof(struct __kernel_timespec)", TIMESPEC_SIZE)
            .constant("offsetof(struct io_uring_sqe, poll32_events)", SQE_RW_FLAGS)
            .constant("offsetof(struct io_uring_sqe, cancel_flags)", SQE_RW_FLAGS)
            .constant("IORING_ENTER_GETEVENTS", IORING_ENTER_GETEVENTS)
            .constant("IORING_FEAT_SINGLE_MMAP", IORING_FEAT_SINGLE_MMAP)
            .constant("IORING_OFF_SQ_RING", IORING_OFF_SQ_RING)
            .constant("IORING_OFF_CQ_RING", IORING_OFF_CQ_RING)
            .constant("IORING_OFF_SQES", IORING_OFF_SQES)
            .constant("O_RDONLY", FileIo.O_RDONLY)
            .constant("O_WRONLY", FileIo.O_WRONLY)
            .constant("O_RDWR", FileIo.O_RDWR)
            .constant("O_ACCMODE", FileIo.O_ACCMODE)
            .constant("O_CREAT", FileIo.O_CREAT)
            .constant("O_CLOEXEC", FileIo.O_CLOEXEC)
            .constant("O_DIRECT", FileIo.O_DIRECT)
            .constant("S_IFMT", FileIo.S_IFMT)
            .constant("S_IFREG", FileIo.S_IFREG)
            .constant("S_IFBLK", FileIo.S_IFBLK)
            .constant("BLKGETSIZE64", FileIo.BLKGETSIZE64)
            .constant("POLLIN", POLLIN)
            .constant("EFD_NONBLOCK", EventFd.EFD_NONBLOCK)
            .constant("EFD_CLOEXEC", EventFd.EFD_CLOEXEC)
            .constant("sizeof(struct stat)", FileIo.STAT_SIZE)
            .constant("offsetof(struct stat, st_mode)", FileIo.STAT_MODE_OFFSET)
            .constant("offsetof(struct stat, st_size)", FileIo.STAT_SIZE_OFFSET)
            .constant("sizeof(struct statfs)", FileIo.STATFS_SIZE)
            .constant("offsetof(struct statfs, f_type)", 0)
            .constant("TMPFS_MAGIC", FileIo.TMPFS_MAGIC);
        final Map<String, Long> actual = program.compileAndRun(dir, "-D_GNU_SOURCE");

        assertThat(program.mismatches(actual)).as("Java layouts vs linux/io_uring.h").isEmpty();
    }
}
