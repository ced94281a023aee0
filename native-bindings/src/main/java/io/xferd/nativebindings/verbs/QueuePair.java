package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.NativeException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static io.xferd.nativebindings.verbs.VerbsLayouts.CONTEXT_OPS_POST_SEND;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QPS_ERR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QPS_INIT;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QPS_RTR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QPS_RTS;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QPT_RC;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_ACCESS_FLAGS;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_ATTR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_AV;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_DEST_QPN;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_INIT_ATTR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_MAX_DEST_RD_ATOMIC;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_MAX_QP_RD_ATOMIC;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_MIN_RNR_TIMER;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_PATH_MTU;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_PKEY_INDEX;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_PORT;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_RETRY_CNT;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_RNR_RETRY;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_RQ_PSN;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_SQ_PSN;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_STATE;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_QP_TIMEOUT;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_SEND_WR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_SGE;
import static io.xferd.nativebindings.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A reliable-connected queue pair ({@code ibv_create_qp}, {@code IBV_QPT_RC}), its state transitions
 * RESET -> INIT -> RTR -> RTS ({@code ibv_modify_qp}), and posting of RDMA READ/WRITE work requests.
 * <p>
 * {@code ibv_post_send} is a static inline function in {@code verbs.h} that calls {@code qp->context->ops.post_send};
 * this class reads that function pointer once, at creation, and downcalls through it. Work requests are built in
 * memory allocated with the QP ({@link #sendBatch()} chained {@code ibv_send_wr} + one {@code ibv_sge} each), so
 * posting allocates nothing. One thread posts to a given QP.
 */
public final class QueuePair implements AutoCloseable
{
    static final int INIT_MASK = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    static final int RTR_MASK = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    static final int RTS_MASK = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
    static final int PSN_MASK = 0xFFFFFF;
    /** Local ACK timeout 4.096us * 2^14 = 67 ms, 7 retries, RNR timer 12 (0.64 ms), RNR retry 7 = forever. */
    static final int TIMEOUT = 14;
    static final int RETRY_COUNT = 7;
    static final int RNR_RETRY = 7;
    static final int MIN_RNR_TIMER = 12;
    static final int HOP_LIMIT = 64;
    static final int MAX_SEND_BATCH = 64;

    /** {@code int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)}, pointer first. */
    @SuppressWarnings("restricted")
    private static final MethodHandle POST_SEND =
        Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final long WR_SIZE = IBV_SEND_WR.byteSize();
    private static final long SGE_SIZE = IBV_SGE.byteSize();
    private static final long SGE_ADDR = offset(IBV_SGE, "addr");
    private static final long SGE_LENGTH = offset(IBV_SGE, "length");
    private static final long SGE_LKEY = offset(IBV_SGE, "lkey");
    private static final long WR_ID = offset(IBV_SEND_WR, "wr_id");
    private static final long WR_NEXT = offset(IBV_SEND_WR, "next");
    private static final long WR_OPCODE = offset(IBV_SEND_WR, "opcode");
    private static final long WR_SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
    private static final long WR_REMOTE_ADDR = offset(IBV_SEND_WR, "wr", "rdma", "remote_addr");
    private static final long WR_RKEY = offset(IBV_SEND_WR, "wr", "rdma", "rkey");

    private final String deviceName;
    private final MemorySegment qp;
    private final int qpNum;
    private final MemorySegment postSendFunction;
    private final Arena arena;
    private final MemorySegment attr;
    private final MemorySegment requests;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final int sendBatch;
    private boolean closed;

    /**
     * @param qp an {@code ibv_qp} whose {@code context->ops.post_send} is the function posting calls.
     */
    QueuePair(final String deviceName, final MemorySegment qp, final int sendBatch)
    {
        this.deviceName = deviceName;
        this.qp = qp;
        this.qpNum = qp.get(JAVA_INT, offset(IBV_QP, "qp_num"));
        this.postSendFunction = VerbsContext.opsFunctionOf(qp, offset(IBV_QP, "context"), CONTEXT_OPS_POST_SEND);
        this.sendBatch = sendBatch;
        this.arena = Arena.ofShared();
        this.attr = arena.allocate(IBV_QP_ATTR);
        this.requests = arena.allocate(WR_SIZE * sendBatch, IBV_SEND_WR.byteAlignment());
        this.sges = arena.allocate(SGE_SIZE * sendBatch, IBV_SGE.byteAlignment());
        this.badWr = arena.allocate(ADDRESS);
        for (int i = 0; i < sendBatch; i++)
        {
            final long wr = i * WR_SIZE;
            requests.set(ADDRESS, wr + offset(IBV_SEND_WR, "sg_list"), sges.asSlice(i * SGE_SIZE, SGE_SIZE));
            requests.set(JAVA_INT, wr + offset(IBV_SEND_WR, "num_sge"), 1);
        }
    }

    static QueuePair create(
        final ProtectionDomain pd, final CompletionQueue sendCq, final CompletionQueue recvCq, final int maxSendWr,
        final int maxRecvWr, final int maxSge)
    {
        try (Arena call = Arena.ofConfined())
        {
            final MemorySegment init = call.allocate(IBV_QP_INIT_ATTR);
            init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "send_cq"), sendCq.pointer());
            init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "recv_cq"), recvCq.pointer());
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_wr"), maxSendWr);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_wr"), maxRecvWr);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_sge"), maxSge);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_sge"), maxSge);
            init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "qp_type"), IBV_QPT_RC);
            final MemorySegment capture = VerbsCalls.capture(call);
            final MemorySegment qp = (MemorySegment)VerbsFunctions.CREATE_QP.invokeExact(capture, pd.pointer(), init);
            final String device = pd.context().deviceName();
            return new QueuePair(device, VerbsCalls.requireNonNull(qp, IBV_QP.byteSize(), capture, "ibv_create_qp",
                device + " max_send_wr=" + maxSendWr), Math.max(1, Math.min(maxSendWr, MAX_SEND_BATCH)));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    public int qpNum()
    {
        return qpNum;
    }

    /**
     * @return how many work requests one {@link #postSend(int)} can chain.
     */
    public int sendBatch()
    {
        return sendBatch;
    }

    /**
     * RESET -> INIT on {@code port} with the given remote access ({@code IBV_ACCESS_REMOTE_READ | _WRITE}).
     */
    public void toInit(final int port, final int accessFlags)
    {
        modify(fillInit(attr, port, accessFlags), "INIT");
    }

    /**
     * INIT -> RTR (ready to receive) towards {@code remote}.
     *
     * @param sgidIndex        the local GID index (RoCE: the index of the RoCE v2 GID of the chosen address).
     * @param pathMtu          {@code IBV_MTU_*}, at most both ports' active MTU.
     * @param maxDestRdAtomic  RDMA READs the peer may have outstanding against this QP.
     */
    public void toReadyToReceive(
        final QueuePairEndpoint remote, final int port, final int sgidIndex, final int pathMtu,
        final int maxDestRdAtomic)
    {
        modify(fillReadyToReceive(attr, remote, port, sgidIndex, pathMtu, maxDestRdAtomic), "RTR");
    }

    /**
     * RTR -> RTS (ready to send) starting at packet sequence number {@code psn}.
     *
     * @param maxRdAtomic RDMA READs this QP may have outstanding.
     */
    public void toReadyToSend(final int psn, final int maxRdAtomic)
    {
        modify(fillReadyToSend(attr, psn, maxRdAtomic), "RTS");
    }

    /**
     * Any state -> ERR: flushes outstanding work requests with {@code IBV_WC_WR_FLUSH_ERR}.
     */
    public void toError()
    {
        attr.fill((byte)0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), IBV_QPS_ERR);
        modify(IBV_QP_STATE, "ERR");
    }

    static int fillInit(final MemorySegment attr, final int port, final int accessFlags)
    {
        attr.fill((byte)0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), IBV_QPS_INIT);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_access_flags"), accessFlags);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "port_num"), (byte)port);
        return INIT_MASK;
    }

    static int fillReadyToReceive(
        final MemorySegment attr, final QueuePairEndpoint remote, final int port, final int sgidIndex,
        final int pathMtu, final int maxDestRdAtomic)
    {
        attr.fill((byte)0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), IBV_QPS_RTR);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "path_mtu"), pathMtu);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "dest_qp_num"), remote.qpNum());
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "rq_psn"), remote.psn() & PSN_MASK);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_dest_rd_atomic"), (byte)maxDestRdAtomic);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "min_rnr_timer"), (byte)MIN_RNR_TIMER);
        attr.set(JAVA_SHORT, offset(IBV_QP_ATTR, "ah_attr", "dlid"), (short)remote.lid());
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "port_num"), (byte)port);
        if (remote.gid() != null && !remote.gid().isZero())
        {
            attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "is_global"), (byte)1);
            remote.gid().write(attr, offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid"));
            attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "grh", "sgid_index"), (byte)sgidIndex);
            attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "grh", "hop_limit"), (byte)HOP_LIMIT);
        }
        return RTR_MASK;
    }

    static int fillReadyToSend(final MemorySegment attr, final int psn, final int maxRdAtomic)
    {
        attr.fill((byte)0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), IBV_QPS_RTS);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "sq_psn"), psn & PSN_MASK);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "timeout"), (byte)TIMEOUT);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "retry_cnt"), (byte)RETRY_COUNT);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "rnr_retry"), (byte)RNR_RETRY);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_rd_atomic"), (byte)maxRdAtomic);
        return RTS_MASK;
    }

    private void modify(final int mask, final String state)
    {
        try (Arena call = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(call);
            final int rc = (int)VerbsFunctions.MODIFY_QP.invokeExact(capture, qp, attr, mask);
            VerbsCalls.requireZero(rc, capture, "ibv_modify_qp",
                "qp " + qpNum + " -> " + state + String.format(" mask=0x%x", mask));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * Fills work request {@code index} of the send batch: one RDMA READ or WRITE of {@code length} bytes between
     * local {@code localAddress} (registered, {@code lkey}) and the peer's {@code remoteAddress} ({@code rkey}).
     *
     * @param opcode    {@link VerbsLayouts#IBV_WR_RDMA_READ} or {@link VerbsLayouts#IBV_WR_RDMA_WRITE}.
     * @param sendFlags e.g. {@link VerbsLayouts#IBV_SEND_SIGNALED} to get a completion for it.
     */
    public void setRdma(
        final int index, final int opcode, final long wrId, final int sendFlags, final long localAddress,
        final int length, final int lkey, final long remoteAddress, final int rkey)
    {
        final long wr = index * WR_SIZE;
        final long sge = index * SGE_SIZE;
        sges.set(JAVA_LONG, sge + SGE_ADDR, localAddress);
        sges.set(JAVA_INT, sge + SGE_LENGTH, length);
        sges.set(JAVA_INT, sge + SGE_LKEY, lkey);
        requests.set(JAVA_LONG, wr + WR_ID, wrId);
        requests.set(JAVA_INT, wr + WR_OPCODE, opcode);
        requests.set(JAVA_INT, wr + WR_SEND_FLAGS, sendFlags);
        requests.set(JAVA_LONG, wr + WR_REMOTE_ADDR, remoteAddress);
        requests.set(JAVA_INT, wr + WR_RKEY, rkey);
    }

    /**
     * Posts work requests {@code 0..count-1} of the send batch as one chain ({@code ibv_post_send}).
     *
     * @throws NativeException with the provider's errno (e.g. ENOMEM when the send queue is full), naming the
     *                         first request not posted; the ones before it were posted.
     */
    public void postSend(final int count)
    {
        if (count < 1 || count > sendBatch)
        {
            throw new IllegalArgumentException("count " + count + " not in 1.." + sendBatch);
        }
        for (int i = 0; i < count; i++)
        {
            final long next = i + 1 < count ? requests.address() + (i + 1) * WR_SIZE : 0L;
            requests.set(JAVA_LONG, i * WR_SIZE + WR_NEXT, next);
        }
        final int rc;
        try
        {
            rc = (int)POST_SEND.invokeExact(postSendFunction, qp, requests, badWr);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
        if (rc != 0)
        {
            final long bad = badWr.get(JAVA_LONG, 0);
            // mlx5 returns a positive errno, rxe a negative one (-ENOMEM when the send queue is full)
            throw new NativeException("ibv_post_send", Math.abs(rc),
                deviceName + " qp " + qpNum + " request " + (bad == 0 ? -1 : (bad - requests.address()) / WR_SIZE) + " of " + count);
        }
    }

    /**
     * {@link #setRdma} at index 0 and {@link #postSend(int)} of one request.
     */
    public void postRdma(
        final int opcode, final long wrId, final int sendFlags, final long localAddress, final int length,
        final int lkey, final long remoteAddress, final int rkey)
    {
        setRdma(0, opcode, wrId, sendFlags, localAddress, length, lkey, remoteAddress, rkey);
        postSend(1);
    }

    /**
     * {@code ibv_destroy_qp}; idempotent.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try (Arena call = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(call);
            final int rc = (int)VerbsFunctions.DESTROY_QP.invokeExact(capture, qp);
            VerbsCalls.requireZero(rc, capture, "ibv_destroy_qp", "qp " + qpNum);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
        finally
        {
            arena.close();
        }
    }
}
