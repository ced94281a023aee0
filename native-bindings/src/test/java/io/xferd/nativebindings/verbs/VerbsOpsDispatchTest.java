package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

import static io.xferd.nativebindings.verbs.VerbsLayouts.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The inline-function technique without hardware: a fake {@code ibv_context} whose ops table points at Java upcall
 * stubs standing in for a provider's {@code poll_cq} and {@code post_send}; checks that {@link CompletionQueue} and
 * {@link QueuePair} call through {@code object->context->ops}, pass the right arguments, and read and write the
 * structs at the offsets {@code VerbsLayoutTest} checks against the header.
 */
@SuppressWarnings("restricted")
class VerbsOpsDispatchTest
{
    record Posted(long wrId, int opcode, int flags, int numSge, long addr, int length, int lkey, long remote, int rkey)
    {
    }

    private static final List<Posted> POSTED = new ArrayList<>();
    private static long lastObject;
    private static int pollResult;
    private static int postResult;

    private Arena arena;
    private MemorySegment context;

    @BeforeEach
    void fakeContext() throws Exception
    {
        arena = Arena.ofConfined();
        context = arena.allocate(IBV_CONTEXT);
        final MethodHandles.Lookup lookup = MethodHandles.lookup();
        final Linker linker = Linker.nativeLinker();
        context.set(ADDRESS, CONTEXT_OPS_POLL_CQ, linker.upcallStub(
            lookup.findStatic(VerbsOpsDispatchTest.class, "pollCq",
                MethodType.methodType(int.class, MemorySegment.class, int.class, MemorySegment.class)),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), arena));
        context.set(ADDRESS, CONTEXT_OPS_POST_SEND, linker.upcallStub(
            lookup.findStatic(VerbsOpsDispatchTest.class, "postSend",
                MethodType.methodType(int.class, MemorySegment.class, MemorySegment.class, MemorySegment.class)),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), arena));
        POSTED.clear();
        lastObject = 0;
        pollResult = 2;
        postResult = 0;
    }

    @AfterEach
    void release()
    {
        arena.close();
    }

    static int pollCq(final MemorySegment cq, final int max, final MemorySegment wc)
    {
        lastObject = cq.address();
        final MemorySegment entries = wc.reinterpret(IBV_WC.byteSize() * max);
        for (int i = 0; i < Math.min(max, pollResult); i++)
        {
            final long base = i * IBV_WC.byteSize();
            entries.set(JAVA_LONG, base + offset(IBV_WC, "wr_id"), 100 + i);
            entries.set(JAVA_INT, base + offset(IBV_WC, "status"), i == 0 ? IBV_WC_SUCCESS : 12);
            entries.set(JAVA_INT, base + offset(IBV_WC, "opcode"), IBV_WC_RDMA_READ);
            entries.set(JAVA_INT, base + offset(IBV_WC, "vendor_err"), i * 0x81);
            entries.set(JAVA_INT, base + offset(IBV_WC, "byte_len"), 4096 * (i + 1));
            entries.set(JAVA_INT, base + offset(IBV_WC, "qp_num"), 0x1234);
        }
        return pollResult;
    }

    static int postSend(final MemorySegment qp, final MemorySegment first, final MemorySegment badWr)
    {
        lastObject = qp.address();
        MemorySegment wr = first.reinterpret(IBV_SEND_WR.byteSize());
        int index = 0;
        while (true)
        {
            if (postResult != 0 && index == 1)
            {
                badWr.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, wr);
                return postResult;
            }
            final MemorySegment sge = wr.get(ADDRESS, offset(IBV_SEND_WR, "sg_list")).reinterpret(IBV_SGE.byteSize());
            POSTED.add(new Posted(
                wr.get(JAVA_LONG, offset(IBV_SEND_WR, "wr_id")),
                wr.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")),
                wr.get(JAVA_INT, offset(IBV_SEND_WR, "send_flags")),
                wr.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")),
                sge.get(JAVA_LONG, offset(IBV_SGE, "addr")),
                sge.get(JAVA_INT, offset(IBV_SGE, "length")),
                sge.get(JAVA_INT, offset(IBV_SGE, "lkey")),
                wr.get(JAVA_LONG, offset(IBV_SEND_WR, "wr", "rdma", "remote_addr")),
                wr.get(JAVA_INT, offset(IBV_SEND_WR, "wr", "rdma", "rkey"))));
            final MemorySegment next = wr.get(ADDRESS, offset(IBV_SEND_WR, "next"));
            if (next.equals(MemorySegment.NULL))
            {
                return 0;
            }
            wr = next.reinterpret(IBV_SEND_WR.byteSize());
            index++;
        }
    }

    @Test
    @Timeout(10)
    void shouldPollThroughTheContextOpsTable()
    {
        final MemorySegment cq = arena.allocate(IBV_CQ);
        cq.set(ADDRESS, offset(IBV_CQ, "context"), context);
        cq.set(JAVA_INT, offset(IBV_CQ, "cqe"), 16383); // a provider rounded 8192 up
        final CompletionQueue queue = new CompletionQueue("fake0", cq, 4);

        assertThat(queue.capacity()).isEqualTo(16383);
        assertThat(queue.poll()).isEqualTo(2);
        assertThat(lastObject).isEqualTo(cq.address());
        assertThat(queue.wrId(0)).isEqualTo(100);
        assertThat(queue.status(0)).isEqualTo(IBV_WC_SUCCESS);
        assertThat(queue.wrId(1)).isEqualTo(101);
        assertThat(queue.status(1)).isEqualTo(12);
        assertThat(queue.vendorError(1)).isEqualTo(0x81);
        assertThat(queue.opcode(1)).isEqualTo(IBV_WC_RDMA_READ);
        assertThat(queue.byteLength(1)).isEqualTo(8192);
        assertThat(queue.qpNum(0)).isEqualTo(0x1234);

        pollResult = 0;
        assertThat(queue.poll()).isZero();
        pollResult = -2;
        assertThatThrownBy(queue::poll).isInstanceOf(NativeException.class)
            .hasMessageContaining("ibv_poll_cq failed").hasMessageContaining("returned -2 on fake0");
    }

    @Test
    @Timeout(10)
    void shouldPostChainedRdmaWorkRequestsThroughTheContextOpsTable()
    {
        final QueuePair qp = new QueuePair("fake0", fakeQp(77), 8);
        assertThat(qp.qpNum()).isEqualTo(77);
        assertThat(qp.sendBatch()).isEqualTo(8);

        qp.setRdma(0, IBV_WR_RDMA_WRITE, 1, 0, 0x1000, 4096, 0xAA, 0x7f0000001000L, 0xBB);
        qp.setRdma(1, IBV_WR_RDMA_READ, 2, IBV_SEND_SIGNALED, 0x2000, 65536, 0xCC, 0x7f0000002000L, 0xDD);
        qp.postSend(2);

        assertThat(POSTED).containsExactly(
            new Posted(1, IBV_WR_RDMA_WRITE, 0, 1, 0x1000, 4096, 0xAA, 0x7f0000001000L, 0xBB),
            new Posted(2, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, 1, 0x2000, 65536, 0xCC, 0x7f0000002000L, 0xDD));

        POSTED.clear();
        qp.postRdma(IBV_WR_RDMA_READ, 3, IBV_SEND_SIGNALED, 0x3000, 512, 1, 0x4000, 2);
        assertThat(POSTED).containsExactly(new Posted(3, IBV_WR_RDMA_READ, IBV_SEND_SIGNALED, 1, 0x3000, 512, 1,
            0x4000, 2));
    }

    @Test
    @Timeout(10)
    void shouldNameTheFirstRequestNotPostedWhenTheProviderRefuses()
    {
        final QueuePair qp = new QueuePair("fake0", fakeQp(5), 4);
        qp.setRdma(0, IBV_WR_RDMA_WRITE, 1, 0, 0x1000, 8, 1, 0x2000, 2);
        qp.setRdma(1, IBV_WR_RDMA_WRITE, 2, 0, 0x1008, 8, 1, 0x2008, 2);
        postResult = 12;

        assertThatThrownBy(() -> qp.postSend(2)).isInstanceOf(NativeException.class)
            .hasMessage("ibv_post_send failed: ENOMEM (12) Cannot allocate memory; fake0 qp 5 request 1 of 2");
        assertThat(POSTED).hasSize(1);
        assertThatThrownBy(() -> qp.postSend(5)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @Timeout(10)
    void shouldReportTheErrnoOfAProviderThatReturnsItNegated()
    {
        final QueuePair qp = new QueuePair("rxe0", fakeQp(6), 4);
        qp.setRdma(0, IBV_WR_RDMA_READ, 1, IBV_SEND_SIGNALED, 0x1000, 8, 1, 0x2000, 2);
        qp.setRdma(1, IBV_WR_RDMA_READ, 2, IBV_SEND_SIGNALED, 0x1008, 8, 1, 0x2008, 2);
        postResult = -12; // rxe: -ENOMEM

        assertThatThrownBy(() -> qp.postSend(2)).isInstanceOf(NativeException.class)
            .hasMessageStartingWith("ibv_post_send failed: ENOMEM (12)")
            .satisfies(ex -> assertThat(((NativeException)ex).errno()).isEqualTo(12));
    }

    @Test
    @Timeout(10)
    void shouldRefuseAnObjectWhoseOpsEntryIsNull()
    {
        context.set(ADDRESS, CONTEXT_OPS_POLL_CQ, MemorySegment.NULL);
        final MemorySegment cq = arena.allocate(IBV_CQ);
        cq.set(ADDRESS, offset(IBV_CQ, "context"), context);

        assertThatThrownBy(() -> new CompletionQueue("fake0", cq, 1)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("NULL");
    }

    private MemorySegment fakeQp(final int qpNum)
    {
        final MemorySegment qp = arena.allocate(IBV_QP);
        qp.set(ADDRESS, offset(IBV_QP, "context"), context);
        qp.set(JAVA_INT, offset(IBV_QP, "qp_num"), qpNum);
        return qp;
    }
}
