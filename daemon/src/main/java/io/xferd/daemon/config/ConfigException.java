package io.xferd.daemon.config;

/**
 * The daemon's configuration is wrong or asks for something this build or host cannot do. The message is meant
 * for the operator as it is: it names the file, the field and, where known, the line and column.
 * The CLI prints it as {@code xferd: <message>} and exits 2.
 */
public final class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    public ConfigException(final String message)
    {
        super(message);
    }

    public ConfigException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
