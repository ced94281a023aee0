package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DatagramNotifierTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(10)
    void shouldDeliverReadyToFilesystemSocket() throws Exception
    {
        final Path path = dir.resolve("notify.sock");
        try (UnixDatagramSocket receiver = UnixDatagramSocket.bind(path.toString()))
        {
            DatagramNotifier.send(path.toString(), "READY=1");
            DatagramNotifier.send(path.toString(), "STATUS=serving\nMAINPID=" + Process.pid());
            assertThat(receiver.receiveText(4096)).isEqualTo("READY=1");
            assertThat(receiver.receiveText(4096)).isEqualTo("STATUS=serving\nMAINPID=" + Process.pid());
            receiver.configureBlocking(false);
            assertThat(receiver.receiveText(4096)).isNull();
        }
        finally
        {
            Files.deleteIfExists(path);
        }
    }

    @Test
    @Timeout(10)
    void shouldDeliverToAbstractSocket()
    {
        final String name = "@xferd-test-notify-" + Process.pid() + "-" + System.nanoTime();
        try (UnixDatagramSocket receiver = UnixDatagramSocket.bind(name))
        {
            DatagramNotifier.send(name, "READY=1");
            assertThat(receiver.receiveText(64)).isEqualTo("READY=1");
        }
        // Closing an abstract socket frees the name: nothing to delete.
        assertThatThrownBy(() -> DatagramNotifier.send(name, "READY=1"))
            .isInstanceOfSatisfying(NativeException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ECONNREFUSED));
    }

    @Test
    @Timeout(10)
    void shouldThrowWhenNobodyListens()
    {
        final String missing = dir.resolve("nobody.sock").toString();
        assertThatThrownBy(() -> DatagramNotifier.send(missing, "READY=1"))
            .isInstanceOfSatisfying(NativeException.class, e ->
            {
                assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                assertThat(e.function()).isEqualTo("sendto");
            });
    }
}
