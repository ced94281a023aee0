package io.xferd.daemon.rdma;

/**
 * Receives work completions from {@link RdmaDevice#poll(CompletionHandler)}: the work request's id and its
 * {@code IBV_WC_*} status (see {@link WorkCompletionStatus}).
 */
@FunctionalInterface
public interface CompletionHandler
{
    void onCompletion(long wrId, int status);
}
