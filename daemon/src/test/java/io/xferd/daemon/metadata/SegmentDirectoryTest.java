package io.xferd.daemon.metadata;

import io.xferd.daemon.auth.DescriptorSigner;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a daemon finds other daemons' segments in a store that cannot push changes ({@link SegmentDirectory}), on a
 * clock the test moves, with its poll never started: a looked-up descriptor is cached; the cache is checked against
 * the store when the poll interval has passed (at exactly the interval, not 1 ms before); a descriptor that changed
 * or disappeared is dropped, one that is the same is kept, and a store that is away keeps the cache as it is.
 */
@Timeout(30)
class SegmentDirectoryTest
{
    private static final String TOKEN = "segment-directory-test-token-0123456789";
    private static final long POLL_MS = 1_000;
    private static final long START_MS = 1_000_000;

    private final MetadataKeys keys = new MetadataKeys("test-cluster");
    private final InMemoryMetadataStore store = new InMemoryMetadataStore();
    private final DescriptorSigner signer = DescriptorSigner.withToken(TOKEN);
    private final CachedEpochClock clock = new CachedEpochClock();
    private final SegmentDirectory directory;

    SegmentDirectoryTest()
    {
        clock.update(START_MS);
        directory = new SegmentDirectory(store, keys, POLL_MS, signer, clock);
    }

    @AfterEach
    void close()
    {
        directory.close();
    }

    @Test
    void shouldCacheWhatItLookedUp() throws Exception
    {
        publish("decode", 3);

        assertThat(resolve("decode").epoch()).isEqualTo(3);

        assertThat(directory.isCached("decode")).isTrue();
        store.values.clear();
        assertThat(resolve("decode").epoch()).as("from the cache").isEqualTo(3);
    }

    @Test
    void shouldDropADescriptorThatChangedAtExactlyThePollInterval() throws Exception
    {
        publish("decode", 3);
        resolve("decode");
        publish("decode", 4); // its daemon restarted

        clock.update(START_MS + POLL_MS - 1);
        assertThat(directory.pollIfDue()).as("1 ms before the interval").isFalse();
        assertThat(directory.isCached("decode")).isTrue();

        clock.update(START_MS + POLL_MS);
        assertThat(directory.pollIfDue()).as("at exactly the interval").isTrue();
        assertThat(directory.isCached("decode")).isFalse();
        assertThat(resolve("decode").epoch()).as("read afresh").isEqualTo(4);
    }

    @Test
    void shouldDropADescriptorThatDisappearedAndKeepOneThatDidNotChange() throws Exception
    {
        publish("decode", 3);
        publish("prefill", 5);
        resolve("decode");
        resolve("prefill");
        store.delete(keys.segment("decode"));

        clock.update(START_MS + POLL_MS);
        directory.pollIfDue();

        assertThat(directory.isCached("decode")).isFalse();
        assertThat(directory.isCached("prefill")).isTrue();
    }

    @Test
    void shouldPollOnceAnIntervalFromTheLastPoll() throws Exception
    {
        clock.update(START_MS + POLL_MS + 250);
        assertThat(directory.pollIfDue()).isTrue();

        clock.update(START_MS + 2 * POLL_MS + 249);
        assertThat(directory.pollIfDue()).as("an interval counts from the last poll").isFalse();
        clock.update(START_MS + 2 * POLL_MS + 250);
        assertThat(directory.pollIfDue()).isTrue();
    }

    @Test
    void shouldKeepTheCacheWhileTheStoreIsAway() throws Exception
    {
        publish("decode", 3);
        resolve("decode");
        store.failing = true;

        clock.update(START_MS + POLL_MS);
        assertThat(directory.pollIfDue()).isTrue();

        assertThat(directory.isCached("decode")).as("established peers keep working").isTrue();
    }

    private void publish(final String name, final long epoch)
    {
        store.put(keys.segment(name), signer.sign(new SegmentDescriptor(SegmentDescriptor.VERSION,
            "127.0.0.1:1/" + name, "tcp", "127.0.0.1:1", epoch, 9, List.of(), List.of(), List.of(), Map.of())).toJson());
    }

    private SegmentDescriptor resolve(final String name) throws Exception
    {
        final CompletableFuture<SegmentDescriptor> found = new CompletableFuture<>();
        directory.resolve(name, false, (descriptor, why) ->
        {
            if (descriptor != null)
            {
                found.complete(descriptor);
            }
            else
            {
                found.completeExceptionally(new AssertionError(why));
            }
        });
        return found.get(20, TimeUnit.SECONDS);
    }
}
