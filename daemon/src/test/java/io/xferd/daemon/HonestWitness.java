package io.xferd.daemon;

import io.xferd.ipc.CncFileDescriptor;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.MappedByteBuffer;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the hostile-input tests check after an attack: an honest client in another process still completes a
 * verified round of transfers ({@link ClientRoleMain} "rounds": a WRITE and a batch READ compared byte for byte), and
 * the daemon's heartbeat in cnc.dat still advances.
 */
final class HonestWitness implements AutoCloseable
{
    private final ChildProcess honest;
    private final MappedByteBuffer cncMapping;
    private final UnsafeBuffer cnc;
    private final Duration wait;
    private long rounds;

    private HonestWitness(final ChildProcess honest, final MappedByteBuffer cncMapping, final Duration wait)
    {
        this.honest = honest;
        this.cncMapping = cncMapping;
        this.cnc = new UnsafeBuffer(cncMapping);
        this.wait = wait;
    }

    /** Starts the honest client against the daemon serving {@code directory} and maps its cnc.dat. */
    static HonestWitness start(final Path directory, final Duration wait)
    {
        final ChildProcess honest = ChildProcess.start("honest", ClientRoleMain.class, "rounds", directory.toString(),
            "honest");
        try
        {
            honest.awaitLine("READY", wait);
            return new HonestWitness(honest,
                IoUtil.mapExistingFile(directory.resolve(CncFileDescriptor.CNC_FILE).toFile(), "cnc"), wait);
        }
        catch (final RuntimeException | Error ex)
        {
            honest.close();
            throw ex;
        }
    }

    /** @return the daemon's heartbeat now, to pass to {@link #assertHeartbeatAdvancesPast(long)} later. */
    long heartbeatMs()
    {
        return CncFileDescriptor.heartbeatMs(cnc);
    }

    void assertHeartbeatAdvancesPast(final long heartbeatMs)
    {
        SystemTests.awaitCondition(() -> CncFileDescriptor.heartbeatMs(cnc) > heartbeatMs, wait,
            () -> "the daemon's heartbeat advances");
    }

    /** One verified round of the honest client's transfers; fails the test unless every byte arrived. */
    void assertRound()
    {
        final long seed = ++rounds;
        honest.sendLine("ROUND " + seed);
        assertThat(honest.awaitLine("ROUND " + seed + " ", wait)).isEqualTo("ROUND " + seed + " ok");
    }

    long rounds()
    {
        return rounds;
    }

    @Override
    public void close()
    {
        honest.sendLine("EXIT");
        honest.close();
        IoUtil.unmap(cncMapping);
    }
}
