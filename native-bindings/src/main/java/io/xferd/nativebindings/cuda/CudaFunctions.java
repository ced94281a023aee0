package io.xferd.nativebindings.cuda;

import io.xferd.nativebindings.NativeLibrary;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles for the CUDA runtime, made once; initialised only after {@link CudaRuntime#library()} is known
 * to be loaded. Every function returns a {@code cudaError_t} (int). Device and host pointers passed by value are
 * {@code long}s (on LP64 a pointer is passed exactly like a 64-bit integer), so the data-path calls allocate nothing.
 */
final class CudaFunctions
{
    static final MethodHandle GET_DEVICE_COUNT = of("cudaGetDeviceCount", ADDRESS);
    static final MethodHandle SET_DEVICE = of("cudaSetDevice", JAVA_INT);
    static final MethodHandle GET_DEVICE = of("cudaGetDevice", ADDRESS);
    static final MethodHandle DEVICE_GET_PCI_BUS_ID = of("cudaDeviceGetPCIBusId", ADDRESS, JAVA_INT, JAVA_INT);
    static final MethodHandle POINTER_GET_ATTRIBUTES = of("cudaPointerGetAttributes", ADDRESS, JAVA_LONG);
    static final MethodHandle IPC_GET_MEM_HANDLE = of("cudaIpcGetMemHandle", ADDRESS, JAVA_LONG);
    // cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags): the handle by value.
    static final MethodHandle IPC_OPEN_MEM_HANDLE =
        of("cudaIpcOpenMemHandle", ADDRESS, CudaLayouts.CUDA_IPC_MEM_HANDLE, JAVA_INT);
    static final MethodHandle IPC_CLOSE_MEM_HANDLE = of("cudaIpcCloseMemHandle", JAVA_LONG);
    static final MethodHandle MALLOC = of("cudaMalloc", ADDRESS, JAVA_LONG);
    static final MethodHandle FREE = of("cudaFree", JAVA_LONG);
    static final MethodHandle MALLOC_HOST = of("cudaMallocHost", ADDRESS, JAVA_LONG);
    static final MethodHandle FREE_HOST = of("cudaFreeHost", JAVA_LONG);
    static final MethodHandle MEMCPY = of("cudaMemcpy", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT);
    static final MethodHandle DEVICE_SYNCHRONIZE = of("cudaDeviceSynchronize");
    // cudaStream_t is a pointer: passed and returned as a long, like device pointers
    static final MethodHandle STREAM_CREATE_WITH_FLAGS = of("cudaStreamCreateWithFlags", ADDRESS, JAVA_INT);
    static final MethodHandle STREAM_DESTROY = of("cudaStreamDestroy", JAVA_LONG);
    static final MethodHandle STREAM_SYNCHRONIZE = of("cudaStreamSynchronize", JAVA_LONG);
    static final MethodHandle MEMCPY_ASYNC = of("cudaMemcpyAsync", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG);
    static final MethodHandle GET_ERROR_STRING =
        library().downcall("cudaGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    static final MethodHandle GET_ERROR_NAME =
        library().downcall("cudaGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private CudaFunctions()
    {
    }

    private static NativeLibrary library()
    {
        final NativeLibrary library = CudaRuntime.library();
        library.requireLoaded();
        return library;
    }

    private static MethodHandle of(final String name, final MemoryLayout... arguments)
    {
        return library().downcall(name, FunctionDescriptor.of(JAVA_INT, arguments));
    }
}
