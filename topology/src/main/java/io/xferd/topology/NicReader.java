package io.xferd.topology;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads NICs: RDMA devices of {@code class/infiniband} first, then the netdevs of {@code class/net}
 * that no RDMA device sits on, each list in natural name order. {@code lo} is skipped; virtual
 * interfaces (veth, bridges) are kept, on NUMA node 0 without a PCI address.
 * <p>
 * Files read, for a netdev {@code <if>}: the {@code device} link (resolved: the PCIe path; its last PCI
 * function: the PCI address and the {@code numa_node}), {@code speed}, {@code operstate}, {@code address}.
 * For an RDMA device {@code <dev>}: the {@code device} link, {@code device/net/*} (its netdev),
 * {@code ports/1/state} ({@code "4: ACTIVE"}), {@code ports/1/rate} ({@code "200 Gb/sec (4X HDR)"}).
 */
public final class NicReader
{
    private static final String LOOPBACK = "lo";

    private final SysfsRoot sysfs;

    public NicReader(final SysfsRoot sysfs)
    {
        this.sysfs = sysfs;
    }

    public List<NicInfo> read()
    {
        final List<NicInfo> nics = new ArrayList<>();
        final Set<String> netdevsUnderRdma = new HashSet<>();
        for (final String dev : naturalOrder(sysfs.list("class/infiniband")))
        {
            final NicInfo rdma = readRdma(dev);
            nics.add(rdma);
            if (null != rdma.netdev())
            {
                netdevsUnderRdma.add(rdma.netdev());
            }
        }
        for (final String name : naturalOrder(sysfs.list("class/net")))
        {
            if (!LOOPBACK.equals(name) && !netdevsUnderRdma.contains(name))
            {
                nics.add(readEthernet(name));
            }
        }
        return List.copyOf(nics);
    }

    private static List<String> naturalOrder(final List<String> names)
    {
        names.sort(NaturalOrder.INSTANCE);
        return names;
    }

    private NicInfo readEthernet(final String name)
    {
        final Path dir = sysfs.resolve("class/net/" + name);
        final DeviceLocation location = DeviceLocation.of(dir.resolve("device"));
        return new NicInfo(
            name,
            NicKind.ETHERNET,
            name,
            location.pciePath().address(),
            location.numaNode(),
            speedOf(dir),
            stateOrUnknown(SysfsRoot.readText(dir.resolve("operstate"))),
            SysfsRoot.readText(dir.resolve("address")),
            location.pciePath(),
            List.of());
    }

    private NicInfo readRdma(final String dev)
    {
        final Path dir = sysfs.resolve("class/infiniband/" + dev);
        final DeviceLocation location = DeviceLocation.of(dir.resolve("device"));
        final List<String> netdevs = SysfsRoot.list(dir.resolve("device/net"));
        final String netdev = netdevs.isEmpty() ? null : naturalOrder(netdevs).getFirst();
        final Path netdevDir = null == netdev ? null : sysfs.resolve("class/net/" + netdev);
        long speed = rateMbps(SysfsRoot.readText(dir.resolve("ports/1/rate")));
        if (NicInfo.UNKNOWN_SPEED == speed && null != netdevDir)
        {
            speed = speedOf(netdevDir);
        }
        return new NicInfo(
            dev,
            NicKind.RDMA,
            netdev,
            location.pciePath().address(),
            location.numaNode(),
            speed,
            rdmaState(SysfsRoot.readText(dir.resolve("ports/1/state"))),
            null == netdevDir ? null : SysfsRoot.readText(netdevDir.resolve("address")),
            location.pciePath(),
            List.of());
    }

    private static long speedOf(final Path netdevDir)
    {
        final long speed = SysfsRoot.readLong(netdevDir.resolve("speed"), NicInfo.UNKNOWN_SPEED);
        return speed > 0 ? speed : NicInfo.UNKNOWN_SPEED;
    }

    /** @return Mb/s of an RDMA port's {@code rate} such as {@code "200 Gb/sec (4X HDR)"} or {@code "2.5 Gb/sec"}. */
    static long rateMbps(final String rate)
    {
        if (null == rate || rate.isEmpty())
        {
            return NicInfo.UNKNOWN_SPEED;
        }
        final int space = rate.indexOf(' ');
        try
        {
            final double gbps = Double.parseDouble(space < 0 ? rate : rate.substring(0, space));
            return gbps > 0 ? Math.round(gbps * 1000) : NicInfo.UNKNOWN_SPEED;
        }
        catch (final NumberFormatException ex)
        {
            return NicInfo.UNKNOWN_SPEED;
        }
    }

    /** @return {@code "4: ACTIVE"} as {@code "active"}. */
    static String rdmaState(final String text)
    {
        if (null == text || text.isEmpty())
        {
            return "unknown";
        }
        final int colon = text.indexOf(':');
        return (colon < 0 ? text : text.substring(colon + 1)).trim().toLowerCase(Locale.ROOT);
    }

    private static String stateOrUnknown(final String state)
    {
        return null == state || state.isEmpty() ? "unknown" : state.toLowerCase(Locale.ROOT);
    }
}
