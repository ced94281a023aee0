package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.storage.StorageRequest;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * The answer to a peer's READ or WRITE of a file region while the storage stage moves the slice's bytes between
 * the file and this answer's own buffer: a READ's bytes are read into it and sent from it, a WRITE's payload was
 * received into it and is written from it. Queued in the connection's {@link BufferedChannel} like any answer, its
 * header filled in only once the storage request completed (OK, with the bytes of a READ; or the storage status
 * without any), so the connection's thread goes on serving requests meanwhile. Holds the region borrowed until the
 * answer has left. Reused (one of {@link FileAnswers}).
 */
final class FileAnswer implements StorageRequest.Listener
{
    static final int PENDING = Integer.MIN_VALUE;

    final StorageRequest request = new StorageRequest(this);
    final MemorySegment buffer;
    private final ByteBuffer view;
    long sliceId;
    Region region;
    int length;
    boolean write;
    // done (0) until a slice is asked of it: an answer never used is never waited for
    private volatile int status;
    private volatile Thread waiter;
    private final FileAnswers pool;

    FileAnswer(final MemorySegment buffer, final FileAnswers pool)
    {
        this.buffer = buffer;
        this.view = buffer.asByteBuffer();
        this.pool = pool;
    }

    /**
     * Ready the answer for a slice (before its request is submitted).
     */
    FileAnswer of(final long sliceId, final Region region, final int length, final boolean write)
    {
        this.sliceId = sliceId;
        this.region = region;
        this.length = length;
        this.write = write;
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
        pool.completed();
    }

    /**
     * The request was not submitted, or failed before it was: the answer is done with {@code status}.
     */
    void completeWith(final int status)
    {
        this.status = status;
    }

    /**
     * The stage did not take the request and nothing is in flight for this answer: it is not queued either.
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
     * Wait (the connection's thread) until the storage request completed.
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
     * Wait (the connection's thread) at most {@code nanos} for the storage request to complete; its completion
     * wakes the thread at once.
     *
     * @return true when it has completed.
     */
    boolean awaitFor(final long nanos)
    {
        if (status != PENDING)
        {
            return true;
        }
        waiter = Thread.currentThread();
        if (status == PENDING)
        {
            LockSupport.parkNanos(this, nanos);
        }
        waiter = null;
        return status != PENDING;
    }

    /**
     * @return the status of a completed request (call after {@link #isDone()} or {@link #await()}).
     */
    int status()
    {
        return status;
    }

    /**
     * @return the slice's bytes in the buffer: a READ's payload to send, or where a WRITE's payload is received.
     */
    ByteBuffer bytes()
    {
        return view.clear().limit(length);
    }

    /**
     * @return how many payload bytes the answer carries: a READ's length when it completed OK, else none.
     */
    int payloadLength()
    {
        return !write && status == io.xferd.ipc.TransferStatus.OK ? length : 0;
    }
}
