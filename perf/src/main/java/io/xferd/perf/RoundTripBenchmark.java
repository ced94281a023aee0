package io.xferd.perf;

import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * Submit-to-completion round trip of one 64-byte local WRITE through an in-process daemon: the client claims a
 * record in the daemon's to-daemon ring, the daemon's data-plane thread (intake + transfer worker, SHARED
 * threading) validates it, copies 64 bytes between two registered ranges of the client's own memfd and writes a
 * completion into the client's completion ring, which the benchmark thread spins on.
 * <p>
 * Compare with {@link RawRingPingPongBenchmark} measured in the same run: the same number of threads, the
 * benchmark thread spinning for the answer in both, and the answering thread using the same idle strategy
 * ({@link #idle}, the daemon's default "backoff" unless {@code -p idle=busy-spin}).
 * <p>
 * Per operation: {@code allocateBatch(1)}, {@code submitTransfer}, spin on {@code pendingTasks} until done,
 * {@code freeBatch}. The request object is reused; after warm-up nothing here, in the client or in the daemon
 * should allocate ({@code -prof gc}: gc.alloc.rate.norm, which counts all threads of the JVM, so the daemon's
 * too).
 */
@State(Scope.Benchmark)
@Threads(1)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RoundTripBenchmark extends ForkedWithXferdFlags
{
    static final int MESSAGE_LENGTH = 64;
    private static final int TARGET_OFFSET = 2048;

    /**
     * The daemon's data-plane idle strategy (DaemonContext names: backoff, busy-spin, yielding).
     */
    @Param({"backoff"})
    public String idle;

    /**
     * The daemon's transfer journal: "on" (the daemon's default) or "off" (--no-journal), to measure its cost.
     */
    @Param({"on"})
    public String journal;

    private InProcessDaemon daemon;
    private XferClient client;
    private SharedBuffer memory;
    private final TransferRequest request = new TransferRequest();
    private final ThreadAllocations allocations = ThreadAllocations.ENABLED ? new ThreadAllocations() : null;
    private long operations;

    @Setup(Level.Trial)
    public void setUp()
    {
        daemon = new InProcessDaemon(idle, journal);
        client = daemon.connect("perf-round-trip");
        memory = client.allocateMemory(4096);
        client.registerMemory(memory, "cpu:0");
        for (int i = 0; i < MESSAGE_LENGTH; i++)
        {
            memory.segment().set(ValueLayout.JAVA_BYTE, i, (byte)(i + 1));
        }
        request.set(Opcode.WRITE, memory.address(), client.ownSegment(),
            memory.address() + TARGET_OFFSET, MESSAGE_LENGTH);

        // one checked transfer: the bytes really land
        if (roundTrip() != TaskStatus.COMPLETED ||
            memory.segment().get(ValueLayout.JAVA_BYTE, TARGET_OFFSET + MESSAGE_LENGTH - 1) != (byte)MESSAGE_LENGTH)
        {
            throw new IllegalStateException("the 64-byte transfer did not complete");
        }
    }

    @Setup(Level.Iteration)
    public void startIteration()
    {
        operations = 0;
        if (allocations != null)
        {
            allocations.start();
        }
    }

    @TearDown(Level.Iteration)
    public void endIteration()
    {
        if (allocations != null)
        {
            allocations.report("round trip, idle " + idle, operations);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (client != null)
        {
            client.close();
        }
        if (daemon != null)
        {
            daemon.close();
        }
    }

    /**
     * The round trip as a latency-sensitive caller writes it: submit, then spin on the completion ring.
     */
    @Benchmark
    @BenchmarkMode({Mode.SampleTime, Mode.AverageTime})
    public int roundTrip()
    {
        final XferClient client = this.client;
        final long batch = client.allocateBatch(1);
        client.submitTransfer(batch, request);
        while (client.pendingTasks(batch) > 0)
        {
            Thread.onSpinWait();
        }
        final int state = client.taskState(batch, 0);
        client.freeBatch(batch);
        operations++;
        if (state != TaskStatus.COMPLETED)
        {
            throw new IllegalStateException("transfer ended in state " + state);
        }
        return state;
    }

    /**
     * The same through the blocking API, {@code awaitBatch}, which waits with the client's default idle strategy
     * (spin, yield, then park 1..50 us): what a caller that does not spin itself gets.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    public boolean roundTripAwaitBatch()
    {
        final XferClient client = this.client;
        final long batch = client.allocateBatch(1);
        client.submitTransfer(batch, request);
        final boolean ok = client.awaitBatch(batch, 10_000);
        client.freeBatch(batch);
        operations++;
        if (!ok)
        {
            throw new IllegalStateException("transfer failed");
        }
        return ok;
    }
}
