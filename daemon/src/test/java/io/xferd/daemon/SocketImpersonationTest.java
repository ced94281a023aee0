package io.xferd.daemon;

import io.xferd.client.XferClient;
import io.xferd.client.XferException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static io.xferd.daemon.UnixUsers.asUser;
import static io.xferd.daemon.UnixUsers.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Another Unix user (made and removed here) who can write the daemon directory puts its own listener on
 * {@code xferd.sock}: the Java and the Python client refuse it, naming both uids, and the listener receives nothing.
 */
@Tag("integration")
@Timeout(120)
class SocketImpersonationTest
{
    private static final String LISTENER = """
        import os, socket, sys
        path = sys.argv[1]
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(8)
        print("LISTENING", flush=True)
        received = 0
        for _ in range(2):
            connection, _ = server.accept()
            connection.settimeout(5)
            try:
                while True:
                    data = connection.recv(4096)
                    if not data:
                        break
                    received += len(data)
            except socket.timeout:
                pass
            connection.close()
        print("RECEIVED", received, flush=True)
        """;

    private String user;
    private Path directory;
    private Path scratch;
    private Process listener;

    @BeforeEach
    void createUser() throws Exception
    {
        final boolean root = "0".equals(run(List.of("id", "-u")).trim());
        if (System.getenv("CI") != null)
        {
            assertThat(root).as("CI must run as root: this test creates a Unix user").isTrue();
        }
        assumeTrue(root, "needs root to create a second Unix user");
        user = "xfs" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
        run(List.of("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user));
        directory = SystemTests.newDaemonDirectory();
        // the packaging mistake the issue found: a directory others may write, without the sticky bit
        Files.setAttribute(directory, "unix:mode", 0777);
        scratch = Files.createTempDirectory(Path.of("/tmp"), "xfsp");
        run(List.of("cp", "-r", Path.of("..", "python", "xferd").toAbsolutePath().toString(), scratch.toString()));
        Files.writeString(scratch.resolve("listener.py"), LISTENER);
        run(List.of("chmod", "-R", "a+rX", scratch.toString()));
    }

    @AfterEach
    void removeUser() throws Exception
    {
        if (listener != null)
        {
            listener.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        if (directory != null)
        {
            SystemTests.deleteRecursively(directory);
        }
        if (scratch != null)
        {
            run(List.of("rm", "-rf", scratch.toString()));
        }
        if (user != null)
        {
            run(List.of("userdel", user));
        }
    }

    @Test
    void shouldRefuseAListenerOfAnotherUidAndSendItNothing() throws Exception
    {
        listener = new ProcessBuilder(asUser(user, "python3",
            scratch.resolve("listener.py").toString(), directory.resolve("xferd.sock").toString()))
            .redirectErrorStream(true).start();
        final BufferedReader out = new BufferedReader(
            new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("LISTENING");

        assertThatThrownBy(() -> XferClient.connect(SystemTests.clientContext(directory, "victim")))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("runs as uid " + run(List.of("id", "-u", user)).trim())
            .hasMessageContaining("belongs to uid 0");

        // the Python client's control channel (an impostor would fake cnc.dat too; the socket check is what counts)
        final Process python = new ProcessBuilder("python3", "-c",
            "import sys, xferd\nfrom xferd.control import ControlChannel\n" +
            "try:\n    ControlChannel(sys.argv[1], 5.0)\n" +
            "except xferd.XferError as ex:\n    print('REFUSED', ex)\n", directory.resolve("xferd.sock").toString())
            .directory(scratch.toFile()).redirectErrorStream(true).start();
        final String pythonOutput = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(python.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(pythonOutput).contains("REFUSED refusing", "belongs to uid 0", "nothing was sent");

        assertThat(out.readLine()).as("what the impostor received").isEqualTo("RECEIVED 0");
    }
}
