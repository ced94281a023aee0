/**
 * libibverbs through Panama FFM (Linux x86_64, rdma-core's {@code libibverbs.so.1}): device list, device and port
 * queries, protection domains, memory registration (lkey/rkey), completion queues, reliable-connected queue pairs
 * with their RESET -> INIT -> RTR -> RTS transitions, and posting of RDMA READ/WRITE work requests.
 * <p>
 * Entry: {@link io.xferd.nativebindings.verbs.Verbs#availability()} (never throws; unavailable with the reason when
 * the library is missing or lists no devices: the daemon refuses {@code protocol: rdma} with it and never falls back
 * to TCP), then {@link io.xferd.nativebindings.verbs.VerbsDevice#list()} -> {@code open()} ->
 * {@link io.xferd.nativebindings.verbs.VerbsContext}. Failed calls throw
 * {@link io.xferd.nativebindings.NativeException} with the captured errno (or the errno value the call returned).
 * <p>
 * Binding notes: {@code ibv_poll_cq} and {@code ibv_post_send} are static inline in {@code verbs.h}; they are called
 * through the function pointers in {@code cq->context->ops} / {@code qp->context->ops}, read once per object, with
 * work requests and completions in memory pre-allocated per object (the data path does not allocate).
 * {@code ibv_query_port} binds the exported symbol (the header's inline wrapper has none); {@code ibv_reg_mr} binds
 * the exported {@code ibv_reg_mr} or {@code ibv_reg_mr_iova2}, chosen by the access flags as the header's macro does.
 * <p>
 * Verified on machines without RDMA hardware: every struct layout and constant in
 * {@link io.xferd.nativebindings.verbs.VerbsLayouts} against the installed header (a C program compiled with gcc
 * against {@code libibverbs-dev}); the absent paths (no library, no devices); the ops-table dispatch, work-request
 * chaining and completion reading against fake provider functions (upcall stubs); the attribute masks and values of
 * the QP transitions. Not verified here: any call into a real provider (no RDMA device on the build machines), so
 * opening a device, registration, QP transitions and transfers are first exercised on RDMA hardware or soft-RoCE.
 */
package io.xferd.nativebindings.verbs;
