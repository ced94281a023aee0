package io.xferd.nativebindings.libc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProcessTest
{
    @Test
    @Timeout(10)
    void shouldKnowOwnPidAndWhichProcessesExist()
    {
        assertThat(Process.pid()).isEqualTo((int)ProcessHandle.current().pid());
        assertThat(Process.isAlive(Process.pid())).isTrue();
        assertThat(Process.isAlive(1)).isTrue(); // init exists; EPERM counts as alive
        assertThat(Process.isAlive(Integer.MAX_VALUE)).isFalse();
        assertThatThrownBy(() -> Process.isAlive(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
