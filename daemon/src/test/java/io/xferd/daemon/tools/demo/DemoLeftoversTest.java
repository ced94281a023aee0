package io.xferd.daemon.tools.demo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the demo's daemon leaves in its directory goes at the end: only the daemon's own names that were not there
 * before, then the directory if the demo made it and nothing else is in it. Whatever else appears meanwhile stays, a
 * link is removed and never followed, and a --dir that is not a directory (a link included) is refused. Nothing goes
 * while another holds the directory's lock (a daemon that claimed it since), and a journal/ others may write in stays.
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

    @Test
    void shouldKeepAnEntrySomeoneElseAddedDuringTheRun() throws IOException
    {
        final Path directory = Files.createDirectories(root.resolve("shared"));
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);
        Files.createDirectories(directory.resolve("clone/src"));
        Files.writeString(directory.resolve("clone/src/Main.java"), "another program's");
        Files.writeString(directory.resolve("segment"), "another program's");

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(removed.removed()).containsExactly(directory.resolve("cluster.token"), directory.resolve("journal"),
            directory.resolve("xferd.lock"));
        assertThat(directory.resolve("clone/src/Main.java")).hasContent("another program's");
        assertThat(directory.resolve("segment")).hasContent("another program's");
    }

    @Test
    void shouldKeepADirectoryTheDemoMadeWhenSomeoneElseAddedToIt() throws IOException
    {
        final Path directory = root.resolve("made");
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);
        Files.writeString(directory.resolve("segment"), "another program's");

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(removed.madeByDemo()).isTrue();
        assertThat(removed.left()).containsExactly(directory);
        try (Stream<Path> entries = Files.list(directory))
        {
            assertThat(entries).containsExactly(directory.resolve("segment"));
        }
    }

    @Test
    void shouldRemoveALinkNeverWhatItPointsAt() throws IOException
    {
        final Path elsewhere = Files.createDirectories(root.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("precious"), "the victim's");
        final Path directory = Files.createDirectories(root.resolve("shared"));
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        Files.createSymbolicLink(directory.resolve("journal"), elsewhere);
        Files.createSymbolicLink(directory.resolve("cluster.token"), elsewhere.resolve("precious"));
        Files.writeString(directory.resolve("xferd.lock"), "");

        final DemoLeftovers.Removed removed = leftovers.remove();

        assertThat(removed.removed()).containsExactly(directory.resolve("cluster.token"), directory.resolve("journal"),
            directory.resolve("xferd.lock"));
        assertThat(directory).isEmptyDirectory();
        assertThat(elsewhere.resolve("precious")).hasContent("the victim's");
    }

    @Test
    void shouldNotFollowALinkInsideAJournalItRemoves() throws IOException
    {
        final Path elsewhere = Files.createDirectories(root.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("precious"), "the victim's");
        final Path directory = Files.createDirectories(root.resolve("shared"));
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);
        Files.createSymbolicLink(directory.resolve("journal/sub"), elsewhere);

        leftovers.remove();

        assertThat(directory).isEmptyDirectory();
        assertThat(elsewhere.resolve("precious")).hasContent("the victim's");
    }

    @Test
    void shouldRefuseADirectoryThatIsAFileOrALink() throws IOException
    {
        final Path file = Files.writeString(root.resolve("notes.txt"), "mine");
        final Path target = Files.createDirectories(root.resolve("target"));
        final Path link = Files.createSymbolicLink(root.resolve("link"), target);

        assertThatThrownBy(() -> DemoLeftovers.before(file)).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> DemoLeftovers.before(link)).isInstanceOf(NotDirectoryException.class);
        assertThat(file).hasContent("mine");
    }

    @Test
    void shouldRemoveNothingWhileAnotherHoldsTheDirectorysLock() throws IOException
    {
        final Path directory = root.resolve("claimed");
        final DemoLeftovers leftovers = DemoLeftovers.before(directory);
        daemonLeavesItsFiles(directory);
        final DemoLeftovers.Removed removed;
        // a daemon that claimed the directory after the demo's closed: another channel's lock, as in its process
        try (FileChannel channel = FileChannel.open(directory.resolve("xferd.lock"), StandardOpenOption.WRITE);
            FileLock lock = channel.tryLock())
        {
            assertThat(lock).isNotNull();
            removed = leftovers.remove();
        }

        assertThat(removed.removed()).isEmpty();
        assertThat(removed.locked()).contains("xferd.lock");
        try (Stream<Path> entries = Files.list(directory))
        {
            assertThat(entries).containsExactlyInAnyOrder(directory.resolve("cluster.token"),
                directory.resolve("journal"), directory.resolve("xferd.lock"));
        }
        assertThat(directory.resolve("journal/20261202.cq4")).hasContent("queue");
        assertThat(leftovers.remove().removed()).as("once the lock is free").contains(directory);
    }

    @Test
    void shouldLeaveAJournalOthersMayWriteIn() throws IOException
    {
        for (final int mode : new int[]{01777, 0770, 0757})
        {
            final Path directory = Files.createDirectories(root.resolve("shared-" + Integer.toOctalString(mode)));
            final DemoLeftovers leftovers = DemoLeftovers.before(directory);
            daemonLeavesItsFiles(directory);
            Files.setAttribute(directory.resolve("journal"), "unix:mode", mode); // made by another, taken as it was

            final DemoLeftovers.Removed removed = leftovers.remove();

            assertThat(removed.left()).as(Integer.toOctalString(mode)).containsExactly(directory.resolve("journal"));
            assertThat(removed.removed()).containsExactly(directory.resolve("cluster.token"),
                directory.resolve("xferd.lock"));
            assertThat(directory.resolve("journal/20261202.cq4")).hasContent("queue");
        }
    }

    private static void daemonLeavesItsFiles(final Path directory) throws IOException
    {
        Files.createDirectories(directory.resolve("journal"));
        Files.setAttribute(directory.resolve("journal"), "unix:mode", 0750); // as the daemon leaves it
        Files.writeString(directory.resolve("journal/20261202.cq4"), "queue");
        Files.writeString(directory.resolve("cluster.token"), "secret");
        Files.writeString(directory.resolve("xferd.lock"), "");
    }
}
