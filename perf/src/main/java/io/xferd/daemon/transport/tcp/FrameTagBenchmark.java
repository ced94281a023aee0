package io.xferd.daemon.transport.tcp;

import io.xferd.daemon.auth.FrameMac;
import io.xferd.daemon.transport.PeerProtocol;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * What peer authentication adds per frame: tagging a WRITE/READ header (sign, as the sender does) and checking an
 * ACK's (verify, as the receiver does), with the session keys of a connection. A 1 MiB request in 512 KiB slices
 * is two requests and two answers, so this times four gives its cost; compare with the request's wire time.
 * In package io.xferd.daemon.transport.tcp because the frame tag is the daemon's own (package-private) class; the fork
 * settings are those of perf's ForkedWithXferdFlags, repeated so that this package does not depend on perf's.
 */
@Fork(value = 1, jvmArgsAppend = {
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Xms512m",
    "-Xmx512m",
    "-XX:+AlwaysPreTouch"
})
@State(Scope.Thread)
@Threads(1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FrameTagBenchmark
{
    private static final int TAG_AT = PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_SIGNED_LENGTH;

    private FrameMac sender;
    private FrameMac receiver;
    private ByteBuffer request;
    private ByteBuffer answer;
    private long sliceId;

    @Setup
    public void setUp()
    {
        final byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++)
        {
            key[i] = (byte)(i * 31 + 7);
        }
        sender = new FrameMac(key);
        receiver = new FrameMac(key);
        request = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.REQUEST_FIELDS_LENGTH);
        answer = FrameIo.newBuffer(PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_FIELDS_LENGTH);
    }

    /**
     * The baseline: one WRITE header written, no tag (what the sender does without authentication).
     */
    @Benchmark
    public long writeRequestOnly()
    {
        request.clear();
        request.putInt(PeerProtocol.REQUEST_FIELDS_LENGTH + 524_288).putInt(PeerProtocol.WRITE).putLong(++sliceId)
            .putLong(42).putLong(0x7f00_0000_0000L + sliceId).putLong(524_288).putLong(0x7f00_0000_0000L)
            .putLong(1 << 20);
        return request.getLong(TAG_AT - 8);
    }

    /**
     * One WRITE header tagged (what the initiator adds to each slice it sends).
     */
    @Benchmark
    public long tagRequest()
    {
        request.clear();
        request.putInt(PeerProtocol.REQUEST_FIELDS_LENGTH + 524_288).putInt(PeerProtocol.WRITE).putLong(++sliceId)
            .putLong(42).putLong(0x7f00_0000_0000L + sliceId).putLong(524_288).putLong(0x7f00_0000_0000L)
            .putLong(1 << 20);
        sender.sign(PeerProtocol.REQUEST_FIELDS_LENGTH + 524_288, PeerProtocol.WRITE, request,
            PeerProtocol.HEADER_LENGTH, TAG_AT);
        return request.getLong(TAG_AT);
    }

    /**
     * One ACK's tag computed and compared (what the initiator spends on each answer; the responder the same on
     * each request). The tag does not match (it was not made with this sequence number): the cost is the same.
     */
    @Benchmark
    public boolean checkAnswer()
    {
        answer.clear();
        answer.putInt(PeerProtocol.ACK_FIELDS_LENGTH).putInt(PeerProtocol.ACK).putLong(++sliceId).putInt(0).putInt(0)
            .putLong(0);
        return receiver.verify(PeerProtocol.ACK_FIELDS_LENGTH, PeerProtocol.ACK, answer, PeerProtocol.HEADER_LENGTH,
            PeerProtocol.HEADER_LENGTH + PeerProtocol.ACK_SIGNED_LENGTH);
    }
}
