package io.xferd.nativebindings.verbs;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The {@code <infiniband/verbs.h>} structs and constants the verbs bindings use, for Linux x86_64 (LP64, glibc).
 * <p>
 * Each layout is named after its C struct and each member after its C field (nested members by their C path, e.g.
 * {@code wr.rdma.remote_addr}); fields the bindings do not use are padding. {@code VerbsLayoutTest} compiles a C
 * program against the installed header and checks the size of every layout, the offset and size of every named
 * member, and the value of every {@code IBV_*} constant here. Anonymous unions in C ({@code imm_data}) are plain
 * members here; pthread mutex/cond members are padding of glibc's size (40/48 bytes).
 * <p>
 * {@code ibv_port_attr} is the header's current struct; the library's exported {@code ibv_query_port} fills only
 * its compatibility prefix (up to {@code link_layer} and {@code flags}), which holds every field read here.
 */
public final class VerbsLayouts
{
    // enum ibv_access_flags
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;
    public static final int IBV_ACCESS_RELAXED_ORDERING = 1 << 20;
    /** Access bits that need {@code ibv_reg_mr_iova2} (the header's {@code ibv_reg_mr} macro switches on them). */
    public static final int IBV_ACCESS_OPTIONAL_RANGE = 0x3ff00000;

    // enum ibv_qp_state
    public static final int IBV_QPS_RESET = 0;
    public static final int IBV_QPS_INIT = 1;
    public static final int IBV_QPS_RTR = 2;
    public static final int IBV_QPS_RTS = 3;
    public static final int IBV_QPS_SQD = 4;
    public static final int IBV_QPS_SQE = 5;
    public static final int IBV_QPS_ERR = 6;

    // enum ibv_qp_attr_mask
    public static final int IBV_QP_STATE = 1;
    public static final int IBV_QP_CUR_STATE = 1 << 1;
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    public static final int IBV_QP_PORT = 1 << 5;
    public static final int IBV_QP_AV = 1 << 7;
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int IBV_QP_DEST_QPN = 1 << 20;

    // enum ibv_qp_type, ibv_wr_opcode, ibv_send_flags, ibv_wc_status, ibv_wc_opcode
    public static final int IBV_QPT_RC = 2;
    public static final int IBV_WR_RDMA_WRITE = 0;
    public static final int IBV_WR_RDMA_READ = 4;
    public static final int IBV_SEND_FENCE = 1;
    public static final int IBV_SEND_SIGNALED = 1 << 1;
    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_RDMA_WRITE = 1;
    public static final int IBV_WC_RDMA_READ = 2;

    // enum ibv_mtu, ibv_port_state, IBV_LINK_LAYER_*
    public static final int IBV_MTU_256 = 1;
    public static final int IBV_MTU_512 = 2;
    public static final int IBV_MTU_1024 = 3;
    public static final int IBV_MTU_2048 = 4;
    public static final int IBV_MTU_4096 = 5;
    public static final int IBV_PORT_DOWN = 1;
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    private static final long PTHREAD_MUTEX_SIZE = 40;
    private static final long PTHREAD_COND_SIZE = 48;

    public static final StructLayout IBV_DEVICE_ATTR = structLayout(
        sequenceLayout(64, JAVA_BYTE).withName("fw_ver"),
        JAVA_LONG.withName("node_guid"),
        JAVA_LONG.withName("sys_image_guid"),
        JAVA_LONG.withName("max_mr_size"),
        JAVA_LONG.withName("page_size_cap"),
        JAVA_INT.withName("vendor_id"),
        JAVA_INT.withName("vendor_part_id"),
        JAVA_INT.withName("hw_ver"),
        JAVA_INT.withName("max_qp"),
        JAVA_INT.withName("max_qp_wr"),
        JAVA_INT.withName("device_cap_flags"),
        JAVA_INT.withName("max_sge"),
        JAVA_INT.withName("max_sge_rd"),
        JAVA_INT.withName("max_cq"),
        JAVA_INT.withName("max_cqe"),
        JAVA_INT.withName("max_mr"),
        JAVA_INT.withName("max_pd"),
        JAVA_INT.withName("max_qp_rd_atom"),
        paddingLayout(8),
        JAVA_INT.withName("max_qp_init_rd_atom"),
        paddingLayout(64),
        JAVA_SHORT.withName("max_pkeys"),
        JAVA_BYTE.withName("local_ca_ack_delay"),
        JAVA_BYTE.withName("phys_port_cnt"),
        paddingLayout(4)).withName("ibv_device_attr");

    public static final StructLayout IBV_PORT_ATTR = structLayout(
        JAVA_INT.withName("state"),
        JAVA_INT.withName("max_mtu"),
        JAVA_INT.withName("active_mtu"),
        JAVA_INT.withName("gid_tbl_len"),
        JAVA_INT.withName("port_cap_flags"),
        JAVA_INT.withName("max_msg_sz"),
        paddingLayout(8),
        JAVA_SHORT.withName("pkey_tbl_len"),
        JAVA_SHORT.withName("lid"),
        JAVA_SHORT.withName("sm_lid"),
        paddingLayout(5),
        JAVA_BYTE.withName("active_width"),
        JAVA_BYTE.withName("active_speed"),
        JAVA_BYTE.withName("phys_state"),
        JAVA_BYTE.withName("link_layer"),
        JAVA_BYTE.withName("flags"),
        JAVA_SHORT.withName("port_cap_flags2"),
        paddingLayout(2)).withName("ibv_port_attr");

    public static final StructLayout IBV_SGE = structLayout(
        JAVA_LONG.withName("addr"),
        JAVA_INT.withName("length"),
        JAVA_INT.withName("lkey")).withName("ibv_sge");

    private static final StructLayout RDMA = structLayout(
        JAVA_LONG.withName("remote_addr"),
        JAVA_INT.withName("rkey"),
        paddingLayout(4)).withName("rdma");

    private static final StructLayout ATOMIC = structLayout(
        JAVA_LONG.withName("remote_addr"),
        JAVA_LONG.withName("compare_add"),
        JAVA_LONG.withName("swap"),
        JAVA_INT.withName("rkey"),
        paddingLayout(4)).withName("atomic");

    public static final StructLayout IBV_SEND_WR = structLayout(
        JAVA_LONG.withName("wr_id"),
        ADDRESS.withName("next"),
        ADDRESS.withName("sg_list"),
        JAVA_INT.withName("num_sge"),
        JAVA_INT.withName("opcode"),
        JAVA_INT.withName("send_flags"),
        JAVA_INT.withName("imm_data"),
        unionLayout(RDMA, ATOMIC).withName("wr"),
        unionLayout(structLayout(JAVA_INT.withName("remote_srqn")).withName("xrc")).withName("qp_type"),
        paddingLayout(4),
        paddingLayout(48)).withName("ibv_send_wr");

    public static final StructLayout IBV_RECV_WR = structLayout(
        JAVA_LONG.withName("wr_id"),
        ADDRESS.withName("next"),
        ADDRESS.withName("sg_list"),
        JAVA_INT.withName("num_sge"),
        paddingLayout(4)).withName("ibv_recv_wr");

    public static final StructLayout IBV_WC = structLayout(
        JAVA_LONG.withName("wr_id"),
        JAVA_INT.withName("status"),
        JAVA_INT.withName("opcode"),
        JAVA_INT.withName("vendor_err"),
        JAVA_INT.withName("byte_len"),
        JAVA_INT.withName("imm_data"),
        JAVA_INT.withName("qp_num"),
        JAVA_INT.withName("src_qp"),
        JAVA_INT.withName("wc_flags"),
        JAVA_SHORT.withName("pkey_index"),
        JAVA_SHORT.withName("slid"),
        JAVA_BYTE.withName("sl"),
        JAVA_BYTE.withName("dlid_path_bits"),
        paddingLayout(2)).withName("ibv_wc");

    public static final StructLayout IBV_QP_CAP = structLayout(
        JAVA_INT.withName("max_send_wr"),
        JAVA_INT.withName("max_recv_wr"),
        JAVA_INT.withName("max_send_sge"),
        JAVA_INT.withName("max_recv_sge"),
        JAVA_INT.withName("max_inline_data")).withName("ibv_qp_cap");

    public static final StructLayout IBV_QP_INIT_ATTR = structLayout(
        ADDRESS.withName("qp_context"),
        ADDRESS.withName("send_cq"),
        ADDRESS.withName("recv_cq"),
        ADDRESS.withName("srq"),
        IBV_QP_CAP.withName("cap"),
        JAVA_INT.withName("qp_type"),
        JAVA_INT.withName("sq_sig_all"),
        paddingLayout(4)).withName("ibv_qp_init_attr");

    public static final UnionLayout IBV_GID = unionLayout(
        sequenceLayout(16, JAVA_BYTE).withName("raw"),
        structLayout(JAVA_LONG.withName("subnet_prefix"), JAVA_LONG.withName("interface_id")).withName("global"))
        .withName("ibv_gid");

    public static final StructLayout IBV_GLOBAL_ROUTE = structLayout(
        IBV_GID.withName("dgid"),
        JAVA_INT.withName("flow_label"),
        JAVA_BYTE.withName("sgid_index"),
        JAVA_BYTE.withName("hop_limit"),
        JAVA_BYTE.withName("traffic_class"),
        paddingLayout(1)).withName("ibv_global_route");

    public static final StructLayout IBV_AH_ATTR = structLayout(
        IBV_GLOBAL_ROUTE.withName("grh"),
        JAVA_SHORT.withName("dlid"),
        JAVA_BYTE.withName("sl"),
        JAVA_BYTE.withName("src_path_bits"),
        JAVA_BYTE.withName("static_rate"),
        JAVA_BYTE.withName("is_global"),
        JAVA_BYTE.withName("port_num"),
        paddingLayout(1)).withName("ibv_ah_attr");

    public static final StructLayout IBV_QP_ATTR = structLayout(
        JAVA_INT.withName("qp_state"),
        JAVA_INT.withName("cur_qp_state"),
        JAVA_INT.withName("path_mtu"),
        JAVA_INT.withName("path_mig_state"),
        JAVA_INT.withName("qkey"),
        JAVA_INT.withName("rq_psn"),
        JAVA_INT.withName("sq_psn"),
        JAVA_INT.withName("dest_qp_num"),
        JAVA_INT.withName("qp_access_flags"),
        IBV_QP_CAP.withName("cap"),
        IBV_AH_ATTR.withName("ah_attr"),
        IBV_AH_ATTR.withName("alt_ah_attr"),
        JAVA_SHORT.withName("pkey_index"),
        JAVA_SHORT.withName("alt_pkey_index"),
        JAVA_BYTE.withName("en_sqd_async_notify"),
        JAVA_BYTE.withName("sq_draining"),
        JAVA_BYTE.withName("max_rd_atomic"),
        JAVA_BYTE.withName("max_dest_rd_atomic"),
        JAVA_BYTE.withName("min_rnr_timer"),
        JAVA_BYTE.withName("port_num"),
        JAVA_BYTE.withName("timeout"),
        JAVA_BYTE.withName("retry_cnt"),
        JAVA_BYTE.withName("rnr_retry"),
        JAVA_BYTE.withName("alt_port_num"),
        JAVA_BYTE.withName("alt_timeout"),
        paddingLayout(1),
        JAVA_INT.withName("rate_limit"),
        paddingLayout(4)).withName("ibv_qp_attr");

    public static final StructLayout IBV_MR = structLayout(
        ADDRESS.withName("context"),
        ADDRESS.withName("pd"),
        ADDRESS.withName("addr"),
        JAVA_LONG.withName("length"),
        JAVA_INT.withName("handle"),
        JAVA_INT.withName("lkey"),
        JAVA_INT.withName("rkey"),
        paddingLayout(4)).withName("ibv_mr");

    public static final StructLayout IBV_PD = structLayout(
        ADDRESS.withName("context"),
        JAVA_INT.withName("handle"),
        paddingLayout(4)).withName("ibv_pd");

    public static final StructLayout IBV_CQ = structLayout(
        ADDRESS.withName("context"),
        ADDRESS.withName("channel"),
        ADDRESS.withName("cq_context"),
        JAVA_INT.withName("handle"),
        JAVA_INT.withName("cqe"),
        paddingLayout(PTHREAD_MUTEX_SIZE + PTHREAD_COND_SIZE),
        JAVA_INT.withName("comp_events_completed"),
        JAVA_INT.withName("async_events_completed")).withName("ibv_cq");

    public static final StructLayout IBV_QP = structLayout(
        ADDRESS.withName("context"),
        ADDRESS.withName("qp_context"),
        ADDRESS.withName("pd"),
        ADDRESS.withName("send_cq"),
        ADDRESS.withName("recv_cq"),
        ADDRESS.withName("srq"),
        JAVA_INT.withName("handle"),
        JAVA_INT.withName("qp_num"),
        JAVA_INT.withName("state"),
        JAVA_INT.withName("qp_type"),
        paddingLayout(PTHREAD_MUTEX_SIZE + PTHREAD_COND_SIZE),
        JAVA_INT.withName("events_completed"),
        paddingLayout(4)).withName("ibv_qp");

    /** 32 function pointers; the data-path ones are named, the rest (mostly {@code _compat_*}) are padding. */
    public static final StructLayout IBV_CONTEXT_OPS = structLayout(
        paddingLayout(11 * 8),
        ADDRESS.withName("poll_cq"),
        ADDRESS.withName("req_notify_cq"),
        paddingLayout(7 * 8),
        ADDRESS.withName("post_srq_recv"),
        paddingLayout(4 * 8),
        ADDRESS.withName("post_send"),
        ADDRESS.withName("post_recv"),
        paddingLayout(5 * 8)).withName("ibv_context_ops");

    public static final StructLayout IBV_CONTEXT = structLayout(
        ADDRESS.withName("device"),
        IBV_CONTEXT_OPS.withName("ops"),
        JAVA_INT.withName("cmd_fd"),
        JAVA_INT.withName("async_fd"),
        JAVA_INT.withName("num_comp_vectors"),
        paddingLayout(4),
        paddingLayout(PTHREAD_MUTEX_SIZE),
        ADDRESS.withName("abi_compat")).withName("ibv_context");

    /** Offsets of the {@code ibv_context}'s ops-table entries the inline {@code ibv_poll_cq/post_send/recv} call. */
    public static final long CONTEXT_OPS_POLL_CQ = offset(IBV_CONTEXT, "ops", "poll_cq");
    public static final long CONTEXT_OPS_POST_SEND = offset(IBV_CONTEXT, "ops", "post_send");
    public static final long CONTEXT_OPS_POST_RECV = offset(IBV_CONTEXT, "ops", "post_recv");

    private VerbsLayouts()
    {
    }

    /**
     * @return the byte offset of the member at {@code path} (member names) in {@code layout}.
     */
    public static long offset(final GroupLayout layout, final String... path)
    {
        final MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++)
        {
            elements[i] = groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }
}
