/**
 * The data plane: intake from the to-daemon ring into a Disruptor pipeline, transfer workers that move the
 * bytes, and completion records back into each client's ring. Nothing here allocates, locks or logs per
 * request; progress shows in the system counters.
 */
package io.xferd.daemon.pipeline;
