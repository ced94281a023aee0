package io.xferd.daemon.cli;

import io.xferd.daemon.DaemonContext;
import io.xferd.ipc.CncFileDescriptor;
import io.xferd.ipc.SystemCounter;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code xferd status}: the daemon's counters, read from its cnc file without disturbing it (as Aeron's
 * AeronStat does).
 */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Print the running daemon's state and counters, read from shared memory.")
public final class StatusCommand implements java.util.concurrent.Callable<Integer>
{
    @Option(names = "--dir", description = "Daemon directory (default: ${DEFAULT-VALUE}).")
    Path directory = DaemonContext.DEFAULT_DIRECTORY;

    @Override
    public Integer call()
    {
        final Path cncFile = directory.resolve(CncFileDescriptor.CNC_FILE);
        if (!Files.exists(cncFile))
        {
            System.out.println("no xferd daemon in " + directory + " (no " + CncFileDescriptor.CNC_FILE + ")");
            return 1;
        }
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(cncFile.toFile(), "cnc");
        try
        {
            final UnsafeBuffer cnc = new UnsafeBuffer(mapped);
            CncFileDescriptor.checkHeader(cnc);
            final long age = System.currentTimeMillis() - CncFileDescriptor.heartbeatMs(cnc);
            final boolean alive = age <= CncFileDescriptor.livenessTimeoutMs(cnc);
            System.out.printf("daemon pid %d, %s (heartbeat %d ms ago), directory %s%n",
                CncFileDescriptor.daemonPid(cnc), alive ? "running" : "NOT RUNNING", age, directory);
            final CountersReader counters = new CountersReader(
                CncFileDescriptor.countersMetadataBuffer(cnc), CncFileDescriptor.countersValuesBuffer(cnc));
            counters.forEach((value, id, label) ->
            {
                if (counters.getCounterTypeId(id) == SystemCounter.TYPE_ID)
                {
                    System.out.printf("  %-45s %,d%n", label, value);
                }
            });
            return alive ? 0 : 1;
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
    }
}
