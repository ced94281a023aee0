package io.xferd.daemon.transport.rdma;

/**
 * A memory registration on one device: the key this side's SGEs use and the key peers put in their work
 * requests. Closing it deregisters the memory.
 */
public interface RdmaMemoryKeys extends AutoCloseable
{
    int lkey();

    int rkey();

    @Override
    void close();
}
