package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.CLayoutProgram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every {@link VerbsLayouts} struct (size, alignment, offset and size of every named member) and every
 * {@code IBV_*} constant, compared with what gcc computes from the installed {@code <infiniband/verbs.h>}.
 */
class VerbsLayoutTest
{
    static final String HEADER = "infiniband/verbs.h";

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void shouldMatchTheInstalledVerbsHeader() throws Exception
    {
        requireHeader(dir);
        final CLayoutProgram program = program();
        final Map<String, Long> actual = program.compileAndRun(dir);

        assertThat(program.mismatches(actual)).as("Java layouts vs <%s>", HEADER).isEmpty();
        assertThat(actual).hasSameSizeAs(program.expected());
        assertThat(program.expected()).hasSizeGreaterThan(300);
        System.out.println("VerbsLayoutTest: " + program.expected().size() + " checks against " + HEADER + " (" +
            program.expected().keySet().stream().filter(k -> k.startsWith("IBV_")).count() + " constants)");
    }

    static void requireHeader(final Path dir) throws Exception
    {
        if (!CLayoutProgram.headerCompiles(dir, HEADER))
        {
            if (System.getenv("CI") != null)
            {
                fail("gcc cannot compile against <" + HEADER + ">: install gcc and libibverbs-dev " +
                    "(apt-get install -y gcc libibverbs-dev)");
            }
            assumeTrue(false, "<" + HEADER + "> or gcc not installed: install libibverbs-dev to run this check");
        }
    }

    static CLayoutProgram program() throws IllegalAccessException
    {
        final CLayoutProgram program = new CLayoutProgram(HEADER)
            .type("struct ibv_device_attr", VerbsLayouts.IBV_DEVICE_ATTR)
            .type("struct ibv_port_attr", VerbsLayouts.IBV_PORT_ATTR)
            .type("struct ibv_sge", VerbsLayouts.IBV_SGE)
            .type("struct ibv_send_wr", VerbsLayouts.IBV_SEND_WR)
            .type("struct ibv_recv_wr", VerbsLayouts.IBV_RECV_WR)
            .type("struct ibv_wc", VerbsLayouts.IBV_WC)
            .type("struct ibv_qp_cap", VerbsLayouts.IBV_QP_CAP)
            .type("struct ibv_qp_init_attr", VerbsLayouts.IBV_QP_INIT_ATTR)
            .type("union ibv_gid", VerbsLayouts.IBV_GID)
            .type("struct ibv_global_route", VerbsLayouts.IBV_GLOBAL_ROUTE)
            .type("struct ibv_ah_attr", VerbsLayouts.IBV_AH_ATTR)
            .type("struct ibv_qp_attr", VerbsLayouts.IBV_QP_ATTR)
            .type("struct ibv_mr", VerbsLayouts.IBV_MR)
            .type("struct ibv_pd", VerbsLayouts.IBV_PD)
            .type("struct ibv_cq", VerbsLayouts.IBV_CQ)
            .type("struct ibv_qp", VerbsLayouts.IBV_QP)
            .type("struct ibv_context_ops", VerbsLayouts.IBV_CONTEXT_OPS)
            .type("struct ibv_context", VerbsLayouts.IBV_CONTEXT)
            .constant("CONTEXT_OPS_POLL_CQ", "offsetof(struct ibv_context, ops.poll_cq)", VerbsLayouts.CONTEXT_OPS_POLL_CQ)
            .constant("CONTEXT_OPS_POST_SEND", "offsetof(struct ibv_context, ops.post_send)", VerbsLayouts.CONTEXT_OPS_POST_SEND)
            .constant("CONTEXT_OPS_POST_RECV", "offsetof(struct ibv_context, ops.post_recv)", VerbsLayouts.CONTEXT_OPS_POST_RECV);
        for (final Field field : VerbsLayouts.class.getFields())
        {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class &&
                field.getName().startsWith("IBV_"))
            {
                program.constant(field.getName(), field.getInt(null));
            }
        }
        return program;
    }
}
