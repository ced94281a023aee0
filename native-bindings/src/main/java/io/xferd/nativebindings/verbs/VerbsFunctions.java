package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.NativeLibrary;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles for the exported libibverbs functions, made once. Initialised only after {@link Verbs#library()}
 * is known to be loaded (the device list is the only way in), so its initialiser does not fail on a host without
 * the library.
 * <p>
 * {@code ibv_poll_cq} and {@code ibv_post_send} are not here: they are static inline functions in {@code verbs.h},
 * with no symbol, bound in {@link CompletionQueue} and {@link QueuePair} through the context's ops table.
 */
@SuppressWarnings("restricted")
final class VerbsFunctions
{
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");

    static final MethodHandle GET_DEVICE_LIST = capturing("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
    static final MethodHandle FREE_DEVICE_LIST = plain("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
    static final MethodHandle GET_DEVICE_NAME = plain("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
    static final MethodHandle GET_DEVICE_GUID = plain("ibv_get_device_guid", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    static final MethodHandle OPEN_DEVICE = capturing("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
    static final MethodHandle CLOSE_DEVICE = capturing("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle QUERY_DEVICE =
        capturing("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    // The exported symbol behind the header's inline ___ibv_query_port: fills the compatibility prefix of the struct.
    static final MethodHandle QUERY_PORT =
        capturing("ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
    static final MethodHandle QUERY_GID =
        capturing("ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
    static final MethodHandle ALLOC_PD = capturing("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
    static final MethodHandle DEALLOC_PD = capturing("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // ibv_reg_mr in verbs.h is a macro: the exported ibv_reg_mr for plain access flags, ibv_reg_mr_iova2 otherwise.
    static final MethodHandle REG_MR = capturing("ibv_reg_mr",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT));
    static final MethodHandle REG_MR_IOVA2 = capturing("ibv_reg_mr_iova2",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT));
    static final MethodHandle DEREG_MR = capturing("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle CREATE_CQ = capturing("ibv_create_cq",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    static final MethodHandle DESTROY_CQ = capturing("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle CREATE_QP = capturing("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    static final MethodHandle MODIFY_QP =
        capturing("ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    static final MethodHandle DESTROY_QP = capturing("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle WC_STATUS_STR = plain("ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private VerbsFunctions()
    {
    }

    private static NativeLibrary library()
    {
        final NativeLibrary library = Verbs.library();
        library.requireLoaded();
        return library;
    }

    private static MethodHandle capturing(final String name, final FunctionDescriptor descriptor)
    {
        return library().downcall(name, descriptor, ERRNO);
    }

    private static MethodHandle plain(final String name, final FunctionDescriptor descriptor)
    {
        return library().downcall(name, descriptor);
    }
}
