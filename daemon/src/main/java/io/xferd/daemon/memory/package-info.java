/**
 * The daemon's memory registry: regions a client shared (owner address, length, the daemon's mapping) kept per
 * segment in copy-on-write tables that the data plane searches without locks, and reference counts that keep
 * a mapping alive while a transfer copies through it.
 */
package io.xferd.daemon.memory;
