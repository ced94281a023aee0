package io.xferd.nativebindings.cuda;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.LibraryUnavailableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * On a host without a usable GPU (no libcudart, or libcudart without a driver or devices) the runtime reports why,
 * and every call fails with a typed exception rather than a crash.
 */
class CudaRuntimeTest
{
    @Test
    @Timeout(60)
    void shouldReportUnavailableNamingLibcudart()
    {
        final Availability availability = CudaRuntime.availability();
        assumeFalse(availability.isAvailable(), "this host has a CUDA device");

        assertThat(availability.library()).isEqualTo("libcudart");
        assertThat(availability.reason()).contains("libcudart");
        System.out.println("CudaRuntimeTest: " + availability);
    }

    @Test
    @Timeout(60)
    void shouldThrowTypedExceptionsFromCallsOnAnUnusableRuntime()
    {
        assumeFalse(CudaRuntime.availability().isAvailable(), "this host has a CUDA device");

        if (CudaRuntime.library().isLoaded())
        {
            assertThatThrownBy(CudaRuntime::deviceCount).isInstanceOfSatisfying(CudaException.class, e ->
            {
                assertThat(e.code()).isNotZero();
                assertThat(e.function()).isEqualTo("cudaGetDeviceCount");
                assertThat(e.getMessage()).matches("cudaGetDeviceCount failed: cudaError\\w+ \\(\\d+\\) .+");
            });
            assertThatThrownBy(() -> CudaRuntime.malloc(1 << 20)).isInstanceOf(CudaException.class)
                .hasMessageContaining("size=1048576");
            assertThatThrownBy(() -> CudaRuntime.pciBusId(0)).isInstanceOf(CudaException.class);
            assertThatThrownBy(CudaRuntime::getDevice).isInstanceOf(CudaException.class)
                .hasMessageStartingWith("cudaGetDevice failed: ");
            assertThatThrownBy(() -> CudaRuntime.ipcOpenMemHandle(CudaIpcMemHandle.of(new byte[64])))
                .isInstanceOf(CudaException.class);
            // the stream calls the daemon's copies use reach the runtime and come back typed
            assertThatThrownBy(() -> CudaRuntime.streamCreate(CudaLayouts.STREAM_NON_BLOCKING))
                .isInstanceOfSatisfying(CudaException.class,
                    e -> assertThat(e.function()).isEqualTo("cudaStreamCreateWithFlags"));
            assertThatThrownBy(() -> CudaRuntime.memcpyAsync(0, 0, 4096, CudaLayouts.MEMCPY_DEFAULT, 0))
                .isInstanceOf(CudaException.class).hasMessageContaining("cudaMemcpyAsync failed");
            assertThatThrownBy(() -> CudaRuntime.streamSynchronize(0)).isInstanceOf(CudaException.class)
                .hasMessageStartingWith("cudaStreamSynchronize failed: ");
            assertThat(CudaRuntime.errorString(CudaLayouts.CUDA_ERROR_INSUFFICIENT_DRIVER))
                .isEqualTo("CUDA driver version is insufficient for CUDA runtime version");
        }
        else
        {
            assertThatThrownBy(CudaRuntime::deviceCount).isInstanceOf(LibraryUnavailableException.class)
                .hasMessageContaining("libcudart: unavailable (cannot load libcudart.so");
            assertThatThrownBy(() -> CudaRuntime.malloc(1)).isInstanceOf(LibraryUnavailableException.class);
            assertThatThrownBy(CudaRuntime::getDevice).isInstanceOf(LibraryUnavailableException.class);
        }
    }

    @Test
    @Timeout(30)
    void shouldThrowTypedFromTheDriverCallWithoutLibcuda()
    {
        assumeFalse(CudaDriver.availability().isAvailable(), "this host has libcuda");

        assertThat(CudaDriver.availability().reason()).contains("cannot load libcuda.so.1");
        assertThatThrownBy(() -> CudaDriver.bytesToEndOfAllocation(0x1000))
            .isInstanceOf(LibraryUnavailableException.class).hasMessageContaining("libcuda: unavailable");
    }

    @Test
    @Timeout(30)
    void shouldReportALibraryThatDoesNotExistAsUnavailable()
    {
        final Availability availability = CudaRuntime.probe(List.of("libcudart-xferd-missing.so.1"));

        assertThat(availability.isAvailable()).isFalse();
        assertThat(availability.reason()).contains("cannot load libcudart-xferd-missing.so.1");
    }

    @Test
    @Timeout(10)
    void shouldCarryIpcHandlesAsBytesOrHex()
    {
        final byte[] bytes = new byte[64];
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = (byte)(i * 7);
        }
        final CudaIpcMemHandle handle = CudaIpcMemHandle.of(bytes);
        bytes[0] = 99;

        assertThat(handle.toHex()).hasSize(128).startsWith("00070e15");
        assertThat(CudaIpcMemHandle.fromHex(handle.toHex() + "\n")).isEqualTo(handle);
        assertThat(handle.toBytes()[0]).isZero();
        assertThatThrownBy(() -> CudaIpcMemHandle.of(new byte[63])).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("64 bytes");
    }
}
