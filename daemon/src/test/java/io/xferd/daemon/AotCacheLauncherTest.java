package io.xferd.daemon;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * bin/xferd and the JDK's AOT cache, on a copy of the packaged launcher, jar and libraries (jars' times kept, as
 * an install with {@code cp -a} keeps them): a cache beside the jar is used; a stale one (a jar changed after the
 * training run), a truncated one or one of random bytes changes nothing a user sees: same output, same exit code,
 * no JVM message, and a daemon still starts and serves.
 */
@Tag("integration")
class AotCacheLauncherTest
{
    private static final Path CHECKOUT = Path.of(System.getProperty("user.dir")).getParent();
    private static final String JAR = "daemon-0.1.0-SNAPSHOT.jar";

    @TempDir
    static Path install;

    private static Path launcher;
    private static Path cache;
    private static String version;

    @BeforeAll
    static void installAndTrain() throws IOException
    {
        final Path target = CHECKOUT.resolve("daemon/target");
        assertThat(target.resolve(JAR)).as("run after package (failsafe, or -am package first)").exists();
        Files.createDirectories(install.resolve("bin"));
        Files.createDirectories(install.resolve("daemon/target/lib"));
        copy(CHECKOUT.resolve("bin/xferd"), install.resolve("bin/xferd"));
        copy(CHECKOUT.resolve("jvm.flags"), install.resolve("jvm.flags"));
        copy(target.resolve(JAR), install.resolve("daemon/target").resolve(JAR));
        try (var jars = Files.list(target.resolve("lib")))
        {
            for (final Path jar : jars.toList())
            {
                copy(jar, install.resolve("daemon/target/lib").resolve(jar.getFileName()));
            }
        }
        launcher = install.resolve("bin/xferd");
        cache = install.resolve("daemon/target/xferd.aot");

        version = run(Map.of("XFERD_AOT_CACHE", "none"), 0, "--version");
        // a training run of --version alone (through picocli, as every command but a help request): the build's
        // covers status and a daemon too, and takes longer
        run(Map.of("XFERD_AOT_CACHE", "none", "XFERD_JAVA_OPTS", "-XX:AOTCacheOutput=" + cache), 0, "--version");
        assertThat(cache).exists();
    }

    @Test
    void aCacheBesideTheJarIsUsedAndChangesNothingElse() throws IOException
    {
        final Path classes = install.resolve("classes-used.log");
        final String output = run(Map.of("XFERD_JAVA_OPTS", "-Xlog:class+load:file=" + classes), 0, "--version");
        assertThat(output).isEqualTo(version);
        assertThat(Files.readString(classes)).contains("io.xferd.daemon.tools.cli.XferdMain source: shared objects file");

        // a help request prints the build's text without the cache: mapping it cost more than it saved
        final String help = run(Map.of("XFERD_JAVA_OPTS", "-Xlog:class+load:file=" + classes), 0, "--help");
        assertThat(help).startsWith("Usage: xferd").contains("Commands:");
        assertThat(Files.readString(classes)).contains("io.xferd.daemon.tools.cli.XferdLauncher source: file:")
            .doesNotContain("io.xferd.daemon.tools.cli.XferdLauncher source: shared objects file")
            .doesNotContain("picocli");
    }

    @Test
    void statusUsesItsOwnCacheBesideTheJarAndABadOneChangesNothingAUserSees() throws IOException
    {
        final String directory = install.resolve("no-daemon-here").toString();
        final String expected = run(Map.of("XFERD_AOT_CACHE", "none"), 1, "status", "--dir", directory);
        assertThat(expected).startsWith("no xferd daemon in " + directory);
        final Path statusCache = install.resolve("daemon/target/xferd-status.aot");
        // a training run of status alone (the build's runs against a serving daemon too)
        run(Map.of("XFERD_STATUS_AOT_CACHE", "none", "XFERD_JAVA_OPTS", "-XX:AOTCacheOutput=" + statusCache), 1,
            "status", "--dir", directory);
        assertThat(statusCache).exists();

        final Path classes = install.resolve("status-classes.log");
        assertThat(run(Map.of("XFERD_JAVA_OPTS", "-Xlog:class+load:file=" + classes), 1, "status", "--dir", directory))
            .isEqualTo(expected);
        assertThat(Files.readString(classes))
            .contains("io.xferd.daemon.tools.status.StatusSnapshot source: shared objects file")
            .doesNotContain("picocli");

        final Path truncated = install.resolve("status-truncated.aot");
        final byte[] bytes = Files.readAllBytes(statusCache);
        Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length / 3));
        assertThat(run(Map.of("XFERD_STATUS_AOT_CACHE", truncated.toString()), 1, "status", "--dir", directory))
            .isEqualTo(expected);
    }

    @Test
    void aTruncatedOrForeignCacheChangesNothingAUserSees() throws IOException
    {
        final Path truncated = install.resolve("truncated.aot");
        final byte[] bytes = Files.readAllBytes(cache);
        Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length / 3));
        final Path random = install.resolve("random.aot");
        final byte[] noise = new byte[8192];
        new java.util.Random(42).nextBytes(noise);
        Files.write(random, noise);
        for (final Path bad : List.of(truncated, random))
        {
            assertThat(run(Map.of("XFERD_AOT_CACHE", bad.toString()), 0, "--version")).isEqualTo(version);
            final String status = run(Map.of("XFERD_AOT_CACHE", bad.toString()), 1, "status", "--json", "--dir",
                install.resolve("no-daemon").toString());
            assertThat(status).startsWith("{").doesNotContain("[aot]", "[cds]");
        }
    }

    @Test
    void aDaemonStartedByTheLauncherLoadsNoPicocliClassAndBadOptionsStillGetPicocliErrors() throws IOException
    {
        final Path classes = install.resolve("daemon-classes.log");
        final ProcessBuilder builder = new ProcessBuilder(launcher.toString(), "daemon", "--dir",
            install.resolve("daemon-run").toString(), "--rpc-address=127.0.0.1:0", "--metrics-address", "off",
            "--slow-request-ms", "-1");
        environment(builder, Map.of("XFERD_JAVA_OPTS", "-Xlog:class+load:file=" + classes));
        try (ChildProcess daemon = ChildProcess.startCommand("daemon-launcher", builder))
        {
            daemon.awaitLine("xferd daemon serving", Duration.ofSeconds(120));
            daemon.terminate();
            assertThat(daemon.awaitExit(Duration.ofSeconds(60))).isZero();
        }
        assertThat(Files.readString(classes)).contains("io.xferd.daemon.tools.cli.DaemonArguments")
            .doesNotContain("picocli");

        final String refused = run(Map.of(), 2, "daemon", "--dir", install.resolve("never").toString(), "--workers",
            "many");
        assertThat(refused).contains("Invalid value for option '--workers': 'many' is not an int")
            .contains("Usage: xferd daemon");
        assertThat(install.resolve("never")).doesNotExist();
    }

    @Test
    void aStaleCacheStillLetsADaemonStartAndServeWithoutJvmMessagesInItsLog() throws IOException
    {
        final Path stale = install.resolve("stale");
        Files.createDirectories(stale);
        // a cache is stale once any jar of the class path changed after its training run: copy the install's
        // jar aside, touch it and point a second launcher tree at it, so the other tests keep a fresh cache
        final Path root = stale.resolve("root");
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("daemon/target"));
        copy(launcher, root.resolve("bin/xferd"));
        copy(install.resolve("jvm.flags"), root.resolve("jvm.flags"));
        copy(install.resolve("daemon/target").resolve(JAR), root.resolve("daemon/target").resolve(JAR));
        Files.setLastModifiedTime(root.resolve("daemon/target").resolve(JAR),
            FileTime.fromMillis(System.currentTimeMillis() + 60_000));
        Files.createSymbolicLink(root.resolve("daemon/target/lib"), install.resolve("daemon/target/lib"));
        copy(cache, root.resolve("daemon/target/xferd.aot"));

        final ProcessBuilder builder = new ProcessBuilder(root.resolve("bin/xferd").toString(), "daemon", "--dir",
            stale.resolve("run").toString(), "--rpc-address", "127.0.0.1:0", "--metrics-address", "off");
        environment(builder, Map.of());
        try (ChildProcess daemon = ChildProcess.startCommand("daemon-stale-cache", builder))
        {
            daemon.awaitLine("xferd daemon serving", Duration.ofSeconds(120));
            daemon.terminate();
            assertThat(daemon.awaitExit(Duration.ofSeconds(60))).isZero();
            assertThat(daemon.output()).doesNotContain("[aot]", "[cds]", "AOT cache", "shared archive");
        }
    }

    private static String run(final Map<String, String> environment, final int expectedExit, final String... args)
    {
        final List<String> command = new java.util.ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command);
        environment(builder, environment);
        try (ChildProcess process = ChildProcess.startCommand("xferd " + String.join(" ", args), builder))
        {
            final int exit = process.awaitExit(Duration.ofSeconds(180));
            assertThat(exit).as(process.output()).isEqualTo(expectedExit);
            return process.output();
        }
    }

    private static void environment(final ProcessBuilder builder, final Map<String, String> environment)
    {
        builder.environment().remove("XFERD_JAVA_OPTS");
        builder.environment().remove("XFERD_AOT_CACHE");
        builder.environment().remove("XFERD_STATUS_AOT_CACHE");
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().putAll(environment);
    }

    private static void copy(final Path from, final Path to) throws IOException
    {
        Files.copy(from, to, StandardCopyOption.COPY_ATTRIBUTES, StandardCopyOption.REPLACE_EXISTING);
    }
}
