package io.xferd.perf;

import io.xferd.daemon.config.DaemonContext;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
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

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The floor under {@link RoundTripBenchmark}: a raw Agrona ping-pong over two rings on direct buffers, of the kinds
 * the daemon's protocol uses: the ping ring a {@link OneToOneRingBuffer}, as a client's submit ring is, and the pong
 * ring a {@link ManyToOneRingBuffer}, as a client's completion ring is (several daemon threads write a client's
 * completions, so a claim there is a compare-and-set), and also a {@link OneToOneRingBuffer} (a plain-store claim: the
 * floor used until round four), see {@link #completionRing}. The benchmark thread writes a 64-byte message into the ping ring and spins
 * on the pong ring;
 * a responder thread reads each ping and echoes its 64 bytes into the pong ring, idling between messages with
 * the very idle strategy the daemon's data plane uses ({@link DaemonContext#newIdleStrategy()} for the same
 * {@link #idle} name). So both benchmarks have one spinning caller and one answering thread that idles alike;
 * what remains between them is the daemon's work (validation, Disruptor hand-off, region lookup and copy,
 * completion record, batch bookkeeping).
 */
@State(Scope.Benchmark)
@Threads(1)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RawRingPingPongBenchmark extends ForkedWithXferdFlags
{
    private static final int RING_CAPACITY = 64 * 1024;
    private static final int MSG_TYPE = 1;

    /**
     * The responder's idle strategy, by the daemon's names; keep it equal to {@link RoundTripBenchmark#idle}.
     */
    @Param({"backoff"})
    public String idle;

    /**
     * The pong ring's kind: "many-to-one" (a client's completion ring: the floor the target is measured against) or
     * "one-to-one" (the floor until round four); both by default, so every run shows both.
     */
    @Param({"many-to-one", "one-to-one"})
    public String completionRing;

    private OneToOneRingBuffer ping;
    private RingBuffer pong;
    private final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(RoundTripBenchmark.MESSAGE_LENGTH));
    private final PongHandler pongHandler = new PongHandler();
    private Thread responder;
    private volatile boolean running;

    private static final class PongHandler implements MessageHandler
    {
        long received;

        @Override
        public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
        {
            received += buffer.getByte(index + length - 1);
        }
    }

    private static final class Echo implements MessageHandler
    {
        private final RingBuffer out;

        Echo(final RingBuffer out)
        {
            this.out = out;
        }

        @Override
        public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
        {
            while (!out.write(msgTypeId, buffer, index, length))
            {
                Thread.onSpinWait();
            }
        }
    }

    @Setup(Level.Trial)
    public void setUp()
    {
        ping = new OneToOneRingBuffer(newBuffer());
        pong = switch (completionRing)
        {
            case "many-to-one" -> new ManyToOneRingBuffer(newBuffer());
            case "one-to-one" -> new OneToOneRingBuffer(newBuffer());
            default -> throw new IllegalArgumentException("completionRing: many-to-one or one-to-one, not " +
                completionRing);
        };
        for (int i = 0; i < RoundTripBenchmark.MESSAGE_LENGTH; i++)
        {
            message.putByte(i, (byte)1);
        }
        final IdleStrategy idleStrategy = new DaemonContext().idleStrategy(idle).newIdleStrategy();
        final Echo echo = new Echo(pong);
        running = true;
        responder = new Thread(() ->
        {
            while (running)
            {
                idleStrategy.idle(ping.read(echo));
            }
        }, "raw-ring-responder");
        responder.setDaemon(true);
        responder.start();
    }

    private static UnsafeBuffer newBuffer()
    {
        return new UnsafeBuffer(ByteBuffer.allocateDirect(RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException
    {
        running = false;
        responder.join(5_000);
    }

    @Benchmark
    @BenchmarkMode({Mode.SampleTime, Mode.AverageTime})
    public long pingPong()
    {
        final PongHandler handler = pongHandler;
        final long before = handler.received;
        while (!ping.write(MSG_TYPE, message, 0, RoundTripBenchmark.MESSAGE_LENGTH))
        {
            Thread.onSpinWait();
        }
        while (handler.received == before)
        {
            if (pong.read(handler) == 0)
            {
                Thread.onSpinWait();
            }
        }
        return handler.received;
    }
}
