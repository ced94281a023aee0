package io.xferd.daemon.transport;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * What a daemon tells others about one of its segments, as versioned JSON with Mooncake's field names where
 * they fit. The same JSON goes through every metadata backend. {@code handle} is the owning daemon's handle
 * for the segment, valid while {@code epoch} (the daemon's start) is unchanged.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record SegmentDescriptor(
    @JsonProperty("version") int version,
    @JsonProperty("name") String name,
    @JsonProperty("protocol") String protocol,
    @JsonProperty("rpc_address") String rpcAddress,
    @JsonProperty("epoch") long epoch,
    @JsonProperty("handle") long handle,
    @JsonProperty("devices") List<String> devices,
    @JsonProperty("nics") List<Nic> nics,
    @JsonProperty("buffers") List<Buffer> buffers,
    @JsonProperty("priority_matrix") Map<String, List<List<String>>> priorityMatrix,
    @JsonProperty("signature") String signature)
{
    public static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * An unsigned descriptor (as peers hand it out over their authenticated connections).
     */
    public SegmentDescriptor(
        final int version,
        final String name,
        final String protocol,
        final String rpcAddress,
        final long epoch,
        final long handle,
        final List<String> devices,
        final List<Nic> nics,
        final List<Buffer> buffers,
        final Map<String, List<List<String>>> priorityMatrix)
    {
        this(version, name, protocol, rpcAddress, epoch, handle, devices, nics, buffers, priorityMatrix, null);
    }

    /**
     * @return this descriptor with {@code value} as its signature (null: unsigned).
     */
    public SegmentDescriptor withSignature(final String value)
    {
        return new SegmentDescriptor(version, name, protocol, rpcAddress, epoch, handle, devices, nics, buffers,
            priorityMatrix, value);
    }

    /**
     * One registered region: the owner's address, length and memory location; with RDMA also its keys, one per
     * entry of {@code devices} (absent with TCP, so TCP descriptors are unchanged).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Buffer(
        @JsonProperty("addr") long address,
        @JsonProperty("length") long length,
        @JsonProperty("location") String location,
        @JsonProperty("lkey") List<Long> lkey,
        @JsonProperty("rkey") List<Long> rkey)
    {
        public Buffer(final long address, final long length, final String location)
        {
            this(address, length, location, null, null);
        }

        /**
         * @return true when [address, address + length) lies inside this buffer; overflow safe.
         */
        public boolean contains(final long start, final long requestLength)
        {
            return requestLength > 0 && start >= this.address && requestLength <= this.length &&
                start - this.address <= this.length - requestLength;
        }
    }

    /**
     * A NIC of the owning daemon that peers may connect to.
     */
    public record Nic(@JsonProperty("name") String name, @JsonProperty("address") String address)
    {
    }

    /**
     * A descriptor answers for exactly one segment: the one asked for, at the daemon that answers for it.
     *
     * @param segmentName the name asked for, without {@code host:port}.
     * @return this descriptor.
     * @throws IllegalArgumentException when it describes another segment (a peer or store answering for a name it
     *                                  was not asked about).
     */
    public SegmentDescriptor requireSegment(final String segmentName)
    {
        if (segmentName.isEmpty())
        {
            return requireSessionSegment();
        }
        if (name == null || rpcAddress == null || !name.equals(rpcAddress + "/" + segmentName))
        {
            throw new IllegalArgumentException("descriptor for " + name + " (at " + rpcAddress +
                ") answered a request for segment " + segmentName + ": refused");
        }
        return this;
    }

    /**
     * The answer of a segment's own port (a Mooncake session), which is asked for no name: it must describe one named
     * segment of the daemon that answers for it. The connection it came over was authenticated to that port.
     *
     * @return this descriptor.
     * @throws IllegalArgumentException when it names no segment of its daemon.
     */
    public SegmentDescriptor requireSessionSegment()
    {
        if (name == null || rpcAddress == null || !name.startsWith(rpcAddress + "/") ||
            name.length() == rpcAddress.length() + 1)
        {
            throw new IllegalArgumentException("descriptor for " + name + " (at " + rpcAddress +
                ") names no segment of its daemon: refused");
        }
        return this;
    }

    public String toJson()
    {
        try
        {
            return JSON.writeValueAsString(this);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    public static SegmentDescriptor fromJson(final String json)
    {
        try
        {
            final SegmentDescriptor descriptor = JSON.readValue(json, SegmentDescriptor.class);
            if (descriptor.version() != VERSION)
            {
                throw new IllegalArgumentException("segment descriptor version " + descriptor.version() +
                    ", this daemon reads " + VERSION);
            }
            return descriptor;
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("malformed segment descriptor: " + ex.getMessage(), ex);
        }
    }
}
