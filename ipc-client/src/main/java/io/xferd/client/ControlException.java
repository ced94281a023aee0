package io.xferd.client;

import io.xferd.ipc.ControlError;

/**
 * The daemon refused a control request (register, unregister, open segment, connect), with its reason.
 */
public final class ControlException extends XferException
{
    private static final long serialVersionUID = 1L;

    private final int code;

    public ControlException(final int code, final String message)
    {
        super(ControlError.name(code) + ": " + message);
        this.code = code;
    }

    /**
     * @return one of {@link ControlError}'s codes.
     */
    public int code()
    {
        return code;
    }
}
