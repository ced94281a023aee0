package io.xferd.daemon.metadata;

/**
 * Where segment descriptors live in a metadata store: {@code xferd/<cluster id>/segments/<segment name>}, so that
 * several clusters (or test runs) share one store without seeing each other's segments.
 */
public final class MetadataKeys
{
    private final String segmentsPrefix;

    public MetadataKeys(final String clusterId)
    {
        this.segmentsPrefix = "xferd/" + clusterId + "/segments/";
    }

    /**
     * @return the prefix of every segment key of the cluster, ending in '/'.
     */
    public String segmentsPrefix()
    {
        return segmentsPrefix;
    }

    /**
     * @param segmentName a client's plain segment name (no '/').
     */
    public String segment(final String segmentName)
    {
        return segmentsPrefix + segmentName;
    }

    /**
     * @return the segment name of a key of this cluster, or null when the key is not one.
     */
    public String segmentName(final String key)
    {
        return key != null && key.startsWith(segmentsPrefix) ? key.substring(segmentsPrefix.length()) : null;
    }
}
