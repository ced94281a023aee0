package io.xferd.nativebindings.verbs;

/**
 * What two peers exchange (over the TCP handshake) to connect reliable-connected QPs: each side's QP number,
 * starting packet sequence number, LID and GID.
 *
 * @param qpNum QP number, 24 bits.
 * @param psn   first packet sequence number, 24 bits.
 * @param lid   the port's LID (0 on RoCE).
 * @param gid   the GID at the chosen index (used when the link layer is Ethernet or the GID is non-zero).
 */
public record QueuePairEndpoint(int qpNum, int psn, int lid, Gid gid)
{
}
