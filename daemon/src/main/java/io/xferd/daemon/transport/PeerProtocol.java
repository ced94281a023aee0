package io.xferd.daemon.transport;

/**
 * The daemon-to-daemon protocol on the RPC port (TCP). Every frame is an 8-byte header, int32 body length and
 * int32 type (little-endian), then the body. A connection begins with the handshake; after it, the requester
 * (initiator) sends requests and the server (responder) answers each, in order unless the initiator's HELLO set
 * {@link #FLAG_ANSWERS_BY_ID}.
 * <pre>
 * Handshake (the initiator proves first, so a stranger learns nothing it could test token guesses against):
 * HELLO (1)        I->R  int32 magic 'XFPR', int32 version, int32 flags (bit 0: the initiator runs without peer
 *                        authentication; bit 1: it matches each ACK to its request by slice id, so the responder
 *                        may answer in any order; other bits are ignored), int32 reserved, 32 bytes initiator
 *                        nonce, int64 initiator epoch
 * CHALLENGE (2)    R->I  32 bytes responder nonce, int64 responder epoch
 * PROOF (3)        I->R  32 bytes initiator proof
 * ACCEPT (4)       R->I  32 bytes responder proof
 * REFUSE (5)       R->I  UTF-8 reason (wrong magic or version, or the two sides disagree on authentication);
 *                        the responder closes. A wrong proof gets no answer at all: the connection is closed.
 *
 * After the handshake, every frame's fixed part ends with a 16-byte tag (see below):
 * GET_SEGMENT (10)  I->R  UTF-8 segment name (without host:port), tag; on a segment's own port (a Mooncake
 *                         session, see SegmentListeners) any name, answered with that port's segment
 * DESCRIPTOR (11)   R->I  int32 status, then the descriptor JSON (status 0) or a UTF-8 reason, tag
 * CONNECT_QP (12)   I->R  u8 length + the requester's rpc address (UTF-8 host:port), int64 the requester's
 *                         epoch (&gt; 0), then its RDMA QP endpoints (see the RDMA transport's QpExchangeCodec), tag
 * QP_ANSWER (13)    R->I  the server's endpoints, one per requested one, tag; or REFUSE (UTF-8 reason, tag),
 *                         after which the connection stays usable
 *
 * WRITE (20)      I->R  int64 slice id, int64 segment handle, int64 address, int64 length,
 *                       int64 request address, int64 request length, tag, then length bytes
 * READ (21)       I->R  int64 slice id, int64 segment handle, int64 address, int64 length,
 *                       int64 request address, int64 request length, tag
 * NOTIFY (22)     I->R  int64 slice id, int64 segment handle, int64 trace id, int32 source length,
 *                       int32 message length, tag, source name, message
 * ACK (30)        R->I  int64 slice id, int32 status, int32 reserved, int64 length, tag,
 *                       then length bytes when it answers a READ with status 0
 * </pre>
 * Keys: K is the cluster token (its UTF-8 bytes). With T = initiator nonce | responder nonce | initiator epoch |
 * responder epoch | the HELLO's flags word (epochs int64, flags int32, little-endian), the initiator's proof is HMAC-SHA256(K, "xferd/4 initiator" | T),
 * the responder's HMAC-SHA256(K, "xferd/4 responder" | T); each direction of the connection has its own session
 * key, HMAC-SHA256(K, "xferd/4 frames initiator-&gt;responder" | T) and "... responder-&gt;initiator".
 * A frame's tag is HMAC-SHA256 (truncated to 16 bytes) under its direction's key over int64 sequence number
 * (0 for the first frame after the handshake in that direction, then +1 per frame) | int32 body length |
 * int32 type | the fixed fields before the tag; for control frames and NOTIFY, the whole body but the tag. So a
 * frame cannot be forged, altered in its header, fields or control body, replayed, dropped or reordered without
 * the connection being closed. The bulk payloads of WRITE and READ are not covered (see docs/security.md).
 * Without peer authentication ({@code --insecure-no-peer-auth}) proofs and tags are zeros and nothing is checked;
 * such a daemon and one with a token refuse each other.
 * <p>
 * Statuses are {@link io.xferd.ipc.TransferStatus} codes.
 * A server checks every WRITE, READ and NOTIFY against the target's registered regions and answers a refusal
 * without touching memory; the payload of a refused WRITE is read and dropped so the stream stays in step.
 * Each slice carries the whole request's range and the server checks that range, not just the slice's: a
 * request reaching past a registered region is refused in every slice, so none of its bytes land.
 * <p>
 * The server keeps the QPs it answered a CONNECT_QP with per requester (its rpc address): a CONNECT_QP from the
 * same requester at the same or a newer epoch replaces them (the previous ones go to ERR, then are destroyed);
 * one at an older epoch than the server saw from that requester is refused (REFUSE naming both epochs), and the
 * current QPs stay. Version 3 added the requester and its epoch to CONNECT_QP; version 4 the authenticated
 * handshake (initiator first, epochs and roles covered) and the frame tags; version 5 puts the HELLO's flags in T
 * (the labels keep the "xferd/4" of the version that introduced them).
 */
public final class PeerProtocol
{
    public static final int MAGIC = 0x52504658;
    public static final int VERSION = 5;
    public static final int HEADER_LENGTH = 8;
    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;
    /** Truncated HMAC-SHA256 at the end of every frame's fixed part after the handshake. */
    public static final int TAG_LENGTH = 16;
    public static final int MAX_CONTROL_BODY = 1 << 20;
    /** HELLO: magic, version, flags, reserved, nonce, epoch. Nothing longer is read before authentication. */
    public static final int HELLO_LENGTH = 16 + NONCE_LENGTH + 8;
    /** HELLO flags bit 0: the initiator runs without peer authentication. */
    public static final int FLAG_NO_PEER_AUTH = 1;
    /**
     * HELLO flags bit 1: the initiator finds the request each ACK answers by its slice id (ids are unique among its
     * requests in flight), so the responder may send an answer as soon as it is ready, before older ones (a file
     * READ done while an earlier one still waits for the device). A responder that ignores the bit (an older one)
     * answers in order, which such an initiator takes as well; without the bit, answers must come in order. Only
     * the order of ACKs is free: every other answer still follows all the ACKs queued before it.
     */
    public static final int FLAG_ANSWERS_BY_ID = 2;

    public static final int HELLO = 1;
    public static final int CHALLENGE = 2;
    public static final int PROOF = 3;
    public static final int ACCEPT = 4;
    public static final int REFUSE = 5;
    public static final int GET_SEGMENT = 10;
    public static final int DESCRIPTOR = 11;
    public static final int CONNECT_QP = 12;
    public static final int QP_ANSWER = 13;
    public static final int WRITE = 20;
    public static final int READ = 21;
    public static final int NOTIFY = 22;
    public static final int ACK = 30;

    /** WRITE, READ: slice id, handle, address, length, request address, request length (what the tag covers). */
    public static final int REQUEST_SIGNED_LENGTH = 48;
    /** WRITE, READ: the fixed fields and their tag. */
    public static final int REQUEST_FIELDS_LENGTH = REQUEST_SIGNED_LENGTH + TAG_LENGTH;
    /** ACK: slice id, status, reserved, length (what the tag covers). */
    public static final int ACK_SIGNED_LENGTH = 24;
    /** ACK: the fixed fields and their tag. */
    public static final int ACK_FIELDS_LENGTH = ACK_SIGNED_LENGTH + TAG_LENGTH;
    /** NOTIFY: slice id, handle, trace id, source length, message length. */
    public static final int NOTIFY_SIGNED_LENGTH = 32;
    /** NOTIFY: the fixed fields and their tag (the tag also covers source and message, which follow). */
    public static final int NOTIFY_FIELDS_LENGTH = NOTIFY_SIGNED_LENGTH + TAG_LENGTH;

    private PeerProtocol()
    {
    }
}
