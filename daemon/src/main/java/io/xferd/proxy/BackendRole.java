package io.xferd.proxy;

import java.util.Locale;

/**
 * The two kinds of backend of a disaggregated deployment.
 */
public enum BackendRole
{
    PREFILL, DECODE;

    /**
     * @return the lower-case name used in metrics labels, the admin endpoint and the config file.
     */
    public String label()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param text {@code prefill} or {@code decode}, any case.
     * @return the role.
     */
    public static BackendRole parse(final String text)
    {
        return switch (text == null ? "" : text.trim().toLowerCase(Locale.ROOT))
        {
            case "prefill" -> PREFILL;
            case "decode" -> DECODE;
            default -> throw new IllegalArgumentException("role must be prefill or decode, not '" + text + "'");
        };
    }
}
