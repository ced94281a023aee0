package io.xferd.nativebindings.cuda;

import io.xferd.nativebindings.CLayoutProgram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.xferd.nativebindings.cuda.CudaLayouts.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link CudaLayouts} against the CUDA toolkit's {@code cuda_runtime_api.h} where it is installed (found through
 * {@code CUDA_HOME}, {@code /usr/local/cuda*}, or {@code /usr/include}); skipped, with the reason, where it is not.
 */
class CudaLayoutTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void shouldMatchTheInstalledCudaRuntimeHeader() throws Exception
    {
        final Path include = findInclude();
        assumeTrue(include != null, "CUDA toolkit headers (cuda_runtime_api.h) not installed");
        assumeTrue(CLayoutProgram.headerCompiles(dir, "cuda_runtime_api.h", "-I" + include), "gcc missing");

        final CLayoutProgram program = new CLayoutProgram("cuda_runtime_api.h")
            .type("cudaIpcMemHandle_t", CUDA_IPC_MEM_HANDLE)
            .constant("offsetof(struct cudaPointerAttributes, type)", offset("type"))
            .constant("offsetof(struct cudaPointerAttributes, device)", offset("device"))
            .constant("offsetof(struct cudaPointerAttributes, devicePointer)", offset("devicePointer"))
            .constant("offsetof(struct cudaPointerAttributes, hostPointer)", offset("hostPointer"))
            .constant("sizeof(enum cudaMemoryType)", 4)
            // CUDA 13 added long reserved[8]; older headers end after hostPointer, within the 88-byte buffer.
            .constant("cudaPointerAttributes fits", "sizeof(struct cudaPointerAttributes) <= 88", 1)
            .constant("cudaPointerAttributes size",
                "CUDART_VERSION >= 13000 ? sizeof(struct cudaPointerAttributes) : 88",
                CUDA_POINTER_ATTRIBUTES.byteSize())
            .constant("cudaSuccess", CUDA_SUCCESS)
            .constant("cudaErrorInsufficientDriver", CUDA_ERROR_INSUFFICIENT_DRIVER)
            .constant("cudaErrorNoDevice", CUDA_ERROR_NO_DEVICE)
            .constant("cudaMemcpyHostToHost", MEMCPY_HOST_TO_HOST)
            .constant("cudaMemcpyHostToDevice", MEMCPY_HOST_TO_DEVICE)
            .constant("cudaMemcpyDeviceToHost", MEMCPY_DEVICE_TO_HOST)
            .constant("cudaMemcpyDeviceToDevice", MEMCPY_DEVICE_TO_DEVICE)
            .constant("cudaMemcpyDefault", MEMCPY_DEFAULT)
            .constant("cudaStreamNonBlocking", STREAM_NON_BLOCKING)
            .constant("sizeof(cudaStream_t)", 8)
            .constant("cudaMemoryTypeUnregistered", MEMORY_TYPE_UNREGISTERED)
            .constant("cudaMemoryTypeHost", MEMORY_TYPE_HOST)
            .constant("cudaMemoryTypeDevice", MEMORY_TYPE_DEVICE)
            .constant("cudaMemoryTypeManaged", MEMORY_TYPE_MANAGED)
            .constant("cudaIpcMemLazyEnablePeerAccess", IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
            .constant("CUDA_IPC_HANDLE_SIZE", IPC_HANDLE_SIZE);
        final Map<String, Long> actual = program.compileAndRun(dir, "-I" + include);

        assertThat(program.mismatches(actual)).as("Java layouts vs %s/cuda_runtime_api.h", include).isEmpty();
        System.out.println("CudaLayoutTest: " + program.expected().size() + " checks against " + include);
    }

    private static long offset(final String field)
    {
        return CUDA_POINTER_ATTRIBUTES.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement(field));
    }

    static Path findInclude() throws IOException
    {
        final List<Path> candidates = new ArrayList<>();
        final String cudaHome = System.getenv("CUDA_HOME");
        if (cudaHome != null)
        {
            candidates.add(Path.of(cudaHome, "include"));
        }
        candidates.add(Path.of("/usr/local/cuda/include"));
        if (Files.isDirectory(Path.of("/usr/local")))
        {
            try (DirectoryStream<Path> cudas = Files.newDirectoryStream(Path.of("/usr/local"), "cuda-*"))
            {
                cudas.forEach(cuda -> candidates.add(cuda.resolve("include")));
            }
        }
        candidates.add(Path.of("/usr/include"));
        return candidates.stream().filter(p -> Files.isRegularFile(p.resolve("cuda_runtime_api.h"))).findFirst()
            .orElse(null);
    }
}
