/**
 * The RDMA transport between daemons ({@code protocol: rdma}). {@link io.xferd.daemon.transport.rdma.RdmaTransport} opens
 * peers (descriptor with rkeys, then the QP exchange on the RPC port) and checks each request against the peer's
 * descriptor; {@link io.xferd.daemon.transport.rdma.RdmaAgent} posts slices as RDMA READ/WRITE work requests and polls the
 * completion queues; {@link io.xferd.daemon.transport.rdma.RdmaMemoryRegistrar} registers every region with every device.
 * Verbs are reached only through {@link io.xferd.daemon.transport.rdma.RdmaDevice} and
 * {@link io.xferd.daemon.transport.rdma.RdmaQueuePair}, implemented on libibverbs by
 * {@link io.xferd.daemon.transport.rdma.VerbsRdmaDevice} and by a simulated fabric in the tests.
 */
package io.xferd.daemon.transport.rdma;
