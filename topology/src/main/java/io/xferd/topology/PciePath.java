package io.xferd.topology;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Where a device sits in the PCIe tree: the hops from its root complex down to the device, as sysfs
 * spells them in {@code /sys/devices}, e.g. {@code [pci0000:00, 0000:00:01.0, 0000:01:00.0, 0000:02:00.0]}
 * for a device behind one switch (a switch shows as an upstream port then a downstream port).
 * <p>
 * The distance of two devices is the number of hops from each of them up to their lowest common
 * ancestor, summed: two functions behind the same downstream port are 2 apart, two devices behind
 * different root complexes are the sum of both path lengths. An empty path (a virtual NIC) is
 * infinitely far from everything.
 */
public record PciePath(List<String> hops)
{
    /** A device that is not on PCIe (veth, bridge, tun). */
    public static final PciePath NONE = new PciePath(List.of());

    /** Distance reported when either path is empty. */
    public static final int UNREACHABLE = Integer.MAX_VALUE;

    private static final Pattern ROOT = Pattern.compile("pci[0-9a-fA-F]{4}:[0-9a-fA-F]{2}");
    private static final Pattern BDF = Pattern.compile("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

    public PciePath
    {
        hops = List.copyOf(hops);
    }

    /**
     * @param resolvedDevice a device directory with its links resolved, such as
     *                       {@code /sys/devices/pci0000:00/0000:00:03.0/virtio2}.
     * @return the hops down to the last PCI function on the way ({@code 0000:00:03.0} above, since a
     * virtio device is a child of its PCI function), or {@link #NONE} when the path holds no root complex.
     */
    public static PciePath fromDevicePath(final Path resolvedDevice)
    {
        if (null == resolvedDevice)
        {
            return NONE;
        }
        final List<String> hops = new ArrayList<>();
        for (final Path component : resolvedDevice)
        {
            final String name = component.toString();
            if (hops.isEmpty())
            {
                if (ROOT.matcher(name).matches())
                {
                    hops.add(name);
                }
            }
            else if (BDF.matcher(name).matches())
            {
                hops.add(name);
            }
            else
            {
                break;
            }
        }
        return hops.size() < 2 ? NONE : new PciePath(hops);
    }

    public boolean isEmpty()
    {
        return hops.isEmpty();
    }

    /** @return the PCI address ({@code domain:bus:device.function}) of the device, or null for {@link #NONE}. */
    public String address()
    {
        return hops.isEmpty() ? null : hops.getLast();
    }

    /** @return hops from each device up to the lowest common ancestor, summed; {@link #UNREACHABLE} if either is empty. */
    public int distanceTo(final PciePath other)
    {
        if (isEmpty() || other.isEmpty())
        {
            return UNREACHABLE;
        }
        int common = 0;
        final int max = Math.min(hops.size(), other.hops.size());
        while (common < max && hops.get(common).equals(other.hops.get(common)))
        {
            common++;
        }
        return (hops.size() - common) + (other.hops.size() - common);
    }

    /** @return the hops joined with {@code /}, the way they appear under {@code /sys/devices}. */
    public String toString()
    {
        return String.join("/", hops);
    }
}
