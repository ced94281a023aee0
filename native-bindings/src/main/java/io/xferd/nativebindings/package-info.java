/**
 * Panama FFM bindings for the native libraries xferd uses: libc ({@code libc}), libibverbs ({@code verbs}) and the
 * CUDA runtime ({@code cuda}).
 * <p>
 * Every native call goes through {@code java.lang.foreign}; no JNI, no JNA. A failed call throws a typed
 * {@link io.xferd.nativebindings.NativeException} carrying the captured {@code errno} and the function name.
 * An optional library reports whether it could be loaded as an {@link io.xferd.nativebindings.Availability}
 * rather than failing at class-load time ({@link io.xferd.nativebindings.NativeLibrary}); calling into an
 * optional library that did not load throws {@link io.xferd.nativebindings.LibraryUnavailableException}. Linux x86_64 only.
 */
package io.xferd.nativebindings;
