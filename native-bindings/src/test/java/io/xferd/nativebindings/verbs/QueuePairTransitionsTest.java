package io.xferd.nativebindings.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.xferd.nativebindings.verbs.VerbsLayouts.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ibv_qp_attr} contents and attribute masks of the RC transitions RESET -> INIT -> RTR -> RTS, as the
 * verbs man page {@code ibv_modify_qp(3)} requires them for a reliable-connected QP.
 */
class QueuePairTransitionsTest
{
    @Test
    @Timeout(10)
    void shouldFillInitWithPortAndRemoteAccess()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = dirty(arena);
            final int mask = QueuePair.fillInit(attr, 1, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);

            assertThat(mask).isEqualTo(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
            assertThat(i32(attr, "qp_state")).isEqualTo(IBV_QPS_INIT);
            assertThat(i32(attr, "qp_access_flags")).isEqualTo(6);
            assertThat(u8(attr, "port_num")).isEqualTo(1);
            assertThat(attr.get(JAVA_SHORT, offset(IBV_QP_ATTR, "pkey_index"))).isZero();
        }
    }

    @Test
    @Timeout(10)
    void shouldFillReadyToReceiveWithTheRemoteEndpointAndGlobalRoute()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = dirty(arena);
            final Gid gid = new Gid(0xfe80000000000000L, 0x0202c9fffe123456L);
            final int mask = QueuePair.fillReadyToReceive(
                attr, new QueuePairEndpoint(0x000abc, 0x1234567, 9, gid), 2, 3, IBV_MTU_4096, 16);

            assertThat(mask).isEqualTo(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
            assertThat(i32(attr, "qp_state")).isEqualTo(IBV_QPS_RTR);
            assertThat(i32(attr, "path_mtu")).isEqualTo(IBV_MTU_4096);
            assertThat(i32(attr, "dest_qp_num")).isEqualTo(0xabc);
            assertThat(i32(attr, "rq_psn")).isEqualTo(0x234567);
            assertThat(u8(attr, "max_dest_rd_atomic")).isEqualTo(16);
            assertThat(u8(attr, "min_rnr_timer")).isEqualTo(12);
            assertThat(attr.get(JAVA_SHORT, offset(IBV_QP_ATTR, "ah_attr", "dlid"))).isEqualTo((short)9);
            assertThat(u8(attr, "ah_attr", "port_num")).isEqualTo(2);
            assertThat(u8(attr, "ah_attr", "is_global")).isEqualTo(1);
            assertThat(u8(attr, "ah_attr", "grh", "sgid_index")).isEqualTo(3);
            assertThat(u8(attr, "ah_attr", "grh", "hop_limit")).isEqualTo(64);
            final long dgid = offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid");
            assertThat(attr.get(JAVA_BYTE, dgid)).isEqualTo((byte)0xfe);
            assertThat(attr.get(JAVA_BYTE, dgid + 1)).isEqualTo((byte)0x80);
            assertThat(attr.get(JAVA_BYTE, dgid + 15)).isEqualTo((byte)0x56);
            assertThat(Gid.read(attr, dgid)).isEqualTo(gid);
            assertThat(gid).hasToString("fe80:0000:0000:0000:0202:c9ff:fe12:3456");
        }
    }

    @Test
    @Timeout(10)
    void shouldLeaveTheGlobalRouteOffForAZeroGid()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = dirty(arena);
            QueuePair.fillReadyToReceive(attr, new QueuePairEndpoint(1, 1, 4, new Gid(0, 0)), 1, 0, IBV_MTU_1024, 1);

            assertThat(u8(attr, "ah_attr", "is_global")).isZero();
            assertThat(u8(attr, "ah_attr", "grh", "hop_limit")).isZero();
        }
    }

    @Test
    @Timeout(10)
    void shouldFillReadyToSendWithRetriesAndPsn()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment attr = dirty(arena);
            final int mask = QueuePair.fillReadyToSend(attr, 0x7654321, 16);

            assertThat(mask).isEqualTo(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
            assertThat(i32(attr, "qp_state")).isEqualTo(IBV_QPS_RTS);
            assertThat(i32(attr, "sq_psn")).isEqualTo(0x654321);
            assertThat(u8(attr, "timeout")).isEqualTo(14);
            assertThat(u8(attr, "retry_cnt")).isEqualTo(7);
            assertThat(u8(attr, "rnr_retry")).isEqualTo(7);
            assertThat(u8(attr, "max_rd_atomic")).isEqualTo(16);
            assertThat(i32(attr, "dest_qp_num")).isZero();
        }
    }

    private static MemorySegment dirty(final Arena arena)
    {
        final MemorySegment attr = arena.allocate(IBV_QP_ATTR);
        attr.fill((byte)0x5a);
        return attr;
    }

    private static int i32(final MemorySegment attr, final String... path)
    {
        return attr.get(JAVA_INT, offset(IBV_QP_ATTR, path));
    }

    private static int u8(final MemorySegment attr, final String... path)
    {
        return Byte.toUnsignedInt(attr.get(JAVA_BYTE, offset(IBV_QP_ATTR, path)));
    }
}
