package io.xferd.daemon.transport.rdma;

/**
 * Receives work completions from {@link RdmaDevice#poll(CompletionHandler)}: the work request's id and its
 * {@code IBV_WC_*} status (see {@link WorkCompletionStatus}).
 */
@FunctionalInterface
public interface CompletionHandler
{
    /**
     * @param vendorError the provider's {@code vendor_err} (e.g. mlx5's syndrome), meaningful when it failed.
     */
    void onCompletion(long wrId, int status, int vendorError);
}
