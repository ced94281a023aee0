package io.xferd.nativebindings.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_CONTEXT;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_DEVICE_ATTR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_GID;
import static io.xferd.nativebindings.verbs.VerbsLayouts.IBV_PORT_ATTR;
import static io.xferd.nativebindings.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * An open device ({@code struct ibv_context}): queries, and the factory of protection domains and completion
 * queues. Close it ({@code ibv_close_device}) after everything made from it is destroyed.
 */
public final class VerbsContext implements AutoCloseable
{
    private final MemorySegment context;
    private final String deviceName;
    private boolean closed;

    private VerbsContext(final MemorySegment context, final String deviceName)
    {
        this.context = context;
        this.deviceName = deviceName;
    }

    static VerbsContext open(final VerbsDevice device)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment context = (MemorySegment)VerbsFunctions.OPEN_DEVICE.invokeExact(capture, device.pointer());
            return new VerbsContext(VerbsCalls.requireNonNull(
                context, IBV_CONTEXT.byteSize(), capture, "ibv_open_device", device.name()), device.name());
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    public String deviceName()
    {
        return deviceName;
    }

    /**
     * {@code ibv_query_device}.
     */
    public DeviceAttributes queryDevice()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment attr = arena.allocate(IBV_DEVICE_ATTR);
            final int rc = (int)VerbsFunctions.QUERY_DEVICE.invokeExact(capture, context, attr);
            VerbsCalls.requireZero(rc, capture, "ibv_query_device", deviceName);
            return new DeviceAttributes(
                attr.getString(0),
                Long.reverseBytes(attr.get(JAVA_LONG, offset(IBV_DEVICE_ATTR, "node_guid"))),
                attr.get(JAVA_LONG, offset(IBV_DEVICE_ATTR, "max_mr_size")),
                intAt(attr, "vendor_id"),
                intAt(attr, "vendor_part_id"),
                intAt(attr, "max_qp"),
                intAt(attr, "max_qp_wr"),
                intAt(attr, "max_sge"),
                intAt(attr, "max_cq"),
                intAt(attr, "max_cqe"),
                intAt(attr, "max_mr"),
                intAt(attr, "max_pd"),
                intAt(attr, "max_qp_rd_atom"),
                intAt(attr, "max_qp_init_rd_atom"),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, offset(IBV_DEVICE_ATTR, "phys_port_cnt"))));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_query_port} (the exported symbol; the header's inline wrapper of the same name is not callable).
     *
     * @param port port number, from 1.
     */
    public PortAttributes queryPort(final int port)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment attr = arena.allocate(IBV_PORT_ATTR); // zeroed, as the inline wrapper does
            final int rc = (int)VerbsFunctions.QUERY_PORT.invokeExact(capture, context, (byte)port, attr);
            VerbsCalls.requireZero(rc, capture, "ibv_query_port", deviceName + " port " + port);
            return new PortAttributes(
                attr.get(JAVA_INT, offset(IBV_PORT_ATTR, "state")),
                attr.get(JAVA_INT, offset(IBV_PORT_ATTR, "max_mtu")),
                attr.get(JAVA_INT, offset(IBV_PORT_ATTR, "active_mtu")),
                attr.get(JAVA_INT, offset(IBV_PORT_ATTR, "gid_tbl_len")),
                Short.toUnsignedInt(attr.get(JAVA_SHORT, offset(IBV_PORT_ATTR, "lid"))),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, offset(IBV_PORT_ATTR, "link_layer"))),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, offset(IBV_PORT_ATTR, "active_width"))),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, offset(IBV_PORT_ATTR, "active_speed"))));
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_query_gid}.
     */
    public Gid queryGid(final int port, final int index)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final MemorySegment gid = arena.allocate(IBV_GID);
            final int rc = (int)VerbsFunctions.QUERY_GID.invokeExact(capture, context, (byte)port, index, gid);
            VerbsCalls.requireZero(rc, capture, "ibv_query_gid", deviceName + " port " + port + " index " + index);
            return Gid.read(gid, 0);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    /**
     * {@code ibv_alloc_pd}.
     */
    public ProtectionDomain allocateProtectionDomain()
    {
        return ProtectionDomain.allocate(this);
    }

    /**
     * {@code ibv_create_cq} with {@code entries} entries, no completion channel (polled).
     *
     * @param pollBatch how many completions one {@link CompletionQueue#poll()} can return.
     */
    public CompletionQueue createCompletionQueue(final int entries, final int pollBatch)
    {
        return CompletionQueue.create(this, entries, pollBatch);
    }

    /**
     * Reads {@code object->context->ops.<function>}, as verbs.h's inline {@code ibv_poll_cq} / {@code ibv_post_send}
     * do before calling it.
     *
     * @param object        an {@code ibv_cq} or {@code ibv_qp}.
     * @param contextOffset offset of its {@code struct ibv_context *context} member.
     * @param opsOffset     offset of the function pointer in {@code ibv_context}, e.g.
     *                      {@link VerbsLayouts#CONTEXT_OPS_POLL_CQ}.
     */
    @SuppressWarnings("restricted")
    static MemorySegment opsFunctionOf(final MemorySegment object, final long contextOffset, final long opsOffset)
    {
        final MemorySegment context = object.get(ADDRESS, contextOffset).reinterpret(IBV_CONTEXT.byteSize());
        final MemorySegment function = context.get(ADDRESS, opsOffset);
        if (function.equals(MemorySegment.NULL))
        {
            throw new IllegalStateException("ibv_context ops entry at offset " + opsOffset + " is NULL");
        }
        return function;
    }

    MemorySegment pointer()
    {
        return context;
    }

    /**
     * {@code ibv_close_device}; idempotent.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = VerbsCalls.capture(arena);
            final int rc = (int)VerbsFunctions.CLOSE_DEVICE.invokeExact(capture, context);
            VerbsCalls.requireZero(rc, capture, "ibv_close_device", deviceName);
        }
        catch (final Throwable t)
        {
            throw VerbsCalls.rethrow(t);
        }
    }

    private static int intAt(final MemorySegment attr, final String field)
    {
        return attr.get(JAVA_INT, offset(IBV_DEVICE_ATTR, field));
    }
}
