package io.xferd.daemon.session;

/**
 * A registration the daemon will not make, with the {@link io.xferd.ipc.ControlError} code its ERROR answer carries.
 */
public final class RegistrationRefusedException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int code;

    public RegistrationRefusedException(final int code, final String message)
    {
        super(message);
        this.code = code;
    }

    public int code()
    {
        return code;
    }
}
