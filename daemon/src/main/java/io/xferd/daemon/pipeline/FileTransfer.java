package io.xferd.daemon.pipeline;

import io.xferd.daemon.memory.Region;
import io.xferd.daemon.session.BatchTracker;
import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.session.CompletionSender;
import io.xferd.daemon.storage.StorageRequest;

/**
 * A local request between a file region and mapped memory, handed by a {@link TransferWorker} to the storage stage:
 * what its completion needs once the command's pipeline slot is reused (who asked, which batch entry, the times),
 * and the borrows it holds until then (submitter, both regions). Pooled per worker, returned by the stage's thread.
 */
final class FileTransfer
{
    final StorageRequest request;
    /** Writes the completion: the one of the thread that completes it (the worker's, or the storage stage's). */
    CompletionSender sender;
    ClientSession submitter;
    ClientSession target;
    Region local;
    Region remote;
    BatchTracker batch;
    int batchEntry;
    long requestId;
    long traceId;
    int opcode;
    long length;
    long submitNanos;
    long intakeNanos;
    int nic;

    FileTransfer(final StorageRequest.Listener listener)
    {
        this.request = new StorageRequest(listener);
        request.attachment = this;
    }

    FileTransfer from(
        final TransferCommand command, final ClientSession target, final Region local, final Region remote,
        final int nic)
    {
        this.submitter = command.submitter;
        this.target = target;
        this.local = local;
        this.remote = remote;
        this.batch = command.batch;
        this.batchEntry = command.batchEntry;
        this.requestId = command.requestId;
        this.traceId = command.traceId;
        this.opcode = command.opcode;
        this.length = command.length;
        this.submitNanos = command.submitNanos;
        this.intakeNanos = command.intakeNanos;
        this.nic = nic;
        return this;
    }

    void clear()
    {
        submitter = null;
        target = null;
        local = null;
        remote = null;
        batch = null;
        sender = null;
    }
}
