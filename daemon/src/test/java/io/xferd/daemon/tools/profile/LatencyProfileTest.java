package io.xferd.daemon.tools.profile;

import io.xferd.daemon.journal.JournalEntry;
import io.xferd.daemon.journal.JournalRecordDescriptor;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Percentiles, size buckets, the time window and the HTML page of {@code xferd profile}, from records whose
 * latencies are known.
 */
@Timeout(30)
class LatencyProfileTest
{
    private static final long EPOCH_OFFSET = 1_800_000_000_000_000_000L;

    private static JournalEntry completed(final long requestId, final int opcode, final long length,
        final long submit, final long queueNanos, final long totalNanos, final int status)
    {
        return new JournalEntry(JournalRecordDescriptor.COMPLETED, EPOCH_OFFSET, requestId, requestId, 0, opcode,
            status, length, status == TransferStatus.OK ? length : 0, 0, 1, submit, submit + queueNanos,
            submit + totalNanos, 0, 0, 0, 0);
    }

    @Test
    void shouldComputePercentilesByOperationSizeAndStage()
    {
        final LatencyProfile profile = new LatencyProfile(Long.MIN_VALUE, Long.MAX_VALUE, 0);
        for (int i = 1; i <= 1000; i++)
        {
            // WRITEs of 64 KiB take i us, READs of 4 MiB take 10 * i us; queue wait is a tenth of each
            profile.add(completed(i, Opcode.WRITE, 65536, i * 1_000_000L, i * 100L, i * 1_000L, TransferStatus.OK));
            profile.add(completed(i, Opcode.READ, 4 << 20, i * 1_000_000L, i * 1_000L, i * 10_000L, TransferStatus.OK));
        }
        profile.add(completed(5000, Opcode.READ, 64, 0, 0, 1, TransferStatus.TARGET_GONE));
        profile.resolveNames();

        final Histogram writes = profile.byDimension().get("operation").get("WRITE");
        assertThat(writes.getTotalCount()).isEqualTo(1000);
        assertThat((double)writes.getValueAtPercentile(50)).isCloseTo(500_000, within(1_000.0));
        assertThat((double)writes.getValueAtPercentile(99)).isCloseTo(990_000, within(2_000.0));
        assertThat((double)profile.byDimension().get("operation").get("READ").getValueAtPercentile(90))
            .isCloseTo(9_000_000, within(20_000.0));
        assertThat(profile.byDimension().get("size").keySet()).containsExactly("<=64K", "<=16M");
        assertThat(profile.byDimension().get("nic").keySet()).containsExactly("#1");
        assertThat((double)profile.stages().get(LatencyProfile.STAGE_QUEUE).getValueAtPercentile(100))
            .isCloseTo(1_000_000, within(2_000.0));
        assertThat(profile.stages().get(LatencyProfile.STAGE_TOTAL).getTotalCount()).isEqualTo(2000);
        assertThat(profile.statuses()).containsEntry("OK", 2000L).containsEntry("TARGET_GONE", 1L);

        final StringWriter text = new StringWriter();
        ProfileReport.print(profile, new PrintWriter(text));
        assertThat(text.toString()).contains("by operation", "p99.9", "not measured")
            .containsPattern("WRITE\\s+1,000\\s+500\\.\\d us\\s+900\\.\\d us\\s+990\\.\\d us");

        final String html = ProfileHtml.render(profile, "test");
        assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg", "<polyline", "99.99%", "WRITE", "&lt;=64K")
            .doesNotContain("<script", "src=", "href=", "<link");
    }

    @Test
    void shouldKeepOnlyRequestsInsideTheWindow()
    {
        final long second = 1_000_000_000L;
        final LatencyProfile profile = new LatencyProfile(EPOCH_OFFSET + 10 * second, EPOCH_OFFSET + 20 * second, 0);
        for (int s = 0; s < 30; s++)
        {
            profile.add(completed(s, Opcode.WRITE, 4096, s * second, 10, 1_000, TransferStatus.OK));
        }
        assertThat(profile.completed()).isEqualTo(10);
        assertThat(profile.outsideWindow()).isEqualTo(20);
    }

    @Test
    void shouldCollectOnlyTheTracedRecordsInsideTheWindow()
    {
        // trace ids repeat from run to run: --since picks this run's records of the traced prompt
        final long second = 1_000_000_000L;
        final long traceId = 0x1234_0000_0001L;
        final LatencyProfile profile = new LatencyProfile(EPOCH_OFFSET + 10 * second, Long.MAX_VALUE, traceId);
        for (int s = 0; s < 20; s++)
        {
            profile.add(new JournalEntry(JournalRecordDescriptor.COMPLETED, EPOCH_OFFSET, s, traceId, 0, Opcode.WRITE,
                TransferStatus.OK, 4096, 4096, 0, 1, s * second, s * second + 10, s * second + 1_000, 0, 0, 0, 0));
        }
        assertThat(profile.traced()).hasSize(10).allSatisfy(e -> assertThat(e.requestId()).isGreaterThanOrEqualTo(10));
    }

    @Test
    void shouldSortSizesIntoTheirBuckets()
    {
        assertThat(LatencyProfile.sizeBucket(4096)).isEqualTo("<=4K");
        assertThat(LatencyProfile.sizeBucket(4097)).isEqualTo("<=64K");
        assertThat(LatencyProfile.sizeBucket(1 << 20)).isEqualTo("<=1M");
        assertThat(LatencyProfile.sizeBucket(16 << 20)).isEqualTo("<=16M");
        assertThat(LatencyProfile.sizeBucket((16 << 20) + 1)).isEqualTo(">16M");
    }
}
