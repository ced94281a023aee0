/**
 * The CUDA runtime (libcudart) through Panama FFM: device count and PCI bus ids (topology), pointer attributes,
 * IPC handles (a client exports GPU memory with {@code cudaIpcGetMemHandle}, the daemon maps it with
 * {@code cudaIpcOpenMemHandle}), device and pinned host memory, and {@code cudaMemcpy} for staging GPU memory
 * through pinned host memory on the TCP path.
 * {@link io.xferd.nativebindings.cuda.CudaDriver} adds the one driver call the runtime lacks (an allocation's size),
 * from libcuda, loaded lazily too.
 * <p>
 * Entry: {@link io.xferd.nativebindings.cuda.CudaRuntime#availability()}, never throwing: unavailable, naming
 * libcudart, when it is not installed, has no driver, or sees no device. Failed calls throw
 * {@link io.xferd.nativebindings.cuda.CudaException} with the {@code cudaError_t}, its name and description; calls
 * without a loadable libcudart throw {@link io.xferd.nativebindings.LibraryUnavailableException}.
 * <p>
 * Verified on machines without a GPU: the {@code cudaPointerAttributes} and {@code cudaIpcMemHandle_t} layouts and
 * the enum values against {@code cuda_runtime_api.h} where the toolkit headers are installed (skipped, saying so,
 * where not); the absent paths (missing library; library without a driver returns a typed error). Not verified
 * here: anything on a GPU. {@code src/test/gpu/run-gpu-checks.sh} does that on a GPU machine (IPC export/import
 * across two processes, D2D and D2H copies with a pattern check, H2D/D2H/D2D bandwidth for 64 MiB).
 */
package io.xferd.nativebindings.cuda;
