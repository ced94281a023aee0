package io.xferd.nativebindings.cuda;

import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA runtime structs and enum values the bindings use (Linux x86_64), named after their C declarations in
 * {@code driver_types.h}. {@code CudaLayoutTest} checks them against {@code cuda_runtime_api.h} where the CUDA
 * toolkit headers are installed.
 * <pre>
 *   struct cudaPointerAttributes {            // CUDA 13: 88 bytes; CUDA 11/12: the first 24
 *       enum cudaMemoryType type;   //  0
 *       int device;                 //  4
 *       void *devicePointer;        //  8
 *       void *hostPointer;          // 16
 *       long reserved[8];           // 24 (CUDA 13)
 *   };
 *   typedef struct cudaIpcMemHandle_st { char reserved[64]; } cudaIpcMemHandle_t;   // passed by value
 * </pre>
 * Buffers for {@code cudaPointerAttributes} are always 88 bytes, so that an older runtime writing 24 is also safe.
 */
public final class CudaLayouts
{
    public static final int CUDA_SUCCESS = 0;
    public static final int CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
    public static final int CUDA_ERROR_NO_DEVICE = 100;

    public static final int MEMCPY_HOST_TO_HOST = 0;
    public static final int MEMCPY_HOST_TO_DEVICE = 1;
    public static final int MEMCPY_DEVICE_TO_HOST = 2;
    public static final int MEMCPY_DEVICE_TO_DEVICE = 3;
    /** Direction inferred from the pointers (unified virtual addressing). */
    public static final int MEMCPY_DEFAULT = 4;
    /** {@code cudaStreamNonBlocking}: no implicit synchronisation with the legacy default stream. */
    public static final int STREAM_NON_BLOCKING = 1;

    public static final int MEMORY_TYPE_UNREGISTERED = 0;
    public static final int MEMORY_TYPE_HOST = 1;
    public static final int MEMORY_TYPE_DEVICE = 2;
    public static final int MEMORY_TYPE_MANAGED = 3;

    public static final int IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1;
    public static final int IPC_HANDLE_SIZE = 64;
    /** {@code cudaDeviceGetPCIBusId} needs 13 bytes ({@code dddd:bb:dd.f}); room for a longer domain. */
    public static final int PCI_BUS_ID_LENGTH = 64;

    public static final StructLayout CUDA_POINTER_ATTRIBUTES = structLayout(
        JAVA_INT.withName("type"),
        JAVA_INT.withName("device"),
        ADDRESS.withName("devicePointer"),
        ADDRESS.withName("hostPointer"),
        sequenceLayout(8, JAVA_LONG).withName("reserved")).withName("cudaPointerAttributes");

    public static final StructLayout CUDA_IPC_MEM_HANDLE = structLayout(
        sequenceLayout(IPC_HANDLE_SIZE, JAVA_BYTE).withName("reserved")).withName("cudaIpcMemHandle_st");

    private CudaLayouts()
    {
    }
}
