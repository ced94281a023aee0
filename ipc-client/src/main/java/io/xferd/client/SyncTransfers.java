package io.xferd.client;

import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.agrona.collections.LongArrayList;

/**
 * Mooncake's synchronous calls: submit, wait for the completion, throw {@link TransferFailedException} when the bytes
 * did not all arrive. Many ranges go as SUBMIT_BATCH records of up to the daemon's most entries each, one completion
 * per record. Each call takes a batch and gives it back; a batch still pending when a wait gave up is kept aside and
 * freed by a later call once its completions came, so that stalls do not use up the batch slots.
 */
final class SyncTransfers
{
    private final BatchTable batches;
    private final TransferSubmitter submitter;
    private final CompletionPoller poller;
    private final long timeoutMs;
    private final int maxBatchEntries;
    private final TransferRequest request = new TransferRequest();
    private final TransferBatch transfers;
    private final LongArrayList unfinished = new LongArrayList();

    SyncTransfers(final BatchTable batches, final TransferSubmitter submitter, final CompletionPoller poller,
        final long timeoutMs, final int maxBatchEntries)
    {
        this.batches = batches;
        this.submitter = submitter;
        this.poller = poller;
        this.timeoutMs = timeoutMs;
        this.maxBatchEntries = maxBatchEntries;
        this.transfers = new TransferBatch(Math.min(maxBatchEntries, 64));
    }

    synchronized void transfer(
        final int opcode, final long segment, final long localAddress, final long targetAddress, final long length)
    {
        final long batchId = takeBatch(1);
        try
        {
            submitter.submit(batchId, request.set(opcode, localAddress, segment, targetAddress, length));
            if (!poller.awaitBatch(batchId, timeoutMs))
            {
                throw new TransferFailedException(Opcode.name(opcode), batches.batch(batchId).status[0]);
            }
        }
        finally
        {
            giveBack(batchId);
        }
    }

    synchronized void transfer(final int opcode, final long segment, final long[] localAddresses,
        final long[] targetAddresses, final long[] lengths)
    {
        if (localAddresses.length != targetAddresses.length || localAddresses.length != lengths.length)
        {
            throw new IllegalArgumentException("addresses and lengths differ in count");
        }
        if (localAddresses.length == 0)
        {
            return;
        }
        final long batchId = takeBatch((localAddresses.length + maxBatchEntries - 1) / maxBatchEntries);
        try
        {
            for (int first = 0; first < localAddresses.length; first += maxBatchEntries)
            {
                transfers.reset(opcode, segment);
                for (int i = first; i < Math.min(localAddresses.length, first + maxBatchEntries); i++)
                {
                    transfers.add(localAddresses[i], targetAddresses[i], lengths[i]);
                }
                submitter.submit(batchId, transfers);
            }
            if (!poller.awaitBatch(batchId, timeoutMs))
            {
                throw new TransferFailedException(Opcode.name(opcode), firstFailure(batches.batch(batchId)));
            }
        }
        finally
        {
            giveBack(batchId);
        }
    }

    /**
     * @return how many batches wait to be freed once their late completions come.
     */
    synchronized int unfinishedBatches()
    {
        return unfinished.size();
    }

    private long takeBatch(final int tasks)
    {
        freeFinished();
        return batches.allocate(tasks);
    }

    private void giveBack(final long batchId)
    {
        if (batches.batch(batchId).pending == 0)
        {
            batches.free(batchId);
        }
        else
        {
            unfinished.addLong(batchId);
        }
        freeFinished();
    }

    /**
     * Free the batches kept aside whose completions came meanwhile (this call's wait polled them in).
     */
    private void freeFinished()
    {
        for (int i = unfinished.size() - 1; i >= 0; i--)
        {
            final long batchId = unfinished.getLong(i);
            if (batches.batch(batchId).pending == 0)
            {
                batches.free(batchId);
                unfinished.removeAt(i);
            }
        }
    }

    private static int firstFailure(final BatchTable.Batch batch)
    {
        for (int task = 0; task < batch.submitted; task++)
        {
            if (batch.status[task] != TransferStatus.OK)
            {
                return batch.status[task];
            }
        }
        return TransferStatus.OK;
    }
}
