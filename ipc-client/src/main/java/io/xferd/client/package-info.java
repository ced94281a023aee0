/**
 * The in-process client library of xferd: link it into an inference process to share memory with the local
 * daemon and move KV-cache blocks between segments without copying them through this process.
 * Start with {@link io.xferd.client.XferClient#connect(io.xferd.client.ClientContext)}.
 * <p>
 * {@code XferClient} is a thin facade, as Aeron's client is: the public types are what a user handles
 * ({@code XferClient}, {@code ClientContext}, {@code SharedBuffer}, {@code TransferRequest}, {@code TransferBatch},
 * {@code TaskStatus}, {@code Notification} and the exceptions); the work is done by package-private parts with one
 * job each. Control plane: {@code DaemonProxy} (the control socket), {@code ClientHandshake} and {@code Welcome}
 * (HELLO/WELCOME), {@code SharedBuffers} and {@code MemoryRegistrar} (memory and its registration, one method per
 * kind), {@code GpuMemoryExporter} (CUDA IPC handles). Data plane, allocation-free: {@code ClientRings},
 * {@code TransferSubmitter} (the submit ring), {@code CompletionPoller} (the completion ring), {@code BatchTable}
 * (tasks and the in-flight count), {@code SyncTransfers} (the synchronous calls). Liveness: {@code DaemonLiveness}
 * and {@code DaemonHeartbeat}, on clocks injected through {@code ClientContext}.
 */
package io.xferd.client;
