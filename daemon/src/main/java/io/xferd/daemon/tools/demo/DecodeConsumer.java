package io.xferd.daemon.tools.demo;

import io.xferd.client.ClientContext;
import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;

import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * The decode side of the demo (the KV consumer): registers an empty paged KV cache, prints its layer
 * addresses for the producer (as vLLM's connectors exchange raw block pointers), waits for the timed pass's
 * notification of every layer ("layer N"; the producer's warm-up passes send "warm-up layer N", passed over: see
 * {@link TimedPassNotifications}), then for {@link #VERIFY} on its standard input, then checks every byte. Exit 0 when
 * all arrived intact, {@link #EXIT_NO_VERIFY} when {@link #VERIFY} did not come within verify-timeout-ms, 1 otherwise.
 * <p>
 * Why the word: a layer's notification rides on its last batch, while up to three earlier batches of it may still be
 * landing; only the producer sees every completion of the timed pass, so the demo writes {@link #VERIFY} once the
 * producer has exited 0 (end of input instead: the producer failed, nothing is verified). The warm-up passes push
 * other bytes than the timed pass (see {@link PrefillProducer}), so what is checked here is what the timed pass
 * landed: a daemon that completed its requests without landing their bytes leaves warm-up bytes (or zeros) behind.
 * <p>
 * Arguments: directory segment-name layers blocks seed timeout-ms [verify-timeout-ms], where timeout-ms bounds the
 * wait for the timed pass's notifications and verify-timeout-ms (default {@link #DEFAULT_VERIFY_TIMEOUT_MS}) the
 * wait for {@link #VERIFY} after them.
 */
public final class DecodeConsumer
{
    /** The line on standard input that says the producer saw every completion of the timed pass. */
    public static final String VERIFY = "VERIFY";
    /** Exit status when {@link #VERIFY} did not come in time: nothing was verified. */
    public static final int EXIT_NO_VERIFY = 3;
    /**
     * The producer exits once it saw the timed pass's last completion, a moment after its last notification: half a
     * minute leaves room for a loaded machine and still ends a decode whose producer side hung or went away silently.
     */
    public static final long DEFAULT_VERIFY_TIMEOUT_MS = 30_000;
    /** Between looks for notifications. */
    private static final long POLL_INTERVAL_NANOS = 1_000_000;

    public static void main(final String[] args)
    {
        final Path directory = Path.of(args[0]);
        final String name = args[1];
        final KvCacheLayout layout = KvCacheLayout.qwen25_7b(Integer.parseInt(args[3]));
        final int layers = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[4]);
        final long timeoutMs = Long.parseLong(args[5]);
        final long verifyTimeoutMs = args.length > 6 ? Long.parseLong(args[6]) : DEFAULT_VERIFY_TIMEOUT_MS;

        try (XferClient client = XferClient.connect(new ClientContext().directory(directory).segmentName(name)))
        {
            final SharedBuffer[] cache = new SharedBuffer[layers];
            final StringBuilder ready = new StringBuilder("READY ").append(client.segmentName());
            for (int layer = 0; layer < layers; layer++)
            {
                cache[layer] = client.allocateMemory(layout.layerBytes());
                cache[layer].segment().fill((byte)0); // a real cache is allocated and touched up front
                client.registerMemory(cache[layer], "cpu:0");
                ready.append(' ').append(cache[layer].address());
            }
            System.out.println(ready);
            System.out.flush();

            final TimedPassNotifications timedPass = new TimedPassNotifications(layers);
            final long deadline = System.currentTimeMillis() + timeoutMs;
            while (!timedPass.complete() && System.currentTimeMillis() < deadline)
            {
                for (final Notification notification : client.getNotifies())
                {
                    timedPass.offer(notification.messageAsString());
                }
                // a decode engine looks once per scheduler step; polling every 100 us took ~12% of a core during the
                // transfer (10,000 wake-ups a second beside the daemon and the producer on two cores)
                LockSupport.parkNanos(POLL_INTERVAL_NANOS);
            }
            if (!timedPass.complete())
            {
                System.out.println("FAILED only " + timedPass.count() + " of " + layers + " layers notified");
                System.exit(1);
            }
            final VerifyWord.Outcome word = awaitVerifyWord(verifyTimeoutMs);
            if (word == VerifyWord.Outcome.EXPIRED)
            {
                System.out.println("FAILED no " + VERIFY + " within " + verifyTimeoutMs + " ms: not verified");
                System.out.flush();
                System.exit(EXIT_NO_VERIFY);
            }
            if (word != VerifyWord.Outcome.VERIFY)
            {
                System.out.println("FAILED the producer did not see every completion of the timed pass: not verified");
                System.exit(1);
            }

            long corrupt = 0;
            for (int layer = 0; layer < layers; layer++)
            {
                final long mismatch = KvCacheLayout.firstMismatch(cache[layer].segment(), seed, layer);
                if (mismatch >= 0)
                {
                    System.out.println("MISMATCH layer " + layer + " at byte " + mismatch);
                    corrupt++;
                }
            }
            System.out.println(corrupt == 0 ? "VERIFIED " + layout.layerBytes() * layers + " bytes" :
                "FAILED " + corrupt + " corrupt layer(s)");
            System.out.flush();
            System.exit(corrupt == 0 ? 0 : 1);
        }
    }

    private static VerifyWord.Outcome awaitVerifyWord(final long timeoutMs)
    {
        try
        {
            return VerifyWord.await(System.in, timeoutMs);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return VerifyWord.Outcome.REFUSED;
        }
    }
}
