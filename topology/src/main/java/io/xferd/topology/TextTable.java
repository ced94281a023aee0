package io.xferd.topology;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** A plain-text table: left-aligned columns two spaces apart, each as wide as its widest cell. */
final class TextTable
{
    private final List<String[]> lines = new ArrayList<>();
    private final int columns;

    TextTable(final String... header)
    {
        columns = header.length;
        lines.add(header);
    }

    TextTable row(final Object... cells)
    {
        final String[] text = new String[columns];
        for (int i = 0; i < columns; i++)
        {
            text[i] = i < cells.length && null != cells[i] ? String.valueOf(cells[i]) : "-";
        }
        lines.add(text);
        return this;
    }

    void print(final PrintStream out, final String indent)
    {
        final int[] widths = new int[columns];
        for (final String[] line : lines)
        {
            for (int i = 0; i < columns; i++)
            {
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        for (final String[] line : lines)
        {
            final StringBuilder text = new StringBuilder(indent);
            for (int i = 0; i < columns; i++)
            {
                text.append(line[i]);
                if (i < columns - 1)
                {
                    text.append(" ".repeat(widths[i] - line[i].length() + 2));
                }
            }
            out.println(text.toString().stripTrailing());
        }
    }
}
