package io.xferd.nativebindings.libc;

/**
 * The credentials of the process at the other end of a Unix socket, as the kernel recorded them at
 * {@code connect(2)} ({@code SO_PEERCRED}): they cannot be forged by the peer.
 */
public record PeerCredentials(int pid, int uid, int gid)
{
}
