/**
 * The in-process client library of xferd: link it into an inference process to share memory with the local
 * daemon and move KV-cache blocks between segments without copying them through this process.
 * Start with {@link io.xferd.client.XferClient#connect(io.xferd.client.ClientContext)}.
 */
package io.xferd.client;
