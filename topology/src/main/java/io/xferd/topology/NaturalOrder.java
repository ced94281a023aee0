package io.xferd.topology;

import java.util.Comparator;

/**
 * Orders names the way an operator reads them: digit runs compare as numbers, so {@code mlx5_2}
 * comes before {@code mlx5_10} and {@code node2} before {@code node10}.
 */
final class NaturalOrder implements Comparator<String>
{
    static final NaturalOrder INSTANCE = new NaturalOrder();

    private NaturalOrder()
    {
    }

    public int compare(final String a, final String b)
    {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length())
        {
            final char ca = a.charAt(i);
            final char cb = b.charAt(j);
            if (isDigit(ca) && isDigit(cb))
            {
                final int endA = digitsEnd(a, i);
                final int endB = digitsEnd(b, j);
                final int result = compareNumbers(a.substring(i, endA), b.substring(j, endB));
                if (0 != result)
                {
                    return result;
                }
                i = endA;
                j = endB;
            }
            else
            {
                if (ca != cb)
                {
                    return Character.compare(ca, cb);
                }
                i++;
                j++;
            }
        }
        final int byLength = Integer.compare(a.length() - i, b.length() - j);
        return 0 != byLength ? byLength : a.compareTo(b);
    }

    private static boolean isDigit(final char c)
    {
        return c >= '0' && c <= '9';
    }

    private static int digitsEnd(final String s, final int from)
    {
        int end = from;
        while (end < s.length() && isDigit(s.charAt(end)))
        {
            end++;
        }
        return end;
    }

    private static int compareNumbers(final String x, final String y)
    {
        final String a = stripLeadingZeros(x);
        final String b = stripLeadingZeros(y);
        return a.length() != b.length() ? Integer.compare(a.length(), b.length()) : a.compareTo(b);
    }

    private static String stripLeadingZeros(final String digits)
    {
        int k = 0;
        while (k < digits.length() - 1 && digits.charAt(k) == '0')
        {
            k++;
        }
        return digits.substring(k);
    }
}
