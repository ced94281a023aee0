package io.xferd.daemon.peer;

/**
 * The daemon-to-daemon protocol on the RPC port (TCP). Every frame is an 8-byte header, int32 body length and
 * int32 type (little-endian), then the body. A connection begins with the handshake; after it, the requester
 * sends requests and the server answers each in order.
 * <pre>
 * HELLO (1)        C->S  int32 magic 'XFPR', int32 version, 16 bytes client nonce
 * CHALLENGE (2)    S->C  16 bytes server nonce, int64 epoch, int32 token required (0/1), 32 bytes server proof
 * PROOF (3)        C->S  32 bytes client proof (zeros without a token)
 * ACCEPT (4)       S->C  int64 epoch
 * REFUSE (5)       S->C  UTF-8 reason; the server closes
 *
 * GET_SEGMENT (10)  C->S  UTF-8 segment name (without host:port); on a segment's own port (a Mooncake session,
 *                         see SegmentListeners) any name, answered with that port's segment
 * DESCRIPTOR (11)   S->C  int32 status, then the descriptor JSON (status 0) or a UTF-8 reason
 * CONNECT_QP (12)   C->S  u8 length + the requester's rpc address (UTF-8 host:port), int64 the requester's
 *                         epoch (&gt; 0), then its RDMA QP endpoints (see io.xferd.daemon.rdma.QpExchangeCodec)
 * QP_ANSWER (13)    S->C  the server's endpoints, one per requested one; or REFUSE with a UTF-8 reason, after
 *                         which the connection stays usable
 *
 * WRITE (20)      C->S  int64 slice id, int64 segment handle, int64 address, int64 length,
 *                       int64 request address, int64 request length, then length bytes
 * READ (21)       C->S  int64 slice id, int64 segment handle, int64 address, int64 length,
 *                       int64 request address, int64 request length
 * NOTIFY (22)     C->S  int64 slice id, int64 segment handle, int64 trace id, int32 source length,
 *                       int32 message length, source name, message
 * ACK (30)        S->C  int64 slice id, int32 status, int32 reserved, int64 length,
 *                       then length bytes when it answers a READ with status 0
 * </pre>
 * Proofs are HMAC-SHA256 of the cluster token over "server"|client nonce|server nonce (server's) and
 * "client"|server nonce|client nonce (client's). Statuses are {@link io.xferd.ipc.TransferStatus} codes.
 * A server checks every WRITE, READ and NOTIFY against the target's registered regions and answers a refusal
 * without touching memory; the payload of a refused WRITE is read and dropped so the stream stays in step.
 * Each slice carries the whole request's range and the server checks that range, not just the slice's: a
 * request reaching past a registered region is refused in every slice, so none of its bytes land.
 * <p>
 * The server keeps the QPs it answered a CONNECT_QP with per requester (its rpc address): a CONNECT_QP from the
 * same requester at the same or a newer epoch replaces them (the previous ones go to ERR, then are destroyed);
 * one at an older epoch than the server saw from that requester is refused (REFUSE naming both epochs), and the
 * current QPs stay. Version 3 added the requester and its epoch to CONNECT_QP.
 */
public final class PeerProtocol
{
    public static final int MAGIC = 0x52504658;
    public static final int VERSION = 3;
    public static final int HEADER_LENGTH = 8;
    public static final int NONCE_LENGTH = 16;
    public static final int PROOF_LENGTH = 32;
    public static final int MAX_CONTROL_BODY = 1 << 20;

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

    /** WRITE, READ: slice id, handle, address, length, request address, request length. */
    public static final int REQUEST_FIELDS_LENGTH = 48;
    /** ACK: slice id, status, reserved, length. */
    public static final int ACK_FIELDS_LENGTH = 24;

    private PeerProtocol()
    {
    }
}
