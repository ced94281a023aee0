/**
 * libc through Panama FFM, Linux x86_64 glibc: memfd and mmap for shared client memory, AF_UNIX stream sockets with
 * SCM_RIGHTS fd passing and SO_PEERCRED for the daemon's control socket, allocation-free {@code poll(2)},
 * {@code process_vm_readv/writev}, CPU affinity, and the datagram send used for systemd notification.
 * <p>
 * Downcall handles are created once, in static final fields of holder classes. Calls that can fail capture
 * {@code errno} into a per-thread scratch segment and throw {@link io.xferd.nativebindings.NativeException}. Calls on
 * the data path ({@link io.xferd.nativebindings.libc.UnixSocket#send}, {@code receive}, {@link
 * io.xferd.nativebindings.libc.Poller#poll}, {@link io.xferd.nativebindings.libc.ProcessVm}) do not allocate native
 * memory per call; buffers passed to them must be native segments.
 * <p>
 * C layouts used (x86_64, LP64):
 * <pre>
 *   struct iovec       { void *iov_base; size_t iov_len; }                          16 bytes
 *   struct msghdr      { void *name; socklen_t namelen; (pad 4) struct iovec *iov;
 *                        size_t iovlen; void *control; size_t controllen; int flags; (pad 4) }   56 bytes
 *   struct cmsghdr     { size_t cmsg_len; int cmsg_level; int cmsg_type; data... }  16 bytes + data
 *                        CMSG_LEN(n) = 16 + n, CMSG_SPACE(n) = 16 + align8(n)
 *   struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; }              110 bytes
 *   struct pollfd      { int fd; short events; short revents; }                     8 bytes
 *   struct ucred       { pid_t pid; uid_t uid; gid_t gid; }                         12 bytes
 * </pre>
 */
package io.xferd.nativebindings.libc;
