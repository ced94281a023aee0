package io.xferd.daemon.journal.queue;

import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

import java.nio.file.Path;

/**
 * Opening the journal's Chronicle Queue, for the daemon (appending) and for the tools (reading).
 */
public final class JournalQueues
{
    private JournalQueues()
    {
    }

    static
    {
        // a daemon must never make a network call its operator did not configure
        System.setProperty("chronicle.analytics.disable", "true");
    }

    /**
     * @param name a Chronicle roll cycle: FAST_HOURLY, HOURLY, FAST_DAILY, DAILY, FIVE_MINUTELY, MINUTELY, ...
     *             (TEST_SECONDLY for tests).
     */
    public static RollCycle rollCycle(final String name)
    {
        for (final Class<? extends Enum<?>> type : java.util.List.<Class<? extends Enum<?>>>of(
            RollCycles.class, LegacyRollCycles.class, TestRollCycles.class))
        {
            for (final Enum<?> constant : type.getEnumConstants())
            {
                if (constant.name().equalsIgnoreCase(name))
                {
                    return (RollCycle)constant;
                }
            }
        }
        throw new IllegalArgumentException("unknown journal roll cycle: " + name +
            " (e.g. FAST_HOURLY, HOURLY, FAST_DAILY, DAILY, FIVE_MINUTELY, MINUTELY)");
    }

    public static SingleChronicleQueue openForAppend(final Path directory, final String rollCycle)
    {
        return SingleChronicleQueueBuilder.binary(directory).rollCycle(rollCycle(rollCycle)).build();
    }

    public static SingleChronicleQueue openForRead(final Path directory)
    {
        return SingleChronicleQueueBuilder.binary(directory).readOnly(true).build();
    }
}
