/**
 * Storage regions: a byte range of a file or block device as a region of a client's segment, moved with the same
 * READ/WRITE requests as memory. The client passes an open descriptor (registered by the control plane's
 * {@code FileRegionMapper}); each data-plane thread moves bytes through its own io_uring ({@link io.xferd.daemon.storage.StorageIo}), O_DIRECT
 * where the file system allows it, buffered otherwise; failures are typed statuses
 * ({@link io.xferd.daemon.storage.StorageStatus}). See docs/storage.md.
 * <p>
 * A leaf: it depends on no other daemon package (memory's {@code Region} holds a {@link
 * io.xferd.daemon.storage.StorageFile}; the control plane registers, the pipeline and the TCP transport move bytes).
 */
package io.xferd.daemon.storage;
