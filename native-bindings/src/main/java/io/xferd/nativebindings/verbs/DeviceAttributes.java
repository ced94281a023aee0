package io.xferd.nativebindings.verbs;

/**
 * The fields of {@code struct ibv_device_attr} xferd uses to size its queues and check registrations.
 *
 * @param firmwareVersion    {@code fw_ver}.
 * @param nodeGuid           {@code node_guid}, host order.
 * @param maxMrSize          largest registration in bytes.
 * @param vendorId           IEEE OUI of the vendor.
 * @param vendorPartId       the vendor's part id.
 * @param maxQp              queue pairs.
 * @param maxQpWr            work requests per queue.
 * @param maxSge             scatter/gather entries per work request.
 * @param maxCq              completion queues.
 * @param maxCqe             entries per completion queue.
 * @param maxMr              memory regions.
 * @param maxPd              protection domains.
 * @param maxQpRdAtom        outstanding RDMA READs a QP may be the target of.
 * @param maxQpInitRdAtom    outstanding RDMA READs a QP may initiate.
 * @param physicalPortCount  ports, numbered from 1.
 */
public record DeviceAttributes(
    String firmwareVersion,
    long nodeGuid,
    long maxMrSize,
    int vendorId,
    int vendorPartId,
    int maxQp,
    int maxQpWr,
    int maxSge,
    int maxCq,
    int maxCqe,
    int maxMr,
    int maxPd,
    int maxQpRdAtom,
    int maxQpInitRdAtom,
    int physicalPortCount)
{
}
