package io.xferd.daemon.metadata;

import io.xferd.daemon.session.ClientSession;
import io.xferd.daemon.transport.SegmentDescriptor;
import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a daemon keeps its segments in the metadata store ({@link SegmentPublisher}), step by step on a clock the test
 * moves, with its thread never started: a connected client's descriptor is put on the next step and deleted when it
 * disconnects; the keys are renewed every TTL/3 (at exactly the renewal time, not 1 ms before); a store that fails is
 * retried after 200 ms, then 400, 800, ... up to 5 s (not 1 ms early), every segment is put again when it answers,
 * and the back-off starts from 200 ms after that. The store is an {@link InMemoryMetadataStore}.
 */
class SegmentPublisherTest
{
    private static final long TTL_MS = 3_000;
    private static final long RENEW_MS = TTL_MS / 3;
    private static final long START_MS = 1_000_000;

    private final MetadataKeys keys = new MetadataKeys("test-cluster");
    private final InMemoryMetadataStore store = new InMemoryMetadataStore();
    private final CachedEpochClock clock = new CachedEpochClock();
    private final SegmentPublisher publisher = new SegmentPublisher(store, keys, SegmentPublisherTest::describe,
        TTL_MS, descriptor -> true, clock);
    private final ClientSession prefill = session("prefill");

    SegmentPublisherTest()
    {
        clock.update(START_MS);
    }

    @AfterEach
    void close()
    {
        publisher.close();
    }

    @Test
    void shouldPutAConnectedClientsDescriptorAndDeleteItWhenItDisconnects()
    {
        publisher.changed(prefill);

        assertThat(publisher.doWork()).isTrue();

        assertThat(publisher.isReachable()).isTrue();
        assertThat(store.values).containsOnlyKeys(keys.segment("prefill"));
        assertThat(store.values.get(keys.segment("prefill"))).contains("\"prefill\"");

        publisher.removed(prefill);
        publisher.doWork();

        assertThat(store.values).isEmpty();
    }

    @Test
    void shouldRenewAtExactlyTheRenewalTime()
    {
        publisher.changed(prefill);
        publisher.doWork();
        final int renewals = store.renewals;

        clock.update(START_MS + RENEW_MS - 1);
        publisher.doWork();
        assertThat(store.renewals).as("1 ms before").isEqualTo(renewals);

        clock.update(START_MS + RENEW_MS);
        publisher.doWork();
        assertThat(store.renewals).as("at exactly the renewal time").isEqualTo(renewals + 1);
        assertThat(store.lastRenewed).containsOnlyKeys(keys.segment("prefill"));
    }

    @Test
    void shouldRetryAnUnreachableStoreWithABackOffDoublingUpToFiveSeconds()
    {
        store.failing = true;
        publisher.changed(prefill);
        assertThat(publisher.doWork()).as("the first attempt").isTrue();
        assertThat(publisher.isReachable()).isFalse();

        long failedAt = START_MS;
        long backOff = 200;
        for (int attempt = 1; attempt <= 8; attempt++)
        {
            final int calls = store.calls;
            clock.update(failedAt + backOff - 1);
            assertThat(publisher.doWork()).as("attempt %d, 1 ms early", attempt).isFalse();
            assertThat(store.calls).as("the store is left alone").isEqualTo(calls);

            clock.update(failedAt + backOff);
            assertThat(publisher.doWork()).as("attempt %d, on time", attempt).isTrue();
            assertThat(store.calls).isGreaterThan(calls);
            failedAt += backOff;
            backOff = Math.min(5_000, backOff * 2);
        }
        assertThat(backOff).isEqualTo(5_000);
        assertThat(store.values).isEmpty();
    }

    @Test
    void shouldPutEverySegmentAgainWhenTheStoreAnswersAgainAndBackOffFromTheStart()
    {
        final ClientSession decode = session("decode");
        publisher.changed(prefill);
        publisher.changed(decode);
        publisher.doWork();
        assertThat(store.values).hasSize(2);

        store.failing = true;
        store.values.clear(); // what the store lost while it was away
        clock.update(START_MS + RENEW_MS);
        publisher.doWork();
        assertThat(publisher.isReachable()).isFalse();
        for (long backOff = 200, at = START_MS + RENEW_MS; backOff <= 800; backOff *= 2)
        {
            at += backOff;
            clock.update(at);
            publisher.doWork();
        }
        final long failedAt = clock.time();

        store.failing = false;
        clock.update(failedAt + 1_600);
        publisher.doWork();

        assertThat(publisher.isReachable()).isTrue();
        assertThat(store.values).containsOnlyKeys(keys.segment("prefill"), keys.segment("decode"));

        store.failing = true;
        clock.update(failedAt + 1_600 + RENEW_MS);
        publisher.doWork();
        assertThat(publisher.isReachable()).isFalse();
        final int calls = store.calls;
        clock.update(failedAt + 1_600 + RENEW_MS + 199);
        assertThat(publisher.doWork()).as("the back-off starts from 200 ms again").isFalse();
        clock.update(failedAt + 1_600 + RENEW_MS + 200);
        assertThat(publisher.doWork()).isTrue();
        assertThat(store.calls).isGreaterThan(calls);
    }

    private static ClientSession session(final String name)
    {
        return new ClientSession(0, 1, name, "127.0.0.1:1/" + name, 1, 0, 0, null, null, null, null, null);
    }

    private static SegmentDescriptor describe(final ClientSession session)
    {
        return new SegmentDescriptor(SegmentDescriptor.VERSION, session.segmentName(), "tcp", "127.0.0.1:1", 3, 9,
            List.of(), List.of(), List.of(), Map.of());
    }
}
