package io.xferd.topology;

/** How a NIC is driven: through the kernel's socket stack, or through verbs. */
public enum NicKind
{
    /** A netdev of {@code /sys/class/net} with no RDMA device on top: TCP only. */
    ETHERNET,
    /** A device of {@code /sys/class/infiniband} (InfiniBand, RoCE); its netdev, if any, is folded into it. */
    RDMA
}
