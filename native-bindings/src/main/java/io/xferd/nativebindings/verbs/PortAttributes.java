package io.xferd.nativebindings.verbs;

/**
 * The fields of {@code struct ibv_port_attr} needed to bring a reliable-connected QP up and to report a port.
 *
 * @param state        {@code IBV_PORT_*}, {@link VerbsLayouts#IBV_PORT_ACTIVE} when usable.
 * @param maxMtu       {@code IBV_MTU_*}.
 * @param activeMtu    {@code IBV_MTU_*}, the path MTU to use.
 * @param gidTableLength entries in the GID table.
 * @param lid          local identifier (InfiniBand; 0 on RoCE).
 * @param linkLayer    {@code IBV_LINK_LAYER_*}.
 * @param activeWidth  encoded link width.
 * @param activeSpeed  encoded link speed.
 */
public record PortAttributes(
    int state, int maxMtu, int activeMtu, int gidTableLength, int lid, int linkLayer, int activeWidth, int activeSpeed)
{
    public boolean isActive()
    {
        return state == VerbsLayouts.IBV_PORT_ACTIVE;
    }

    /**
     * @return true for RoCE, where QPs must be addressed by GID ({@code is_global}).
     */
    public boolean isEthernet()
    {
        return linkLayer == VerbsLayouts.IBV_LINK_LAYER_ETHERNET;
    }
}
