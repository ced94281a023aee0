package io.xferd.daemon.peer;

/**
 * A segment of another daemon as this daemon knows it: the link to that daemon, the owner daemon's handle for
 * the segment and the epoch it was valid in. Immutable; a re-opened segment gets a new entry.
 */
public record RemoteSegment(String name, PeerLink link, long remoteHandle, long epoch, SegmentDescriptor descriptor)
{
}
