package io.xferd.topology;

/**
 * PCI addresses as sysfs writes them ({@code 0000:3b:00.0}), whatever form they arrive in: CUDA's
 * {@code cudaDeviceGetPCIBusId} and nvidia-smi write {@code 0000:3B:00.0} or {@code 00000000:3B:00.0}.
 */
public final class PciAddress
{
    private PciAddress()
    {
    }

    /**
     * @return {@code dddd:bb:dd.f} in lower case.
     * @throws IllegalArgumentException when {@code address} is not {@code domain:bus:device.function} in hex.
     */
    public static String canonical(final String address)
    {
        final String[] parts = address.trim().split("[:.]");
        if (parts.length != 4)
        {
            throw new IllegalArgumentException("not a PCI address (domain:bus:device.function): " + address);
        }
        try
        {
            return String.format("%04x:%02x:%02x.%x", Long.parseLong(parts[0], 16), Integer.parseInt(parts[1], 16),
                Integer.parseInt(parts[2], 16), Integer.parseInt(parts[3], 16));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("not a PCI address (domain:bus:device.function): " + address, ex);
        }
    }
}
