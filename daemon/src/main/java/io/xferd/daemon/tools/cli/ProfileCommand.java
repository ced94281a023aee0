package io.xferd.daemon.tools.cli;

import io.xferd.daemon.tools.profile.LatencyProfile;
import io.xferd.daemon.tools.profile.ProfileHtml;
import io.xferd.daemon.tools.profile.ProfileReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * {@code xferd profile <journal dir>}: latency percentiles of the journal's requests by operation, size, peer and
 * NIC, and by stage; {@code --html FILE} writes a self-contained page with percentile-distribution plots.
 */
@Command(name = "profile", mixinStandardHelpOptions = true,
    description = "Latency percentile tables (p50/p90/p99/p99.9/max) from a transfer journal, by operation, size, " +
        "peer, NIC and stage; --html writes a page with percentile plots.")
public final class ProfileCommand implements java.util.concurrent.Callable<Integer>
{
    @Parameters(index = "0", description = "Journal directory (the daemon's --journal-dir, default <dir>/journal).")
    Path journal;

    @Option(names = "--since", description = "Only requests completed at or after: ISO-8601 time " +
        "(2026-11-30T05:00:00Z, or local 2026-11-30T05:00:00) or an age such as 10m, 2h, 1d, 30s.")
    String since;

    @Option(names = "--until", description = "Only requests completed before: same forms as --since.")
    String until;

    @Option(names = "--html", description = "Also write a self-contained HTML page with plots to this file.")
    Path html;

    @Option(names = "--trace", description = "Print every record of the request(s) with this trace id (hex).")
    String trace;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final long sinceNs;
        final long untilNs;
        final long traceId;
        try
        {
            sinceNs = since == null ? Long.MIN_VALUE : parseTime(since, Instant.now());
            untilNs = until == null ? Long.MAX_VALUE : parseTime(until, Instant.now());
            traceId = trace == null ? 0 : Long.parseUnsignedLong(trace.replaceFirst("^0[xX]", ""), 16);
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("xferd profile: " + ex.getMessage());
            err.flush();
            return 2;
        }
        if (!Files.isDirectory(journal))
        {
            err.println("xferd profile: no journal directory " + journal);
            err.flush();
            return 2;
        }
        final LatencyProfile profile = LatencyProfile.read(journal, sinceNs, untilNs, traceId);
        ProfileReport.print(profile, out);
        if (traceId != 0)
        {
            out.println();
            ProfileReport.printTrace(profile, traceId, out);
        }
        if (html != null)
        {
            Files.writeString(html, ProfileHtml.render(profile, "journal " + journal.toAbsolutePath() +
                (since != null ? ", since " + since : "") + (until != null ? ", until " + until : "")),
                StandardCharsets.UTF_8);
            out.println();
            out.println("wrote " + html);
        }
        out.flush();
        return 0;
    }

    /**
     * @return epoch ns of an ISO-8601 instant, a local date-time, or now minus an age ("10m", "2h", "1d", "30s").
     */
    static long parseTime(final String text, final Instant now)
    {
        final String value = text.trim();
        if (value.matches("\\d+(ms|s|m|h|d)"))
        {
            final long amount = Long.parseLong(value.replaceAll("\\D", ""));
            final Duration age = switch (value.replaceAll("\\d", "").toLowerCase(Locale.ROOT))
            {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
            return toNanos(now.minus(age));
        }
        try
        {
            return toNanos(Instant.parse(value));
        }
        catch (final DateTimeParseException ignore)
        {
            // try a local time
        }
        try
        {
            return toNanos(LocalDateTime.parse(value).atZone(ZoneId.systemDefault()).toInstant());
        }
        catch (final DateTimeParseException ex)
        {
            throw new IllegalArgumentException("not a time or an age (10m, 2h, 1d): " + text);
        }
    }

    private static long toNanos(final Instant instant)
    {
        return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
    }
}
