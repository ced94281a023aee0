package io.xferd.daemon.tools.profile;

import org.HdrHistogram.Histogram;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The profile as one self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched): per dimension a
 * percentile-distribution plot, latency against percentile on a log scale of 1/(1-p) as HdrHistogram's plotter
 * draws it, so the tail gets as much room as the median, and the table beside it.
 */
public final class ProfileHtml
{
    private static final String[] COLOURS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
    private static final int WIDTH = 760;
    private static final int HEIGHT = 330;
    private static final int LEFT = 70;
    private static final int RIGHT = 40;
    private static final int TOP = 20;
    private static final int BOTTOM = 45;
    private static final double MAX_NINES = 5; // 99.999%

    private ProfileHtml()
    {
    }

    public static String render(final LatencyProfile profile, final String source)
    {
        final StringBuilder html = new StringBuilder(64 * 1024);
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>xferd latency profile")
            .append("</title>\n<style>\n")
            .append("body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px;color:#222;")
            .append("max-width:1180px}\nh1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin:28px 0 6px}")
            .append(".sub{color:#666;font-size:13px}\n.row{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}")
            .append("\ntable{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;text-align:right;")
            .append("border-bottom:1px solid #e5e5e5}th:first-child,td:first-child{text-align:left}")
            .append("\nth{background:#f4f4f4}.swatch{display:inline-block;width:10px;height:10px;margin-right:6px;")
            .append("border-radius:2px}\nsvg text{font-size:11px;fill:#444}.note{color:#666;font-size:12px}\n")
            .append("</style></head><body>\n");
        html.append("<h1>xferd latency profile</h1>\n<div class=\"sub\">").append(escape(source)).append("<br>");
        if (profile.completed() == 0)
        {
            html.append("no completed requests in the window</div></body></html>\n");
            return html.toString();
        }
        html.append(String.format(Locale.ROOT, "%,d completed requests, %s to %s; statuses %s",
            profile.completed(), Instant.ofEpochSecond(0, profile.firstEpochNs()),
            Instant.ofEpochSecond(0, profile.lastEpochNs()), escape(profile.statuses().toString())))
            .append("<br>latency of successful requests: client submit &rarr; completion written by the daemon")
            .append("</div>\n");
        section(html, "Stages", profile.stages());
        html.append("<p class=\"note\">").append(escape(LatencyProfile.DELIVERY_NOTE)).append("</p>\n");
        for (final Map.Entry<String, Map<String, Histogram>> dimension : profile.byDimension().entrySet())
        {
            section(html, "By " + dimension.getKey(), dimension.getValue());
        }
        html.append("</body></html>\n");
        return html.toString();
    }

    private static void section(final StringBuilder html, final String title, final Map<String, Histogram> rows)
    {
        html.append("<h2>").append(escape(title)).append("</h2>\n<div class=\"row\">\n");
        plot(html, title, rows);
        html.append("<table><tr><th>").append(escape(title.toLowerCase(Locale.ROOT)))
            .append("</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
        int series = 0;
        for (final Map.Entry<String, Histogram> row : rows.entrySet())
        {
            final Histogram h = row.getValue();
            html.append("<tr><td><span class=\"swatch\" style=\"background:")
                .append(COLOURS[series++ % COLOURS.length]).append("\"></span>").append(escape(row.getKey()))
                .append("</td><td>").append(String.format(Locale.ROOT, "%,d", h.getTotalCount())).append("</td>");
            for (final double p : ProfileReport.PERCENTILES)
            {
                html.append("<td>").append(ProfileReport.duration(h.getValueAtPercentile(p))).append("</td>");
            }
            html.append("<td>").append(ProfileReport.duration(h.getMaxValue())).append("</td></tr>\n");
        }
        html.append("</table>\n</div>\n");
    }

    private static void plot(final StringBuilder html, final String title, final Map<String, Histogram> rows)
    {
        long maxValue = 1;
        for (final Histogram h : rows.values())
        {
            if (h.getTotalCount() > 0)
            {
                maxValue = Math.max(maxValue, h.getValueAtPercentile(percentileAt(MAX_NINES)));
            }
        }
        final double[] unit = unit(maxValue);
        final double yMax = niceCeiling(maxValue / unit[0]);
        final int plotWidth = WIDTH - LEFT - RIGHT;
        final int plotHeight = HEIGHT - TOP - BOTTOM;
        html.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
            .append(HEIGHT).append("\" role=\"img\" aria-label=\"").append(escape(title))
            .append(" percentile distribution\">\n<rect x=\"").append(LEFT).append("\" y=\"").append(TOP)
            .append("\" width=\"").append(plotWidth).append("\" height=\"").append(plotHeight)
            .append("\" fill=\"#fbfbfb\" stroke=\"#ccc\"/>\n");
        final String[] xLabels = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"};
        for (int nines = 0; nines <= MAX_NINES; nines++)
        {
            final double x = LEFT + plotWidth * nines / MAX_NINES;
            html.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e3e3e3\"/>",
                x, TOP, x, TOP + plotHeight));
            html.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                x, TOP + plotHeight + 16, xLabels[nines]));
        }
        for (int i = 0; i <= 5; i++)
        {
            final double value = yMax * i / 5;
            final double y = TOP + plotHeight - plotHeight * i / 5.0;
            html.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>",
                LEFT, y, LEFT + plotWidth, y));
            html.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                LEFT - 6, y + 4, trim(value)));
        }
        html.append(String.format(Locale.ROOT,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">percentile</text>" +
            "<text transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\">latency (%s)</text>%n",
            LEFT + plotWidth / 2, HEIGHT - 6, TOP + plotHeight / 2, unit[1] == 1 ? "ns" : unitName(unit[0])));
        int series = 0;
        for (final Map.Entry<String, Histogram> row : rows.entrySet())
        {
            final Histogram h = row.getValue();
            final String colour = COLOURS[series++ % COLOURS.length];
            if (h.getTotalCount() == 0)
            {
                continue;
            }
            // no further right than the data supports: 1/(1-p) <= count
            final double maxNines = Math.min(MAX_NINES, Math.log10(Math.max(1, h.getTotalCount())));
            final List<String> points = new ArrayList<>();
            for (int i = 0; i <= 200; i++)
            {
                final double nines = maxNines * i / 200;
                final double value = h.getValueAtPercentile(percentileAt(nines)) / unit[0];
                points.add(String.format(Locale.ROOT, "%.1f,%.1f", LEFT + plotWidth * nines / MAX_NINES,
                    TOP + plotHeight - plotHeight * Math.min(1, value / yMax)));
            }
            html.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(colour).append("\" points=\"")
                .append(String.join(" ", points)).append("\"><title>").append(escape(row.getKey()))
                .append("</title></polyline>\n");
        }
        html.append("</svg>\n");
    }

    static double percentileAt(final double nines)
    {
        return 100.0 * (1 - Math.pow(10, -nines));
    }

    private static double[] unit(final long maxNanos)
    {
        if (maxNanos < 10_000)
        {
            return new double[]{1, 1};
        }
        if (maxNanos < 10_000_000)
        {
            return new double[]{1e3, 0};
        }
        return maxNanos < 10_000_000_000L ? new double[]{1e6, 0} : new double[]{1e9, 0};
    }

    private static String unitName(final double unit)
    {
        return unit == 1e3 ? "us" : unit == 1e6 ? "ms" : "s";
    }

    private static double niceCeiling(final double value)
    {
        final double magnitude = Math.pow(10, Math.floor(Math.log10(Math.max(value, 1e-9))));
        for (final double step : new double[]{1, 2, 2.5, 5, 10})
        {
            if (value <= step * magnitude)
            {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String trim(final double value)
    {
        return value == Math.rint(value) ? Long.toString((long)value) : String.format(Locale.ROOT, "%.2f", value);
    }

    static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
