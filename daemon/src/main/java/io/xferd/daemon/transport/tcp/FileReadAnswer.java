package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.storage.StorageRequest;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * The answer to a peer's READ of a file region, while the storage stage reads the slice into this answer's own
 * buffer: queued in the connection's {@link BufferedChannel} like any answer, its header filled in only once the
 * read completed (OK with the bytes, or the storage status without them), so the connection's thread goes on
 * reading requests meanwhile. Holds the region borrowed until the answer has left. Reused (one of
 * {@link FileReadAnswers}).
 */
final class FileReadAnswer implements StorageRequest.Listener
{
    static final int PENDING = Integer.MIN_VALUE;

    final StorageRequest request = new StorageRequest(this);
    final MemorySegment buffer;
    private final ByteBuffer view;
    long sliceId;
    Region region;
    int length;
    // done (0) until a slice is asked of it: an answer never used is never waited for
    private volatile int status;
    private volatile Thread waiter;

    FileReadAnswer(final MemorySegment buffer)
    {
        this.buffer = buffer;
        this.view = buffer.asByteBuffer();
    }

    /**
     * Ready the answer for a slice (before its request is submitted).
     */
    FileReadAnswer of(final long sliceId, final Region region, final int length)
    {
        this.sliceId = sliceId;
        this.region = region;
        this.length = length;
        this.status = PENDING;
        return this;
    }

    @Override
    public void onStorageComplete(final StorageRequest request, final int status)
    {
        this.status = status;
        final Thread thread = waiter;
        if (thread != null)
        {
            LockSupport.unpark(thread);
        }
    }

    /**
     * The stage did not take the request: nothing is in flight for this answer.
     */
    void abandon()
    {
        status = 0;
    }

    boolean isDone()
    {
        return status != PENDING;
    }

    /**
     * Wait (the connection's thread) until the read completed.
     *
     * @return its status.
     */
    int await()
    {
        int result = status;
        if (result == PENDING)
        {
            waiter = Thread.currentThread();
            while ((result = status) == PENDING)
            {
                LockSupport.parkNanos(this, 100_000);
            }
            waiter = null;
        }
        return result;
    }

    /**
     * @return the bytes read, as the payload to send.
     */
    ByteBuffer payload()
    {
        return view.clear().limit(length);
    }
}
