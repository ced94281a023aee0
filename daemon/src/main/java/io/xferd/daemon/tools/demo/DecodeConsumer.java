package io.xferd.daemon.tools.demo;

import io.xferd.client.ClientContext;
import io.xferd.client.Notification;
import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

/**
 * The decode side of the demo (the KV consumer): registers an empty paged KV cache, prints its layer
 * addresses for the producer (as vLLM's connectors exchange raw block pointers), waits for the timed pass's
 * notification of every layer ("layer N"; the producer's warm-up passes send "warm-up layer N", taken and passed
 * over), then checks every byte. Exit 0 when all arrived intact, 1 otherwise.
 * <p>
 * Arguments: directory segment-name layers blocks seed timeout-ms
 */
public final class DecodeConsumer
{
    /** What the timed pass's notifications start with ("layer N"); a warm-up pass's do not. */
    static final String TIMED_PASS_PREFIX = "layer ";
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

            final Set<String> layersDone = new HashSet<>();
            final long deadline = System.currentTimeMillis() + timeoutMs;
            while (layersDone.size() < layers && System.currentTimeMillis() < deadline)
            {
                for (final Notification notification : client.getNotifies())
                {
                    final String message = notification.messageAsString();
                    if (message.startsWith(TIMED_PASS_PREFIX))
                    {
                        layersDone.add(message);
                    }
                }
                // a decode engine looks once per scheduler step; polling every 100 us took ~12% of a core during the
                // transfer (10,000 wake-ups a second beside the daemon and the producer on two cores)
                LockSupport.parkNanos(POLL_INTERVAL_NANOS);
            }
            if (layersDone.size() < layers)
            {
                System.out.println("FAILED only " + layersDone.size() + " of " + layers + " layers notified");
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
}
