package io.xferd.daemon.tools.demo;

/**
 * Which layers the timed pass has notified, from the notifications the consumer takes: "layer N" for each N below
 * the layer count, counted once. A warm-up pass's "warm-up layer N", a layer out of range, a repeat or anything
 * else is passed over, so neither a warm-up pass nor a stray message can stand in for the timed pass.
 */
final class TimedPassNotifications
{
    /** What the timed pass's notifications start with, then the layer's index in decimal. */
    static final String PREFIX = "layer ";

    private final boolean[] notified;
    private int count;

    TimedPassNotifications(final int layers)
    {
        notified = new boolean[layers];
    }

    /**
     * @return whether {@code message} notified a layer of the timed pass not notified before.
     */
    boolean offer(final String message)
    {
        final int layer = layerOf(message);
        if (layer < 0 || layer >= notified.length || notified[layer])
        {
            return false;
        }
        notified[layer] = true;
        count++;
        return true;
    }

    /** Layers notified so far. */
    int count()
    {
        return count;
    }

    /** Whether every layer was notified. */
    boolean complete()
    {
        return count == notified.length;
    }

    /** The layer a timed-pass message names ("layer 7": 7; digits only, no sign or leading zero), or -1. */
    private static int layerOf(final String message)
    {
        final int digits = message.length() - PREFIX.length();
        if (!message.startsWith(PREFIX) || digits < 1 || digits > 9 ||
            (digits > 1 && message.charAt(PREFIX.length()) == '0'))
        {
            return -1;
        }
        int layer = 0;
        for (int i = PREFIX.length(); i < message.length(); i++)
        {
            final char c = message.charAt(i);
            if (c < '0' || c > '9')
            {
                return -1;
            }
            layer = layer * 10 + (c - '0');
        }
        return layer;
    }
}
