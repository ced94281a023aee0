package io.xferd.ipc;

/**
 * What a transfer request does, seen from the submitting client.
 * <p>
 * READ copies target memory into the submitter's local memory; WRITE copies the submitter's local memory
 * into the target. The wire value is the ordinal written in {@link SubmitRequestFlyweight#opcode()}.
 */
public final class Opcode
{
    public static final int READ = 0;
    public static final int WRITE = 1;

    private Opcode()
    {
    }

    public static boolean isValid(final int opcode)
    {
        return opcode == READ || opcode == WRITE;
    }

    public static String name(final int opcode)
    {
        return switch (opcode)
        {
            case READ -> "READ";
            case WRITE -> "WRITE";
            default -> "UNKNOWN(" + opcode + ")";
        };
    }
}
