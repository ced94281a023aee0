package io.xferd.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Builds a fake sysfs tree the way Linux lays it out: devices live under {@code devices/pci<domain:bus>/...},
 * and {@code class/net}, {@code class/infiniband} and {@code bus/pci/devices} hold relative symlinks to them.
 * Every PCI path is written as in {@code /sys/devices}, e.g. {@code "pci0000:00/0000:00:01.0/0000:01:00.0"}.
 */
final class FakeSysfs
{
    static final int CLASS_ETHERNET = 0x020000;
    static final int CLASS_INFINIBAND = 0x020700;
    static final int CLASS_VGA = 0x030000;
    static final int CLASS_3D = 0x030200;
    static final int CLASS_PCI_BRIDGE = 0x060400;
    static final int CLASS_OTHER_BRIDGE = 0x068000;
    static final int CLASS_AUDIO = 0x040300;
    static final int VENDOR_NVIDIA = 0x10de;
    static final int VENDOR_AMD = 0x1002;
    static final int VENDOR_MELLANOX = 0x15b3;
    static final int VENDOR_INTEL = 0x8086;
    static final int VENDOR_BROADCOM_PLX = 0x10b5;
    static final int VENDOR_ASPEED = 0x1a03;

    private final Path root;
    private int macCounter;

    FakeSysfs(final Path root)
    {
        this.root = root;
        mkdirs("devices/system/cpu");
        mkdirs("class/net");
        mkdirs("bus/pci/devices");
    }

    SysfsRoot sysfs()
    {
        return SysfsRoot.of(root);
    }

    Path root()
    {
        return root;
    }

    /** {@code devices/system/node/node<id>/cpulist}. */
    FakeSysfs numaNode(final int id, final String cpulist)
    {
        return write("devices/system/node/node" + id + "/cpulist", cpulist + "\n");
    }

    /** {@code devices/system/cpu/online}. */
    FakeSysfs onlineCpus(final String cpulist)
    {
        return write("devices/system/cpu/online", cpulist + "\n");
    }

    /**
     * A PCI function at {@code pciPath}, with {@code class}, {@code vendor}, {@code numa_node} and its
     * {@code bus/pci/devices} link; the bridges on the way are created too (class 0x060400) when missing.
     */
    FakeSysfs pciDevice(final String pciPath, final int classCode, final int vendor, final int numa)
    {
        final String[] hops = pciPath.split("/");
        final StringBuilder path = new StringBuilder(hops[0]);
        for (int i = 1; i < hops.length - 1; i++)
        {
            path.append('/').append(hops[i]);
            if (!Files.exists(root.resolve("devices/" + path + "/class")))
            {
                function(path.toString(), CLASS_PCI_BRIDGE, VENDOR_BROADCOM_PLX, numa);
            }
        }
        return function(pciPath, classCode, vendor, numa);
    }

    private FakeSysfs function(final String pciPath, final int classCode, final int vendor, final int numa)
    {
        final String dir = "devices/" + pciPath;
        write(dir + "/class", String.format("0x%06x%n", classCode));
        write(dir + "/vendor", String.format("0x%04x%n", vendor));
        write(dir + "/numa_node", numa + "\n");
        final String bdf = last(pciPath);
        return link("bus/pci/devices/" + bdf, "../../../devices/" + pciPath);
    }

    /** An Ethernet NIC on node {@code numa}, link up at {@code speedMbps}. */
    FakeSysfs ethernetNic(final String name, final String pciPath, final int numa, final long speedMbps)
    {
        pciDevice(pciPath, CLASS_ETHERNET, VENDOR_INTEL, numa);
        return netInterface(name, pciPath, String.valueOf(speedMbps), "up");
    }

    /**
     * A netdev: {@code devices/<pciPath>/net/<name>} (or {@code devices/virtual/net/<name>} when
     * {@code pciPathOrNull} is null) with {@code speed} (not written when null), {@code operstate},
     * {@code address}, the {@code device} link, and {@code class/net/<name>} pointing at it. The PCI
     * function is created (numa_node -1) when missing.
     */
    FakeSysfs netInterface(final String name, final String pciPathOrNull, final String speed, final String operstate)
    {
        final String dir;
        if (null == pciPathOrNull)
        {
            dir = "devices/virtual/net/" + name;
            mkdirs(dir);
        }
        else
        {
            if (!Files.exists(root.resolve("devices/" + pciPathOrNull + "/class")))
            {
                pciDevice(pciPathOrNull, CLASS_ETHERNET, VENDOR_MELLANOX, -1);
            }
            dir = "devices/" + pciPathOrNull + "/net/" + name;
            mkdirs(dir);
            link(dir + "/device", "../../../" + last(pciPathOrNull));
        }
        if (null != speed)
        {
            write(dir + "/speed", speed + "\n");
        }
        write(dir + "/operstate", operstate + "\n");
        write(dir + "/address", String.format("02:00:00:00:%02x:%02x%n", macCounter >> 8, macCounter & 0xff));
        macCounter++;
        return link("class/net/" + name, "../../" + dir);
    }

    /**
     * An RDMA device {@code devices/<pciPath>/infiniband/<name>} with {@code ports/1/state} and
     * {@code ports/1/rate}, its {@code device} link and {@code class/infiniband/<name>}. Its netdev, if any,
     * is made with {@link #netInterface} on the same PCI path.
     */
    FakeSysfs rdmaDevice(final String name, final String pciPath, final String portState, final String rate)
    {
        if (!Files.exists(root.resolve("devices/" + pciPath + "/class")))
        {
            pciDevice(pciPath, CLASS_INFINIBAND, VENDOR_MELLANOX, -1);
        }
        final String dir = "devices/" + pciPath + "/infiniband/" + name;
        mkdirs(dir + "/ports/1");
        link(dir + "/device", "../../../" + last(pciPath));
        write(dir + "/ports/1/state", portState + "\n");
        if (null != rate)
        {
            write(dir + "/ports/1/rate", rate + "\n");
        }
        return link("class/infiniband/" + name, "../../" + dir);
    }

    /** Any file, e.g. to make one odd. */
    FakeSysfs write(final String relative, final String content)
    {
        final Path file = root.resolve(relative);
        try
        {
            Files.createDirectories(file.getParent());
            Files.writeString(file, content);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    /** Replaces a file by a directory, so reading it fails as sysfs fails a read of {@code speed} on a down link. */
    FakeSysfs makeUnreadable(final String relative)
    {
        final Path file = root.resolve(relative);
        try
        {
            Files.deleteIfExists(file);
            Files.createDirectories(file);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    FakeSysfs mkdirs(final String relative)
    {
        try
        {
            Files.createDirectories(root.resolve(relative));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    private FakeSysfs link(final String relative, final String target)
    {
        final Path link = root.resolve(relative);
        try
        {
            Files.createDirectories(link.getParent());
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, Path.of(target));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    private static String last(final String pciPath)
    {
        return pciPath.substring(pciPath.lastIndexOf('/') + 1);
    }
}
