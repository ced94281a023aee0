package io.xferd.daemon.tools.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class JvmFlagsTest
{
    private static final Path ROOT_FILE = Path.of("..", JvmFlags.RESOURCE).toAbsolutePath().normalize();

    @Test
    void shouldLoadTheFlagsFromTheFileAtTheRepositoryRoot() throws IOException
    {
        try (InputStream in = Files.newInputStream(ROOT_FILE))
        {
            assertThat(JvmFlags.ALL).isEqualTo(JvmFlags.parse(in));
        }
    }

    @Test
    void shouldTurnChronicleAnalyticsOffAndEnableNativeAccess()
    {
        assertThat(JvmFlags.ALL)
            .contains("-Dchronicle.analytics.disable=true", "--enable-native-access=ALL-UNNAMED")
            .allSatisfy(flag -> assertThat(flag).startsWith("-").doesNotContainAnyWhitespaces())
            .doesNotHaveDuplicates();
    }
}
