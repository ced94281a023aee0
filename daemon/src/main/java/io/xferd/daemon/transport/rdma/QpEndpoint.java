package io.xferd.daemon.transport.rdma;

import io.xferd.nativebindings.verbs.Gid;
import io.xferd.nativebindings.verbs.QueuePairEndpoint;

/**
 * One side of a QP pair in the handshake: the NIC it lives on and the NIC of the peer it is meant for, and what
 * the other side needs to bring its own QP to RTR.
 *
 * @param nic     the RDMA device of this side (e.g. {@code mlx5_0}).
 * @param peerNic the device of the other side this QP connects to.
 * @param lid     the port's LID (0 on RoCE).
 * @param gid     the GID at the configured index (addresses the QP on RoCE).
 * @param qpn     QP number, 24 bits.
 * @param psn     first packet sequence number, 24 bits.
 * @param mtu     {@code IBV_MTU_*} of the port; both sides use the smaller.
 */
public record QpEndpoint(String nic, String peerNic, int lid, Gid gid, int qpn, int psn, int mtu)
{
    /**
     * @return what {@link io.xferd.nativebindings.verbs.QueuePair#toReadyToReceive} needs of the remote side.
     */
    public QueuePairEndpoint toVerbs()
    {
        return new QueuePairEndpoint(qpn, psn, lid, gid);
    }
}
