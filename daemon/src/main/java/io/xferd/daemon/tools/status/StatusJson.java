package io.xferd.daemon.tools.status;

import java.util.List;
import java.util.Map;

/**
 * {@code xferd status --json} without Jackson: the status snapshot's maps, lists, strings, integers, booleans and
 * nulls written as Jackson's default pretty printer writes them (objects one field a line, two spaces a level,
 * {@code "name" : value}; arrays inline, {@code [ a, b ]}), byte for byte ({@code StatusJsonTest}), so scripts see
 * the same output. Loading and linking Jackson's ObjectMapper was a good part of the command's CPU.
 */
public final class StatusJson
{
    private static final String HEX = "0123456789ABCDEF";

    private StatusJson()
    {
    }

    /**
     * @return the JSON text, or null when the value holds a type this writer does not know (let Jackson write it).
     */
    public static String write(final Object value)
    {
        final StringBuilder out = new StringBuilder(4096);
        return value(out, value, 0) ? out.toString() : null;
    }

    private static boolean value(final StringBuilder out, final Object value, final int level)
    {
        if (value == null)
        {
            out.append("null");
        }
        else if (value instanceof String text)
        {
            string(out, text);
        }
        else if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte ||
            value instanceof Boolean)
        {
            out.append(value);
        }
        else if (value instanceof Map<?, ?> map)
        {
            return object(out, map, level + 1);
        }
        else if (value instanceof List<?> list)
        {
            return array(out, list, level);
        }
        else
        {
            return false;
        }
        return true;
    }

    private static boolean object(final StringBuilder out, final Map<?, ?> map, final int level)
    {
        out.append('{');
        if (map.isEmpty())
        {
            out.append(" }");
            return true;
        }
        boolean first = true;
        for (final Map.Entry<?, ?> entry : map.entrySet())
        {
            if (!(entry.getKey() instanceof String name))
            {
                return false;
            }
            out.append(first ? "" : ",").append('\n');
            indent(out, level);
            string(out, name);
            out.append(" : ");
            if (!value(out, entry.getValue(), level))
            {
                return false;
            }
            first = false;
        }
        out.append('\n');
        indent(out, level - 1);
        out.append('}');
        return true;
    }

    private static boolean array(final StringBuilder out, final List<?> list, final int level)
    {
        out.append('[');
        boolean first = true;
        for (final Object element : list)
        {
            out.append(first ? " " : ", ");
            if (!value(out, element, level))
            {
                return false;
            }
            first = false;
        }
        out.append(" ]");
        return true;
    }

    private static void indent(final StringBuilder out, final int level)
    {
        for (int i = 0; i < level; i++)
        {
            out.append("  ");
        }
    }

    /**
     * Jackson's escapes: quote and backslash, the short forms of \b \t \n \f \r, backslash-u for the other
     * control characters; everything else as it is.
     */
    private static void string(final StringBuilder out, final String text)
    {
        out.append('"');
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\t' -> out.append("\\t");
                case '\n' -> out.append("\\n");
                case '\f' -> out.append("\\f");
                case '\r' -> out.append("\\r");
                default ->
                {
                    if (c < 0x20)
                    {
                        out.append("\\u00").append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xF));
                    }
                    else
                    {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
