package io.xferd.daemon.control;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.SubmitRing;
import io.xferd.ipc.CompletionFlyweight;
import io.xferd.ipc.RecordTypes;
import io.xferd.ipc.RingsFileDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A client as the data plane sees it, without a process or a socket: a {@link ClientSession} whose rings live in
 * direct buffers, the client's producer end of its submit ring (an ordinary Agrona one-to-one ring over the same
 * bytes, as {@code ipc-client} writes it) and a reader of its completion ring. For single-threaded agent tests.
 */
public final class TestClient
{
    /** A completion as the client reads it. */
    public record Completion(long requestId, int status, long bytes)
    {
    }

    public final ClientSession session;
    /** The client's end of its submit ring. */
    public final OneToOneRingBuffer submitter;
    private final ManyToOneRingBuffer completions;
    private final CompletionFlyweight completion = new CompletionFlyweight();

    public TestClient(final int slot, final String name, final int submitCapacity)
    {
        this(slot, name, submitCapacity, 4242);
    }

    /**
     * A client whose process runs as {@code uid} (its primary gid the same number).
     */
    public TestClient(final int slot, final String name, final int submitCapacity, final int uid)
    {
        completions = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(64 * 1024 + RingBufferDescriptor.TRAILER_LENGTH)));
        final UnsafeBuffer submitRing = new UnsafeBuffer(
            ByteBuffer.allocateDirect(RingsFileDescriptor.ringLength(submitCapacity)));
        submitter = new OneToOneRingBuffer(submitRing);
        session = new ClientSession(slot, 1, name, "127.0.0.1:1/" + name, 1000 + slot, uid, uid, null, null, null,
            completions, new SubmitRing(submitRing));
    }

    /**
     * Give the session its regions, as the conductor does on REGISTER.
     */
    public TestClient regions(final Region... regions)
    {
        io.xferd.daemon.memory.RegionTable table = io.xferd.daemon.memory.RegionTable.EMPTY;
        for (final Region region : regions)
        {
            table = table.with(region);
        }
        session.regions(table);
        return this;
    }

    /**
     * @return every completion written since the last call, in order (notifications are skipped).
     */
    public List<Completion> completions()
    {
        final List<Completion> read = new ArrayList<>();
        completions.read((type, buffer, index, length) ->
        {
            if (type == RecordTypes.COMPLETION)
            {
                completion.wrap(buffer, index);
                read.add(new Completion(completion.requestId(), completion.status(), completion.bytesTransferred()));
            }
        });
        return read;
    }

    /**
     * @return the completion time of every completion written since the last call, in order (consumes them as
     * {@link #completions()} does: a test reads one or the other).
     */
    public List<Long> completionTimes()
    {
        final List<Long> read = new ArrayList<>();
        completions.read((type, buffer, index, length) ->
        {
            if (type == RecordTypes.COMPLETION)
            {
                read.add(completion.wrap(buffer, index).completeNanos());
            }
        });
        return read;
    }
}
