package io.xferd.nativebindings.libc;

import io.xferd.nativebindings.Errno;
import io.xferd.nativebindings.NativeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A pidfd of a live child process is not readable; once the child exits it is, and stays so.
 */
class PidfdTest
{
    @Test
    @Timeout(30)
    void shouldBecomeReadableWhenItsProcessExits() throws Exception
    {
        final java.lang.Process child = new ProcessBuilder("sleep", "30").start();
        final int fd = Pidfd.open((int)child.pid());
        final Poller poller = new Poller(1);
        try
        {
            poller.clear();
            poller.add(fd);
            assertThat(poller.poll(0)).as("alive").isZero();

            child.destroyForcibly();
            assertThat(child.waitFor(20, TimeUnit.SECONDS)).isTrue();

            poller.clear();
            poller.add(fd);
            assertThat(poller.poll(10_000)).isEqualTo(1);
            assertThat(poller.isReadable(0)).isTrue();
        }
        finally
        {
            Pidfd.close(fd);
            child.destroyForcibly();
        }
    }

    @Test
    @Timeout(10)
    void shouldRefuseAPidWithNoProcess()
    {
        assertThatThrownBy(() -> Pidfd.open(Integer.MAX_VALUE)).isInstanceOfSatisfying(NativeException.class,
            ex -> assertThat(ex.errno()).isEqualTo(Errno.ESRCH));
    }
}
