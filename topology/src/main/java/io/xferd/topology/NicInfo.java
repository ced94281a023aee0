package io.xferd.topology;

import java.util.List;

/**
 * One NIC as discovery found it.
 *
 * @param name       the name the matrix uses: the RDMA device ({@code mlx5_0}) for {@link NicKind#RDMA},
 *                   the interface ({@code eth0}) for {@link NicKind#ETHERNET}.
 * @param kind       ETHERNET or RDMA.
 * @param netdev     the kernel interface carrying IP for this NIC ({@code name} itself for ETHERNET; the
 *                   linked interface of an RDMA device, or null when it has none, e.g. native InfiniBand
 *                   without IPoIB).
 * @param pciAddress {@code domain:bus:device.function}, or null for a virtual NIC (veth, bridge).
 * @param numaNode   the node the device is attached to; 0 when unknown (sysfs says -1) or virtual.
 * @param speedMbps  link speed in Mb/s, or {@link #UNKNOWN_SPEED}.
 * @param state      {@code operstate} for ETHERNET ({@code up}, {@code down}, {@code unknown}...); for RDMA the
 *                   port 1 state lower-cased without its number ({@code active}, {@code down}...); {@code unknown}
 *                   when unreadable.
 * @param mac        the link-layer address, or null.
 * @param pciePath   the device's place in the PCIe tree, {@link PciePath#NONE} when virtual.
 * @param addresses  IP addresses of {@code netdev}, filled by {@link InterfaceAddresses} on a live host only.
 */
public record NicInfo(
    String name,
    NicKind kind,
    String netdev,
    String pciAddress,
    int numaNode,
    long speedMbps,
    String state,
    String mac,
    PciePath pciePath,
    List<String> addresses)
{
    /** Speed of a NIC whose {@code speed} file is missing, unreadable, or says -1. */
    public static final long UNKNOWN_SPEED = -1;

    public NicInfo
    {
        addresses = List.copyOf(addresses);
    }

    public boolean hasSpeed()
    {
        return speedMbps > 0;
    }

    /** @return true when the link is usable: {@code up} for a netdev, {@code active} for an RDMA port. */
    public boolean isUp()
    {
        return "up".equals(state) || "active".equals(state);
    }

    /** @return the same NIC with these IP addresses. */
    public NicInfo withAddresses(final List<String> newAddresses)
    {
        return new NicInfo(name, kind, netdev, pciAddress, numaNode, speedMbps, state, mac, pciePath, newAddresses);
    }
}
