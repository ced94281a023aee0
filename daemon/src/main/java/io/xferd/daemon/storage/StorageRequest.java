package io.xferd.daemon.storage;

/**
 * One request's bytes between memory (a native address its caller keeps valid until completion) and a
 * {@link StorageFile}, as the {@link StorageStage} serves it: cut into operations, completed once through its
 * {@link Listener} on the stage's thread when every operation has completed with its full byte count (and, for a
 * sync file, the fdatasync after them has returned), or with a storage status. Owned and reused by its caller (no
 * allocation per request); the caller must not touch it between {@link StorageStage#submit} and the callback.
 */
public final class StorageRequest
{
    /**
     * Called once per submitted request, on the stage's thread; must not block.
     */
    @FunctionalInterface
    public interface Listener
    {
        void onStorageComplete(StorageRequest request, int status);
    }

    // set by the caller
    StorageFile file;
    boolean write;
    long regionOffset;
    long address;
    long length;
    private final Listener listener;
    /** The caller's own state, untouched by the stage. */
    public Object attachment;

    // the stage's, from submission to completion
    long fileOffset;
    long submitted;
    int inFlight;
    int errno;
    boolean truncated;
    StorageRequest next;

    public StorageRequest(final Listener listener)
    {
        this.listener = listener;
    }

    /**
     * @param regionOffset where in the region the bytes start; {@code length} bytes from there must lie in it.
     * @return this.
     */
    public StorageRequest set(
        final StorageFile file, final boolean write, final long regionOffset, final long address, final long length)
    {
        this.file = file;
        this.write = write;
        this.regionOffset = regionOffset;
        this.address = address;
        this.length = length;
        return this;
    }

    public StorageFile file()
    {
        return file;
    }

    public boolean isWrite()
    {
        return write;
    }

    public long length()
    {
        return length;
    }

    boolean failed()
    {
        return errno != 0 || truncated;
    }

    void reset()
    {
        submitted = 0;
        inFlight = 0;
        errno = 0;
        truncated = false;
        next = null;
    }

    void complete(final int status)
    {
        next = null;
        listener.onStorageComplete(this, status);
    }
}
