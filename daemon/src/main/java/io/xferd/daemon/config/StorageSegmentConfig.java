package io.xferd.daemon.config;

import java.nio.file.Path;

/**
 * One entry of {@code storage_segments}: a segment the daemon itself serves, holding one storage region, the byte
 * range [{@code offset}, {@code offset + size}) of the file or block device at {@code path}, opened by the daemon
 * from its own configuration (never from a path a client names). Clients and peers reach it as any segment, by
 * {@code name}, under the access policy (root, {@code allowed_uids}/{@code allowed_gids}, and the {@code uids} and
 * {@code gids} given here as the segment's grant).
 *
 * @param direct O_DIRECT where the range is aligned and the file system allows it (default); false: page cache.
 * @param sync   every WRITE completes only after an fdatasync (one per group of writes that landed together).
 */
public record StorageSegmentConfig(
    String name, Path path, long offset, long size, boolean direct, boolean sync, int[] uids, int[] gids)
{
    /** The most storage segments one daemon serves (each takes a client slot). */
    public static final int MAX_SEGMENTS = 64;

    @Override
    public String toString()
    {
        return name + " -> " + path + " [" + offset + ", +" + size + ")" + (direct ? "" : " buffered") +
            (sync ? " sync" : "");
    }
}
