package io.xferd.nativebindings.cuda;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A {@code cudaIpcMemHandle_t}: 64 opaque bytes naming a device allocation of another process, as the client sends
 * it to the daemon (as bytes, or as 128 hex digits in text).
 */
public final class CudaIpcMemHandle
{
    private final byte[] bytes;

    private CudaIpcMemHandle(final byte[] bytes)
    {
        this.bytes = bytes;
    }

    public static CudaIpcMemHandle of(final byte[] bytes)
    {
        if (bytes.length != CudaLayouts.IPC_HANDLE_SIZE)
        {
            throw new IllegalArgumentException("a CUDA IPC handle is 64 bytes, not " + bytes.length);
        }
        return new CudaIpcMemHandle(bytes.clone());
    }

    public static CudaIpcMemHandle fromHex(final String hex)
    {
        return of(HexFormat.of().parseHex(hex.strip()));
    }

    public byte[] toBytes()
    {
        return bytes.clone();
    }

    public String toHex()
    {
        return HexFormat.of().formatHex(bytes);
    }

    byte[] bytes()
    {
        return bytes;
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof CudaIpcMemHandle other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode()
    {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString()
    {
        return "CudaIpcMemHandle[" + toHex() + "]";
    }
}
