package io.xferd.topology;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Fills in the IP addresses of NICs, which sysfs does not hold, from {@link NetworkInterface}. Nothing is
 * sent, bound or connected; note that on Linux the JDK itself opens a short-lived, unbound datagram socket
 * descriptor to issue its {@code ioctl} queries, so a caller that must not create any socket descriptor
 * at all should not call this class.
 * Only meaningful for the live {@code /sys}: {@link HostTopology#discover(SysfsRoot)} skips it for a fake
 * root, since the names of a fake tree need not exist on the host running the tests.
 */
public final class InterfaceAddresses
{
    private InterfaceAddresses()
    {
    }

    /** @return the NICs, each with the addresses of its {@link NicInfo#netdev()} (none when it has no netdev). */
    public static List<NicInfo> fill(final List<NicInfo> nics)
    {
        final List<NicInfo> filled = new ArrayList<>(nics.size());
        for (final NicInfo nic : nics)
        {
            filled.add(null == nic.netdev() ? nic : nic.withAddresses(addressesOf(nic.netdev())));
        }
        return List.copyOf(filled);
    }

    /** @return the IPv4 then IPv6 addresses of the interface in text form (no {@code %scope}), empty when it is unknown. */
    public static List<String> addressesOf(final String interfaceName)
    {
        final List<String> v4 = new ArrayList<>();
        final List<String> v6 = new ArrayList<>();
        try
        {
            final NetworkInterface nif = NetworkInterface.getByName(interfaceName);
            if (null == nif)
            {
                return List.of();
            }
            for (final InetAddress address : Collections.list(nif.getInetAddresses()))
            {
                final String text = address.getHostAddress();
                final int scope = text.indexOf('%');
                (address.getAddress().length == 4 ? v4 : v6).add(scope < 0 ? text : text.substring(0, scope));
            }
        }
        catch (final SocketException | RuntimeException ex)
        {
            return List.of();
        }
        v4.addAll(v6);
        return List.copyOf(v4);
    }
}
