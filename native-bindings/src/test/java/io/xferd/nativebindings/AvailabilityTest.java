package io.xferd.nativebindings;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

class AvailabilityTest
{
    @Test
    @Timeout(5)
    void shouldDescribeAvailableAndUnavailableLibraries()
    {
        final Availability libc = Availability.available("libc");
        assertThat(libc.isAvailable()).isTrue();
        assertThat(libc.library()).isEqualTo("libc");
        assertThat(libc.reason()).isEmpty();
        assertThat(libc).hasToString("libc: available").isEqualTo(Availability.available("libc"));

        final Availability verbs = Availability.unavailable("libibverbs", "libibverbs.so.1: not found");
        assertThat(verbs.isAvailable()).isFalse();
        assertThat(verbs.reason()).isEqualTo("libibverbs.so.1: not found");
        assertThat(verbs).hasToString("libibverbs: unavailable (libibverbs.so.1: not found)");
    }

    @Test
    @Timeout(5)
    void shouldNameErrnoValuesInMessages()
    {
        final NativeException e = new NativeException("memfd_create", Errno.EMFILE);
        assertThat(e.errno()).isEqualTo(24);
        assertThat(e.function()).isEqualTo("memfd_create");
        assertThat(e).hasMessage("memfd_create failed: EMFILE (24) Too many open files");
        assertThat(new NativeException("f", 4000, "x=1").getMessage()).startsWith("f failed: errno (4000)").endsWith("; x=1");
    }
}
