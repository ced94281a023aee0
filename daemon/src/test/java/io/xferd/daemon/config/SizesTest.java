package io.xferd.daemon.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class SizesTest
{
    @Test
    void shouldReadBinaryUnits()
    {
        assertThat(Sizes.parseBytes("4096")).isEqualTo(4096);
        assertThat(Sizes.parseBytes("17B")).isEqualTo(17);
        assertThat(Sizes.parseBytes("512KiB")).isEqualTo(512L * 1024);
        assertThat(Sizes.parseBytes("1 MiB")).isEqualTo(1L << 20);
        assertThat(Sizes.parseBytes("3gib")).isEqualTo(3L << 30);
        assertThat(Sizes.parseBytes("64k")).isEqualTo(64L * 1024);
    }

    @Test
    void shouldRefuseAmbiguousOrMalformedSizes()
    {
        assertThatThrownBy(() -> Sizes.parseBytes("1MB")).hasMessageContaining("write KiB, MiB or GiB");
        assertThatThrownBy(() -> Sizes.parseBytes("MiB")).hasMessageContaining("must be a number of bytes");
        assertThatThrownBy(() -> Sizes.parseBytes("-1")).hasMessageContaining("must be a number of bytes");
        assertThatThrownBy(() -> Sizes.parseBytes("1.5MiB")).hasMessageContaining("must be a number of bytes");
        assertThatThrownBy(() -> Sizes.parseBytes("99999999999GiB")).hasMessageContaining("must be a number");
    }
}
