package io.xferd.daemon.transport.rdma;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Chooses the GID index a port's QPs are addressed by when {@code gid_index} is {@code auto}: on InfiniBand
 * index 0 (the port GID); on RoCE the first RoCE v2 GID holding an IPv4-mapped address (routable, and what
 * most fabrics are configured for), else the first RoCE v2 GID, else 0. Reads sysfs, as {@code show_gids} does.
 */
public final class GidIndexSelector
{
    public static final int AUTO = io.xferd.daemon.config.DaemonContext.GID_INDEX_AUTO;
    private static final String IPV4_MAPPED = "0000:0000:0000:0000:0000:ffff:";

    private GidIndexSelector()
    {
    }

    /**
     * @param sysfsRoot      usually {@code /sys/class/infiniband}.
     * @param tableLength    entries in the port's GID table.
     * @param ethernet       whether the port's link layer is Ethernet (RoCE).
     */
    public static int select(
        final Path sysfsRoot, final String device, final int port, final int tableLength, final boolean ethernet)
    {
        if (!ethernet)
        {
            return 0;
        }
        final Path portDir = sysfsRoot.resolve(device).resolve("ports").resolve(Integer.toString(port));
        int firstV2 = -1;
        for (int i = 0; i < tableLength; i++)
        {
            final String type = read(portDir.resolve("gid_attrs/types/" + i));
            if (type == null || !type.equalsIgnoreCase("RoCE v2"))
            {
                continue;
            }
            final String gid = read(portDir.resolve("gids/" + i));
            if (gid != null && gid.startsWith(IPV4_MAPPED))
            {
                return i;
            }
            firstV2 = firstV2 < 0 ? i : firstV2;
        }
        return Math.max(firstV2, 0);
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file).trim();
        }
        catch (final IOException | RuntimeException ex)
        {
            return null; // sysfs answers EINVAL for unused entries
        }
    }
}
