package io.xferd.daemon;

import io.xferd.client.ClientContext;
import io.xferd.client.SharedBuffer;
import io.xferd.client.TaskStatus;
import io.xferd.client.TransferRequest;
import io.xferd.client.XferClient;
import io.xferd.ipc.Opcode;
import io.xferd.ipc.TransferStatus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A client process of the system tests, in one of three roles:
 * <ul>
 *   <li>{@code hold DIR NAME SIZE SEED}: registers SIZE bytes of the seed's data, prints
 *   {@code READY <segment> <address>}, then answers {@code VERIFY seed seedLength offset length} lines from stdin
 *   ({@code CHECKED ok} or {@code CHECKED mismatch at N}) until {@code EXIT} or end of input.</li>
 *   <li>{@code hold-file DIR NAME SIZE SEED FILE}: as {@code hold}, with SIZE bytes of the seed's data written to
 *   FILE and registered as a storage region ({@code registerFile}); VERIFY reads the file.</li>
 *   <li>{@code hold-files DIR NAME SIZE SEED GOOD BAD}: as {@code hold-file} with two files of SIZE bytes of the
 *   seed's data, GOOD registered sync ({@code REGISTER_FILE_SYNC}); prints {@code READY <segment> <good> <bad>};
 *   VERIFY reads GOOD.</li>
 *   <li>{@code mixed-file DIR NAME TARGET GOOD BAD SIZE SEED TARGET_SEED}: one batch on one peer connection: WRITEs
 *   the first half of its SIZE bytes of the seed's data into GOOD's first half (some pieces off the 4 KiB blocks),
 *   READs GOOD's second half, and READs and WRITEs BAD (truncated under its region by the test); then a second
 *   batch READs GOOD's first half back. Prints {@code TASK i status} for each request of the first batch; exit 0
 *   only when the BAD requests failed with {@code STORAGE_TRUNCATED}, every other request completed and every byte
 *   read matched.</li>
 *   <li>{@code push-pull DIR NAME TARGET TARGET_ADDRESS SIZE SEED TARGET_SEED CHUNK}: WRITEs the first half of its
 *   own SIZE bytes of the seed's data into the target's first half, READs the target's second half into its own,
 *   and checks that against the target's seed; exit 0 only when every byte matched.</li>
 *   <li>{@code flood DIR NAME TARGET TARGET_ADDRESS LENGTH REQUEST}: WRITEs REQUEST-byte pieces of its LENGTH
 *   bytes into the target in batches of 32, for ever (until killed); prints {@code FLOODING} once the first batch
 *   is submitted.</li>
 *   <li>{@code out-of-bounds DIR NAME TARGET TARGET_ADDRESS TARGET_SIZE}: asks for three ranges outside the
 *   target's TARGET_SIZE registered bytes (one byte past the end, one byte before the start, twice the size),
 *   prints {@code REFUSED <status>} for each, then WRITEs and READs back 4 KiB inside it; exit 0 only when all
 *   three failed with {@code TARGET_RANGE_NOT_REGISTERED} having moved no byte and the in-bounds round trip
 *   matched (the refusals left the connection usable).</li>
 *   <li>{@code rounds DIR NAME}: registers 64 KiB, prints {@code READY}, then for each {@code ROUND seed} line
 *   WRITEs 16 KiB of the seed's data into its own segment with one SUBMIT, READs it back elsewhere with a
 *   SUBMIT_BATCH of 4 entries, checks every byte and prints {@code ROUND seed ok} (or {@code ROUND seed FAILED
 *   why}), until {@code EXIT}: an honest client that proves, round after round, that it is still served.</li>
 * </ul>
 */
public final class ClientRoleMain
{
    private static final long TIMEOUT_MS = 30_000;

    private ClientRoleMain()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final Path directory = Path.of(args[1]);
        final String name = args[2];
        try (XferClient client = XferClient.connect(new ClientContext().directory(directory).segmentName(name)))
        {
            final int exitCode = switch (args[0])
            {
                case "hold" -> hold(client, Integer.parseInt(args[3]), Long.parseLong(args[4]));
                case "hold-file" -> holdFile(client, Integer.parseInt(args[3]), Long.parseLong(args[4]),
                    Path.of(args[5]));
                case "hold-files" -> holdFiles(client, Integer.parseInt(args[3]), Long.parseLong(args[4]),
                    Path.of(args[5]), Path.of(args[6]));
                case "mixed-file" -> mixedFile(client, args[3], Long.parseLong(args[4]), Long.parseLong(args[5]),
                    Integer.parseInt(args[6]), Long.parseLong(args[7]), Long.parseLong(args[8]));
                case "push-pull" -> pushPull(client, args[3], Long.parseLong(args[4]), Integer.parseInt(args[5]),
                    Long.parseLong(args[6]), Long.parseLong(args[7]), Integer.parseInt(args[8]));
                case "out-of-bounds" -> outOfBounds(client, args[3], Long.parseLong(args[4]),
                    Integer.parseInt(args[5]));
                case "rounds" -> rounds(client);
                case "flood-file" -> floodFile(client, Path.of(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
                case "flood" -> flood(client, args[3], Long.parseLong(args[4]), Integer.parseInt(args[5]),
                    Integer.parseInt(args[6]));
                default -> throw new IllegalArgumentException("unknown role " + args[0]);
            };
            System.out.flush();
            System.exit(exitCode);
        }
    }

    private static int rounds(final XferClient client) throws IOException
    {
        final int block = 16 * 1024;
        final SharedBuffer buffer = client.allocateMemory(4 * block);
        client.registerMemory(buffer, "cpu:0");
        final io.xferd.client.TransferBatch readBack = new io.xferd.client.TransferBatch(4);
        final TransferRequest write = new TransferRequest();
        System.out.println("READY " + client.segmentName());
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("EXIT"))
        {
            final long seed = Long.parseLong(line.split(" ")[1]);
            String failure = null;
            try
            {
                SystemTests.fill(buffer.segment().asSlice(0, block), seed);
                buffer.segment().asSlice(2 * block, block).fill((byte)0);
                final long batch = client.allocateBatch(2);
                client.submitTransfer(batch, write.set(Opcode.WRITE, buffer.address(), client.ownSegment(),
                    buffer.address() + block, block));
                if (!client.awaitBatch(batch, TIMEOUT_MS))
                {
                    failure = "WRITE " + TransferStatus.name(client.getTransferStatus(batch, 0).status());
                }
                else
                {
                    readBack.reset(Opcode.READ, client.ownSegment());
                    for (int i = 0; i < 4; i++)
                    {
                        readBack.add(buffer.address() + 2 * block + i * (block / 4L),
                            buffer.address() + block + i * (block / 4L), block / 4);
                    }
                    final int task = client.submitBatch(batch, readBack);
                    if (!client.awaitBatch(batch, TIMEOUT_MS))
                    {
                        failure = "batch READ " + TransferStatus.name(client.getTransferStatus(batch, task).status());
                    }
                }
                client.freeBatch(batch);
                final long mismatch = failure != null ? -1 : SystemTests.firstMismatch(buffer.segment(), 2 * block,
                    SystemTests.randomBytes(seed, block), 0, block);
                if (failure == null && mismatch >= 0)
                {
                    failure = "byte " + mismatch + " differs";
                }
            }
            catch (final RuntimeException ex)
            {
                failure = ex.toString();
            }
            System.out.println("ROUND " + seed + (failure == null ? " ok" : " FAILED " + failure));
            System.out.flush();
        }
        return 0;
    }

    private static int hold(final XferClient client, final int size, final long seed) throws IOException
    {
        final SharedBuffer buffer = client.allocateMemory(size);
        SystemTests.fill(buffer.segment(), seed);
        client.registerMemory(buffer, "cpu:0");
        System.out.println("READY " + client.segmentName() + " " + buffer.address());
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("EXIT"))
        {
            final String[] words = line.split(" ");
            if (words[0].equals("VERIFY"))
            {
                final byte[] expected = SystemTests.randomBytes(Long.parseLong(words[1]), Integer.parseInt(words[2]));
                final long offset = Long.parseLong(words[3]);
                final long mismatch = SystemTests.firstMismatch(buffer.segment(), offset, expected, offset,
                    Long.parseLong(words[4]));
                System.out.println(mismatch < 0 ? "CHECKED ok" : "CHECKED mismatch at " + (offset + mismatch));
                System.out.flush();
            }
        }
        return 0;
    }

    private static int holdFile(final XferClient client, final int size, final long seed, final Path file)
        throws IOException
    {
        java.nio.file.Files.write(file, SystemTests.randomBytes(seed, size));
        final long address = client.registerFile(file, 0, size, 0);
        System.out.println("READY " + client.segmentName() + " " + address);
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("EXIT"))
        {
            final String[] words = line.split(" ");
            if (words[0].equals("VERIFY"))
            {
                final byte[] expected = SystemTests.randomBytes(Long.parseLong(words[1]), Integer.parseInt(words[2]));
                final int offset = Integer.parseInt(words[3]);
                final int length = Integer.parseInt(words[4]);
                final byte[] actual = java.nio.file.Files.readAllBytes(file);
                final int mismatch = java.util.Arrays.mismatch(
                    java.util.Arrays.copyOfRange(actual, offset, offset + length),
                    java.util.Arrays.copyOfRange(expected, offset, offset + length));
                System.out.println(mismatch < 0 ? "CHECKED ok" : "CHECKED mismatch at " + (offset + mismatch));
                System.out.flush();
            }
        }
        return 0;
    }

    private static int holdFiles(
        final XferClient client, final int size, final long seed, final Path good, final Path bad) throws IOException
    {
        final byte[] data = SystemTests.randomBytes(seed, size);
        java.nio.file.Files.write(good, data);
        java.nio.file.Files.write(bad, data);
        final long goodAddress = client.registerFile(good, 0, size, io.xferd.ipc.ControlMessages.REGISTER_FILE_SYNC);
        final long badAddress = client.registerFile(bad, 0, size, 0);
        System.out.println("READY " + client.segmentName() + " " + goodAddress + " " + badAddress);
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("EXIT"))
        {
            final String[] words = line.split(" ");
            if (words[0].equals("VERIFY"))
            {
                final byte[] expected = SystemTests.randomBytes(Long.parseLong(words[1]), Integer.parseInt(words[2]));
                final int offset = Integer.parseInt(words[3]);
                final int length = Integer.parseInt(words[4]);
                final byte[] actual = java.nio.file.Files.readAllBytes(good);
                final int mismatch = java.util.Arrays.mismatch(
                    java.util.Arrays.copyOfRange(actual, offset, offset + length),
                    java.util.Arrays.copyOfRange(expected, offset, offset + length));
                System.out.println(mismatch < 0 ? "CHECKED ok" : "CHECKED mismatch at " + (offset + mismatch));
                System.out.flush();
            }
        }
        return 0;
    }

    private static int mixedFile(final XferClient client, final String target, final long good, final long bad,
        final int size, final long seed, final long targetSeed)
    {
        final int mib = 1 << 20;
        // the seed's data, then where GOOD's second half is read, then where the failed READ of BAD lands (nothing)
        final SharedBuffer buffer = client.allocateMemory(size + mib);
        SystemTests.fill(buffer.segment().asSlice(0, size), seed);
        final int half = size / 2;
        buffer.segment().asSlice(half).fill((byte)0);
        client.registerMemory(buffer, "cpu:0");
        final long segment = client.openSegment(target);
        final long batch = client.allocateBatch(32);
        final java.util.List<Integer> expected = new java.util.ArrayList<>();
        final TransferRequest request = new TransferRequest();
        // the first half into GOOD, whole blocks (the storage stage) and, at the end, pieces off the blocks
        final int aligned = half - mib;
        for (int offset = 0; offset < aligned; offset += mib)
        {
            client.submitTransfer(batch, request.set(Opcode.WRITE, buffer.address() + offset, segment,
                good + offset, Math.min(mib, aligned - offset)));
            expected.add(TransferStatus.OK);
        }
        client.submitTransfer(batch, request.set(Opcode.WRITE, buffer.address() + aligned, segment,
            good + aligned, 1000));
        expected.add(TransferStatus.OK);
        client.submitTransfer(batch, request.set(Opcode.WRITE, buffer.address() + aligned + 1000, segment,
            good + aligned + 1000, mib - 1000));
        expected.add(TransferStatus.OK);
        // BAD is shorter than its region now: a READ and a WRITE of it fail typed, in the middle of the others
        client.submitTransfer(batch, request.set(Opcode.READ, buffer.address() + size, segment, bad, mib));
        expected.add(TransferStatus.STORAGE_TRUNCATED);
        client.submitTransfer(batch, request.set(Opcode.WRITE, buffer.address(), segment, bad + mib, 256 * 1024));
        expected.add(TransferStatus.STORAGE_TRUNCATED);
        // GOOD's second half into the second half of memory
        for (int offset = half; offset < size; offset += mib)
        {
            client.submitTransfer(batch, request.set(Opcode.READ, buffer.address() + offset, segment,
                good + offset, Math.min(mib, size - offset)));
            expected.add(TransferStatus.OK);
        }
        client.awaitBatch(batch, TIMEOUT_MS);
        boolean asExpected = true;
        for (int task = 0; task < expected.size(); task++)
        {
            final TaskStatus status = client.getTransferStatus(batch, task);
            System.out.println("TASK " + task + " " + status);
            asExpected &= status.status() == expected.get(task);
        }
        client.freeBatch(batch);
        final long readMismatch = SystemTests.firstMismatch(buffer.segment(), half,
            SystemTests.randomBytes(targetSeed, size), half, size - half);
        // the daemon still serves this connection: GOOD's first half back, over what was read into memory
        buffer.segment().asSlice(half, half).fill((byte)0);
        final boolean readBack = transferHalf(client, Opcode.READ, segment, buffer.address() + half, good, half,
            mib) > 0;
        final long backMismatch = SystemTests.firstMismatch(buffer.segment(), half,
            SystemTests.randomBytes(seed, size), 0, half);
        final boolean ok = asExpected && readMismatch < 0 && readBack && backMismatch < 0;
        System.out.println(ok ? "MIXED-VERIFIED" : "UNEXPECTED statuses=" + asExpected + " read mismatch at " +
            readMismatch + " read back=" + readBack + " mismatch at " + backMismatch);
        return ok ? 0 : 1;
    }

    private static int pushPull(final XferClient client, final String target, final long targetAddress,
        final int size, final long seed, final long targetSeed, final int chunk)
    {
        final SharedBuffer buffer = client.allocateMemory(size);
        SystemTests.fill(buffer.segment(), seed);
        final int half = size / 2;
        buffer.segment().asSlice(half).fill((byte)0);
        client.registerMemory(buffer, "cpu:0");
        final long segment = client.openSegment(target);

        final int pushed = transferHalf(client, Opcode.WRITE, segment, buffer.address(), targetAddress, half, chunk);
        System.out.println("PUSHED " + pushed + " requests");
        final int pulled = transferHalf(client, Opcode.READ, segment, buffer.address() + half,
            targetAddress + half, size - half, chunk);
        System.out.println("PULLED " + pulled + " requests");

        final byte[] expected = SystemTests.randomBytes(targetSeed, size);
        final long mismatch = SystemTests.firstMismatch(buffer.segment(), half, expected, half, size - half);
        System.out.println(mismatch < 0 ? "VERIFIED" : "MISMATCH at " + (half + mismatch));
        return mismatch < 0 && pushed > 0 && pulled > 0 ? 0 : 1;
    }

    /**
     * @return requests that completed, or -1 when one failed.
     */
    private static int transferHalf(final XferClient client, final int opcode, final long segment,
        final long localAddress, final long targetAddress, final int length, final int chunk)
    {
        final TransferRequest request = new TransferRequest();
        final int batchSize = 16;
        int done = 0;
        for (int offset = 0; offset < length; )
        {
            final long batch = client.allocateBatch(batchSize);
            int tasks = 0;
            for (; tasks < batchSize && offset < length; tasks++)
            {
                final int n = Math.min(chunk, length - offset);
                client.submitTransfer(batch, request.set(opcode, localAddress + offset, segment,
                    targetAddress + offset, n));
                offset += n;
            }
            if (!client.awaitBatch(batch, TIMEOUT_MS))
            {
                for (int task = 0; task < tasks; task++)
                {
                    System.out.println("FAILED task " + task + ": " + client.getTransferStatus(batch, task));
                }
                return -1;
            }
            client.freeBatch(batch);
            done += tasks;
        }
        return done;
    }

    private static int outOfBounds(final XferClient client, final String target, final long targetAddress,
        final int targetSize)
    {
        final SharedBuffer buffer = client.allocateMemory(2L * targetSize);
        SystemTests.fill(buffer.segment(), 77);
        client.registerMemory(buffer, "cpu:0");
        final long segment = client.openSegment(target);
        final long batch = client.allocateBatch(3);
        client.submitTransfer(batch, TransferRequest.write(buffer.address(), segment, targetAddress + 1, targetSize));
        client.submitTransfer(batch, TransferRequest.read(buffer.address(), segment, targetAddress - 1, 4096));
        client.submitTransfer(batch, TransferRequest.write(buffer.address(), segment, targetAddress, 2L * targetSize));
        client.awaitBatch(batch, TIMEOUT_MS);
        boolean refused = true;
        for (int task = 0; task < 3; task++)
        {
            final TaskStatus status = client.getTransferStatus(batch, task);
            System.out.println("REFUSED " + status);
            refused &= status.state() == TaskStatus.FAILED &&
                status.status() == TransferStatus.TARGET_RANGE_NOT_REGISTERED && status.transferredBytes() == 0;
        }
        client.freeBatch(batch);

        final int length = 4096;
        final boolean wrote = transferHalf(client, Opcode.WRITE, segment, buffer.address(), targetAddress, length,
            length) == 1;
        final boolean read = transferHalf(client, Opcode.READ, segment, buffer.address() + length, targetAddress,
            length, length) == 1;
        final boolean same = buffer.segment().asSlice(0, length).mismatch(buffer.segment().asSlice(length, length)) < 0;
        System.out.println(refused && wrote && read && same ? "REFUSED-ALL-AND-SERVED" :
            "UNEXPECTED refused=" + refused + " wrote=" + wrote + " read=" + read + " same=" + same);
        return refused && wrote && read && same ? 0 : 1;
    }

    private static int flood(final XferClient client, final String target, final long targetAddress,
        final int length, final int requestLength)
    {
        final SharedBuffer buffer = client.allocateMemory(length);
        buffer.segment().fill((byte)0x5A);
        client.registerMemory(buffer, "cpu:0");
        final long segment = client.openSegment(target);
        final TransferRequest request = new TransferRequest();
        final int pieces = length / requestLength;
        final int batchSize = 32;
        boolean announced = false;
        for (long round = 0; ; round++)
        {
            final long batch = client.allocateBatch(batchSize);
            for (int task = 0; task < batchSize; task++)
            {
                final long offset = (round * batchSize + task) % pieces * requestLength;
                client.submitTransfer(batch, request.set(Opcode.WRITE, buffer.address() + offset, segment,
                    targetAddress + offset, requestLength));
                if (!announced)
                {
                    System.out.println("FLOODING");
                    System.out.flush();
                    announced = true;
                }
            }
            client.awaitBatch(batch, TIMEOUT_MS);
            for (int task = 0; task < batchSize; task++)
            {
                final TaskStatus status = client.getTransferStatus(batch, task);
                if (status.status() != TransferStatus.OK)
                {
                    System.out.println("FAILED " + status);
                    return 1;
                }
            }
            client.freeBatch(batch);
        }
    }

    /**
     * Registers {@code file} (which must be {@code length} bytes long) and memory of the same size, then moves 1 MiB
     * pieces between them, READs (the kernel writes into this process's memory) and WRITEs in turn, in batches of
     * 32 in flight, until killed.
     */
    private static int floodFile(final XferClient client, final Path file, final int length, final int requestLength)
        throws IOException
    {
        final SharedBuffer buffer = client.allocateMemory(length);
        buffer.segment().fill((byte)0x3C);
        client.registerMemory(buffer, "cpu:0");
        final long fileAddress = client.registerFile(file, 0, length, 0);
        final long segment = client.ownSegment();
        final TransferRequest request = new TransferRequest();
        final int pieces = length / requestLength;
        final int batchSize = 32;
        boolean announced = false;
        for (long round = 0; ; round++)
        {
            final long batch = client.allocateBatch(batchSize);
            for (int task = 0; task < batchSize; task++)
            {
                final long offset = (round * batchSize + task) % pieces * requestLength;
                client.submitTransfer(batch, request.set(task % 2 == 0 ? Opcode.READ : Opcode.WRITE,
                    buffer.address() + offset, segment, fileAddress + offset, requestLength));
            }
            if (!announced)
            {
                System.out.println("FLOODING");
                System.out.flush();
                announced = true;
            }
            client.awaitBatch(batch, TIMEOUT_MS);
            for (int task = 0; task < batchSize; task++)
            {
                final TaskStatus status = client.getTransferStatus(batch, task);
                if (status.status() != TransferStatus.OK)
                {
                    System.out.println("FAILED " + status);
                    return 1;
                }
            }
            client.freeBatch(batch);
        }
    }
}
