package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the demo's daemon leaves in its directory goes at the end: the whole directory when the demo made it, only
 * what was added when the user's directory held something already (kept whole, whatever was written into it).
 */
class DemoLeftoversTest
{
    @TempDir
    Path root;

    @Test
    void shouldRemoveADirectoryTheDemoMade() throws IOException
    {
        final Path directory = root.resolve("xferd");
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(directory).doesNotExist();
        assertThat(removed.madeByDemo()).isTrue();
        assertThat(removed.left()).isEmpty();
    }

    @Test
    void shouldRemoveOnlyWhatWasAddedToTheUsersDirectory() throws IOException
    {
        final Path directory = Files.createDirectories(root.resolve("mine"));
        Files.writeString(directory.resolve("notes.txt"), "mine");
        Files.createDirectories(directory.resolve("journal"));
        Files.writeString(directory.resolve("journal/old.cq4"), "mine too");
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(removed.madeByDemo()).isFalse();
        assertThat(removed.removed()).containsExactly(directory.resolve("cluster.token"),
            directory.resolve("xferd.lock"));
        assertThat(removed.left()).isEmpty();
        try (Stream<Path> entries = Files.list(directory))
        {
            assertThat(entries).containsExactlyInAnyOrder(directory.resolve("notes.txt"), directory.resolve("journal"));
        }
        assertThat(directory.resolve("journal/old.cq4")).hasContent("mine too");
        assertThat(directory.resolve("journal/20261202.cq4")).as("inside what was there: kept").exists();
    }

    @Test
    void shouldRemoveEverythingAddedToAnEmptyDirectoryButTheDirectory() throws IOException
    {
        final Path directory = Files.createDirectories(root.resolve("empty"));
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(removed.removed()).hasSize(3);
        assertThat(directory).isEmptyDirectory();
    }

    private static void daemonLeavesItsFiles(final Path directory) throws IOException
    {
        Files.createDirectories(directory.resolve("journal"));
        Files.writeString(directory.resolve("journal/20261202.cq4"), "queue");
        Files.writeString(directory.resolve("cluster.token"), "secret");
        Files.writeString(directory.resolve("xferd.lock"), "");
    }
}
