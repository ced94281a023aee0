package io.xferd.daemon;

import io.xferd.client.SharedBuffer;
import io.xferd.client.XferClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.UnixUsers.asUser;
import static io.xferd.daemon.UnixUsers.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The local access policy with a real second Unix user (made and removed here): a Python client running as that
 * user reaches the daemon (through the group an operator would give it) but cannot open a root client's segment,
 * nor write into it by its handle, unless the daemon's {@code allowed_uids} grants it, or {@code segment_grants}
 * grants it that one segment (and no other); then its bytes arrive.
 * Outside the daemon's group, the same user reaches neither the socket nor any file of the daemon.
 */
@Tag("integration")
@Timeout(180)
class LocalAccessPolicyTest
{
    private static final int SIZE = 4096;
    private static final String INTRUDER = """
        import sys
        import xferd
        from xferd.errors import AccessDeniedControlError, AccessDeniedError
        directory, victim, handle, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        with xferd.connect(directory, "intruder") as client:
            try:
                client.open_segment(victim)
                print("OPENED", flush=True)
            except AccessDeniedControlError as ex:
                print("OPEN_DENIED", ex, flush=True)
            buffer = client.allocate_memory(4096)
            buffer.write(0, b"\\x5a" * 4096)
            client.register_memory(buffer.address, 4096)
            try:
                client.transfer_sync(xferd.WRITE, handle, buffer.address, target, 4096, timeout_s=30)
                print("WRITTEN", flush=True)
            except AccessDeniedError as ex:
                print("WRITE_DENIED", ex, flush=True)
        """;

    private static final String PROBE = """
        import os, socket, sys
        directory = sys.argv[1]
        def probe(name, action):
            try:
                action(os.path.join(directory, name))
                print(name, "ALLOWED", flush=True)
            except PermissionError:
                print(name, "DENIED", flush=True)
        probe("xferd.sock", lambda path: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(path))
        probe("cnc.dat", lambda path: open(path, "rb").read(1))
        probe("registry.dat", lambda path: open(path, "rb").read(1))
        probe("journal", os.listdir)
        """;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private String user;
    private int uid;
    private int gid;
    private Path pythonDir;
    private Path directory;

    @BeforeEach
    void createUser() throws Exception
    {
        final boolean root = "0".equals(run(List.of("id", "-u")).trim());
        if (System.getenv("CI") != null)
        {
            assertThat(root).as("CI must run as root: this test creates a Unix user").isTrue();
        }
        assumeTrue(root, "needs root to create a second Unix user");
        user = "xfp" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
        run(List.of("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user));
        uid = Integer.parseInt(run(List.of("id", "-u", user)).trim());
        gid = Integer.parseInt(run(List.of("id", "-g", user)).trim());
        pythonDir = Files.createTempDirectory(Path.of("/tmp"), "xfpy");
        run(List.of("cp", "-r", Path.of("..", "python", "xferd").toAbsolutePath().toString(), pythonDir.toString()));
        Files.writeString(pythonDir.resolve("intruder.py"), INTRUDER);
        run(List.of("chmod", "-R", "a+rX", pythonDir.toString()));
    }

    @AfterEach
    void removeUser() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
        if (directory != null)
        {
            SystemTests.deleteRecursively(directory);
        }
        if (pythonDir != null)
        {
            run(List.of("rm", "-rf", pythonDir.toString()));
        }
        if (user != null)
        {
            run(List.of("userdel", user));
        }
    }

    @Test
    void shouldRefuseAnotherUidTheSegmentAtOpenAndOnEveryRequest() throws Exception
    {
        startDaemon(new int[0], true);
        final XferClient victim = track(XferClient.connect(SystemTests.clientContext(directory, "victim")));
        final SharedBuffer secret = victim.allocateMemory(SIZE);
        secret.segment().fill((byte)0x11);
        victim.registerMemory(secret, "cpu:0");

        final String output = runIntruder(victim, secret);

        assertThat(output).contains("OPEN_DENIED ACCESS_DENIED", "WRITE_DENIED ACCESS_DENIED")
            .doesNotContain("OPENED", "WRITTEN");
        assertThat(secret.segment().get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte)0x11);
        assertThat(secret.segment().get(ValueLayout.JAVA_BYTE, SIZE - 1)).isEqualTo((byte)0x11);
        assertThat(victim.openSegment("victim")).as("the daemon keeps serving").isEqualTo(victim.ownSegment());
    }

    @Test
    void shouldLetAGrantedUidOpenAndWrite() throws Exception
    {
        startDaemon(new int[]{uid}, true);
        final XferClient victim = track(XferClient.connect(SystemTests.clientContext(directory, "victim")));
        final SharedBuffer shared = victim.allocateMemory(SIZE);
        shared.segment().fill((byte)0x11);
        victim.registerMemory(shared, "cpu:0");

        final String output = runIntruder(victim, shared);

        assertThat(output).contains("OPENED", "WRITTEN").doesNotContain("DENIED");
        for (int i = 0; i < SIZE; i++)
        {
            assertThat(shared.segment().get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)0x5a);
        }
    }

    @Test
    void shouldLetAUidGrantedOneSegmentReachThatSegmentAndNoOther() throws Exception
    {
        directory = SystemTests.newDaemonDirectory();
        track(XferDaemon.launch(SystemTests.daemonContext(directory)
            .segmentGrant("victim", new int[]{uid}, new int[0])));
        shareDaemonGroup();
        final XferClient victim = track(XferClient.connect(SystemTests.clientContext(directory, "victim")));
        final SharedBuffer shared = victim.allocateMemory(SIZE);
        shared.segment().fill((byte)0x11);
        victim.registerMemory(shared, "cpu:0");
        final XferClient other = track(XferClient.connect(SystemTests.clientContext(directory, "other")));
        final SharedBuffer secret = other.allocateMemory(SIZE);
        secret.segment().fill((byte)0x22);
        other.registerMemory(secret, "cpu:0");

        final String granted = runAsUser("intruder.py", directory.toString(), "victim",
            Long.toString(victim.ownSegment()), Long.toString(shared.address()));
        final String refused = runAsUser("intruder.py", directory.toString(), "other",
            Long.toString(other.ownSegment()), Long.toString(secret.address()));

        assertThat(granted).contains("OPENED", "WRITTEN").doesNotContain("DENIED");
        for (int i = 0; i < SIZE; i++)
        {
            assertThat(shared.segment().get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)0x5a);
        }
        assertThat(refused).contains("OPEN_DENIED ACCESS_DENIED", "WRITE_DENIED ACCESS_DENIED")
            .doesNotContain("OPENED", "WRITTEN");
        for (int i = 0; i < SIZE; i++)
        {
            assertThat(secret.segment().get(ValueLayout.JAVA_BYTE, i)).as("byte %d", i).isEqualTo((byte)0x22);
        }
    }

    @Test
    void shouldKeepAUserOutsideTheDaemonGroupAwayFromTheSocketAndEveryFile() throws Exception
    {
        startDaemon(new int[0], false);
        Files.writeString(pythonDir.resolve("probe.py"), PROBE);

        final String output = runAsUser("probe.py", directory.toString());

        assertThat(output).contains("xferd.sock DENIED", "cnc.dat DENIED", "registry.dat DENIED", "journal DENIED")
            .doesNotContain("ALLOWED");
    }

    private void startDaemon(final int[] allowedUids, final boolean userInDaemonGroup) throws Exception
    {
        directory = SystemTests.newDaemonDirectory();
        track(XferDaemon.launch(SystemTests.daemonContext(directory).allowedUids(allowedUids)));
        if (userInDaemonGroup)
        {
            shareDaemonGroup();
        }
    }

    /**
     * What a daemon group gives: the group of the directory, socket and cnc.dat; the modes are the daemon's.
     */
    private void shareDaemonGroup() throws Exception
    {
        for (final String name : List.of(".", "xferd.sock", "cnc.dat"))
        {
            run(List.of("chgrp", Integer.toString(gid), directory.resolve(name).toString()));
        }
    }

    private String runIntruder(final XferClient victim, final SharedBuffer target) throws Exception
    {
        return runAsUser("intruder.py", directory.toString(), "victim", Long.toString(victim.ownSegment()),
            Long.toString(target.address()));
    }

    private String runAsUser(final String script, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("python3", pythonDir.resolve(script).toString()));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(asUser(user, command.toArray(String[]::new)))
            .redirectErrorStream(true)
            .directory(pythonDir.toFile())
            .start();
        final byte[] out;
        try
        {
            process.getOutputStream().close();
            out = process.getInputStream().readAllBytes();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
        finally
        {
            process.destroyForcibly();
        }
        final String output = new String(out, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        resources.add(resource);
        return resource;
    }
}
