package io.xferd.daemon.journal;

import io.xferd.daemon.journal.queue.JournalQueues;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import static io.xferd.daemon.journal.JournalRecordDescriptor.*;

/**
 * Reads a journal directory from its first record to its last (a tool's view; allocates).
 */
public final class JournalReader
{
    private final Map<Integer, String> names = new HashMap<>();
    private long skipped;

    /**
     * @return the number of records read.
     * @throws IllegalArgumentException when the directory holds no journal.
     */
    public long read(final Path directory, final Consumer<JournalEntry> consumer)
    {
        if (!Files.isDirectory(directory))
        {
            throw new IllegalArgumentException("no journal directory " + directory);
        }
        long count = 0;
        final UnsafeBuffer body = new UnsafeBuffer(new byte[MAX_RECORD_LENGTH]);
        try (SingleChronicleQueue queue = JournalQueues.openForRead(directory);
            ExcerptTailer tailer = queue.createTailer())
        {
            tailer.toStart();
            while (true)
            {
                try (DocumentContext dc = tailer.readingDocument())
                {
                    if (!dc.isPresent())
                    {
                        break;
                    }
                    if (dc.isMetaData())
                    {
                        continue;
                    }
                    final Bytes<?> bytes = dc.wire().bytes();
                    final int type = bytes.readInt();
                    final long offset = bytes.readLong();
                    if (type == NAME)
                    {
                        final int id = bytes.readInt();
                        names.put(id, bytes.readUtf8());
                        continue;
                    }
                    final int length = recordLength(type);
                    if (length < 0 || bytes.readRemaining() < length)
                    {
                        skipped++;
                        continue;
                    }
                    for (int i = 0; i < length; i += 8)
                    {
                        body.putLong(i, bytes.readLong());
                    }
                    consumer.accept(decode(type, offset, body));
                    count++;
                }
            }
        }
        return count;
    }

    static JournalEntry decode(final int type, final long offset, final UnsafeBuffer b)
    {
        return switch (type)
        {
            case SUBMITTED -> new JournalEntry(type, offset, b.getLong(REQUEST_ID), b.getLong(TRACE_ID),
                b.getInt(SUBMITTED_SLOT), b.getInt(SUBMITTED_OPCODE), 0, b.getLong(SUBMITTED_LENGTH_FIELD), 0, 0, 0,
                b.getLong(SUBMITTED_SUBMIT_NS), b.getLong(SUBMITTED_INTAKE_NS), 0, 0, 0, 0, 0);
            case COMPLETED -> new JournalEntry(type, offset, b.getLong(REQUEST_ID), b.getLong(TRACE_ID),
                b.getInt(COMPLETED_SLOT), b.getInt(COMPLETED_OPCODE), b.getInt(COMPLETED_STATUS),
                b.getLong(COMPLETED_LENGTH_FIELD), b.getLong(COMPLETED_BYTES), b.getInt(COMPLETED_PEER),
                b.getInt(COMPLETED_NIC), b.getLong(COMPLETED_SUBMIT_NS), b.getLong(COMPLETED_INTAKE_NS),
                b.getLong(COMPLETED_COMPLETE_NS), 0, 0, 0, 0);
            case SLICE -> new JournalEntry(type, offset, b.getLong(REQUEST_ID), b.getLong(TRACE_ID),
                b.getInt(SLICE_SLOT), 0, b.getInt(SLICE_STATUS), b.getLong(SLICE_LENGTH_FIELD), 0, b.getInt(SLICE_PEER),
                b.getInt(SLICE_NIC), 0, 0, 0, b.getInt(SLICE_INDEX), 0, b.getLong(SLICE_SENT_NS),
                b.getLong(SLICE_ACK_NS));
            default -> new JournalEntry(type, offset, b.getLong(REQUEST_ID), b.getLong(TRACE_ID),
                b.getInt(SLICED_SLOT), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b.getInt(SLICED_COUNT), b.getLong(SLICED_NS), 0);
        };
    }

    /**
     * @return the name of a peer or NIC id as the journal recorded it, or "#id".
     */
    public String name(final int id)
    {
        return names.getOrDefault(id, id == TransferJournal.PEER_LOCAL ? JournalNames.LOCAL :
            id == TransferJournal.NIC_SHM ? JournalNames.SHM : "#" + id);
    }

    public long skipped()
    {
        return skipped;
    }
}
