package io.xferd.daemon.statusmap;

import io.xferd.daemon.config.DaemonContext;
import io.xferd.daemon.memory.Region;
import io.xferd.daemon.memory.RegionTable;
import io.xferd.daemon.session.ClientSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry's Chronicle Map opens off the serving path: what the conductor learnt while it was being opened is
 * in it once open (the live clients and their regions; not the clients that came and went meanwhile), and what
 * happens after goes straight through.
 */
@Timeout(120)
class DeferredStatusMapTest
{
    @TempDir
    Path directory;

    private static ClientSession session(final int slot, final String segment, final long address)
    {
        final ClientSession session = new ClientSession(slot, 1, segment, "127.0.0.1:7000/" + segment, 4000 + slot,
            1000, 1000, null, null, null, null, null);
        session.regions(RegionTable.EMPTY.with(Region.inProcess(address, 4096, "cpu:0", 4000 + slot)));
        return session;
    }

    @Test
    void shouldWriteTheClientsThatConnectedWhileTheMapWasBeingOpenedOnceItIsOpen() throws Exception
    {
        final DaemonContext context = new DaemonContext().directory(directory).conclude();
        final CountDownLatch mayOpen = new CountDownLatch(1);
        final DeferredStatusMap map = DeferredStatusMap.of(() ->
        {
            try
            {
                mayOpen.await();
            }
            catch (final InterruptedException ex)
            {
                throw new IllegalStateException(ex);
            }
            return StatusMapWriter.create(context, 1234);
        });
        map.start();
        final ClientSession early = session(0, "prefill", 0x1000);
        final ClientSession gone = session(1, "gone", 0x2000);
        map.onClientConnected(early);
        map.onRegionsChanged(early);
        map.onClientConnected(gone);
        map.onClientDisconnected(gone);
        map.onHousekeeping(1);
        assertThat(map.isWriting()).isFalse();

        mayOpen.countDown();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!map.isWriting() && System.nanoTime() < deadline)
        {
            Thread.sleep(5);
            map.onHousekeeping(2);
        }
        assertThat(map.isWriting()).isTrue();
        final ClientSession late = session(2, "decode", 0x3000);
        map.onClientConnected(late);
        map.onRegionsChanged(late);

        assertThat(StatusMapReader.read(directory).keySet()).contains("daemon", "client/0", "region/0/1000",
            "client/2", "region/2/3000").doesNotContain("client/1", "region/1/2000");
        assertThat(StatusMapReader.read(directory).get("client/0").path("registered_bytes").asLong()).isEqualTo(4096);
        map.close();
        assertThat(directory.resolve(StatusMapFile.FILE)).doesNotExist();
    }

    @Test
    void shouldCloseWhenNeverStarted()
    {
        final DeferredStatusMap map = DeferredStatusMap.of(() ->
        {
            throw new AssertionError("not opened");
        });
        map.onClientConnected(session(0, "prefill", 0x1000));
        map.close();
        assertThat(map.isWriting()).isFalse();
    }
}
