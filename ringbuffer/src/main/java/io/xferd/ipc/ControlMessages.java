package io.xferd.ipc;

/**
 * Message types and body layouts of the control channel (see {@link ControlFrame} for the framing).
 * Offsets are relative to the body, which starts 8 bytes into the frame. A client sends one request and
 * waits for its answer; the daemon never sends a frame that was not asked for.
 *
 * <h2>Client to daemon</h2>
 * <pre>
 * HELLO (1)             0 int protocol version (2)   4 int pid   8 int flags ({@link #HELLO_FLAG_LISTEN})
 *                      12 int reserved (0)   16 string segment name
 * REGISTER_MEMORY (2)   0 long correlation id    8 long owner address   16 long length
 *                      24 long offset in the passed fd   32 string location ("cpu:0", "cuda:1")
 *                       + SCM_RIGHTS: the memfd (or file) that backs the range
 * UNREGISTER_MEMORY (3) 0 long correlation id    8 long owner address (start of a registered range)
 * OPEN_SEGMENT (4)      0 long correlation id    8 string segment name ("name" or "host:port/name")
 * REGISTER_GPU_MEMORY (5)
 *                       0 long correlation id    8 long owner device pointer   16 long length
 *                      24 long offset of the pointer in its IPC allocation (0: the pointer is the allocation's base)
 *                      32 64 bytes cudaIpcMemHandle_t of the allocation
 *                      96 16 bytes PCI bus id of the device, ASCII, NUL padded ("0000:1b:00.0"; all NUL: none)
 *                     112 string location ("cuda:0"); nothing after it
 * </pre>
 * REGISTER_PROCESS_MEMORY (6)
 *                       0 long correlation id    8 long owner address   16 long length
 *                      24 string location ("cpu:N" or "*"); no fd: the daemon reaches the range with
 *                         process_vm_readv/writev on the pid SO_PEERCRED names
 * REGISTER_FILE (8)     0 long correlation id    8 long owner address (the name requests use; files live at
 *                         addresses no memory has, see {@link FileRegistration})   16 long length
 *                      24 long offset in the file   32 int flags ({@link #REGISTER_FILE_SYNC},
 *                         {@link #REGISTER_FILE_BUFFERED})   36 int reserved (0); nothing after it
 *                       + SCM_RIGHTS: the open file or block device (O_RDWR, or O_RDONLY for READ only)
 * </pre>
 * FIRST_BUFFER (7)      0 long correlation id    8 long segment handle (WELCOME's own, or one from OPEN_SEGMENT);
 *                       answered OK with the owner address of the first buffer the segment's descriptor lists (its
 *                       lowest-addressed registered range), 0 when it has none (Mooncake's get_first_buffer_address)
 * UNREGISTER_MEMORY releases a GPU range as it does a host range. See {@link GpuMemoryRegistration} and
 * {@link ProcessMemoryRegistration}.
 * <pre>
 *
 * <h2>Daemon to client</h2>
 * <pre>
 * WELCOME (101)   0 int client slot   4 int max completions in flight   8 long reserved (0)
 *                16 long own segment handle   24 int completion ring length C (with trailer)
 *                28 int max notify length     32 long max request length
 *                40 int submit ring length S (with trailer)   44 int max batch entries   48 int segment RPC port
 *                   (0 unless HELLO asked LISTEN)   52 int transport served ({@link #TRANSPORT_TCP},
 *                   {@link #TRANSPORT_RDMA}, plus {@link #TRANSPORT_FALLBACK} for TCP served instead of RDMA)
 *                56 string full segment name
 *                 + SCM_RIGHTS: the rings file: completion ring at offset 0, submit ring at offset C
 * OK (102)        0 long correlation id   8 long value (segment handle for OPEN_SEGMENT, an address for
 *                   FIRST_BUFFER, else 0)
 * ERROR (103)     0 long correlation id   8 int error code ({@link ControlError})   12 string message
 * </pre>
 */
public final class ControlMessages
{
    public static final int PROTOCOL_VERSION = 2;

    public static final int HELLO = 1;
    public static final int REGISTER_MEMORY = 2;
    public static final int UNREGISTER_MEMORY = 3;
    public static final int OPEN_SEGMENT = 4;
    public static final int REGISTER_GPU_MEMORY = 5;
    public static final int REGISTER_PROCESS_MEMORY = 6;
    public static final int FIRST_BUFFER = 7;
    public static final int REGISTER_FILE = 8;

    public static final int WELCOME = 101;
    public static final int OK = 102;
    public static final int ERROR = 103;

    public static final int HELLO_VERSION = 0;
    public static final int HELLO_PID = 4;
    public static final int HELLO_FLAGS = 8;
    public static final int HELLO_NAME = 16;
    /** HELLO flag: give this segment its own RPC port for the connection's life (WELCOME says which). */
    public static final int HELLO_FLAG_LISTEN = 1;
    /** Every flag this protocol version defines; a HELLO with another bit set is refused. */
    public static final int HELLO_KNOWN_FLAGS = HELLO_FLAG_LISTEN;

    public static final int CORRELATION_ID = 0;

    public static final int REGISTER_ADDRESS = 8;
    public static final int REGISTER_LENGTH = 16;
    public static final int REGISTER_FD_OFFSET = 24;
    public static final int REGISTER_LOCATION = 32;

    public static final int UNREGISTER_ADDRESS = 8;

    public static final int OPEN_SEGMENT_NAME = 8;

    public static final int REGISTER_GPU_POINTER = 8;
    public static final int REGISTER_GPU_LENGTH = 16;
    public static final int REGISTER_GPU_ALLOCATION_OFFSET = 24;
    public static final int REGISTER_GPU_IPC_HANDLE = 32;
    public static final int REGISTER_GPU_IPC_HANDLE_LENGTH = 64;
    public static final int REGISTER_GPU_PCI_BUS_ID = 96;
    public static final int REGISTER_GPU_PCI_BUS_ID_LENGTH = 16;
    public static final int REGISTER_GPU_LOCATION = 112;

    public static final int REGISTER_PROCESS_ADDRESS = 8;
    public static final int REGISTER_PROCESS_LENGTH = 16;
    public static final int REGISTER_PROCESS_LOCATION = 24;

    public static final int FIRST_BUFFER_SEGMENT = 8;
    public static final int REGISTER_FILE_ADDRESS = 8;
    public static final int REGISTER_FILE_LENGTH = 16;
    public static final int REGISTER_FILE_OFFSET = 24;
    public static final int REGISTER_FILE_FLAGS = 32;
    public static final int REGISTER_FILE_RESERVED = 36;
    public static final int REGISTER_FILE_BODY_LENGTH = 40;
    /** REGISTER_FILE flag: every WRITE to the region ends with an fdatasync before it completes. */
    public static final int REGISTER_FILE_SYNC = 1;
    /** REGISTER_FILE flag: use the page cache even where O_DIRECT would work. */
    public static final int REGISTER_FILE_BUFFERED = 2;
    public static final int REGISTER_FILE_KNOWN_FLAGS = REGISTER_FILE_SYNC | REGISTER_FILE_BUFFERED;

    public static final int WELCOME_CLIENT_SLOT = 0;
    public static final int WELCOME_MAX_IN_FLIGHT = 4;
    public static final int WELCOME_RESERVED = 8;
    public static final int WELCOME_SEGMENT_HANDLE = 16;
    public static final int WELCOME_COMPLETION_RING_LENGTH = 24;
    public static final int WELCOME_MAX_NOTIFY_LENGTH = 28;
    public static final int WELCOME_MAX_REQUEST_LENGTH = 32;
    public static final int WELCOME_SUBMIT_RING_LENGTH = 40;
    public static final int WELCOME_MAX_BATCH_ENTRIES = 44;
    public static final int WELCOME_SEGMENT_RPC_PORT = 48;
    public static final int WELCOME_TRANSPORT = 52;
    /** WELCOME transport: peers are reached over TCP. */
    public static final int TRANSPORT_TCP = 1;
    /** WELCOME transport: peers are reached over RDMA. */
    public static final int TRANSPORT_RDMA = 2;
    /** WELCOME transport flag: TCP is served because RDMA was asked for and {@code protocol_fallback} allowed TCP. */
    public static final int TRANSPORT_FALLBACK = 0x100;
    public static final int WELCOME_SEGMENT_NAME = 56;

    public static final int OK_VALUE = 8;

    public static final int ERROR_CODE = 8;
    public static final int ERROR_MESSAGE = 12;

    private ControlMessages()
    {
    }
}
