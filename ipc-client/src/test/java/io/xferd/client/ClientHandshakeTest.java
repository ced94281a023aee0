package io.xferd.client;

import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.nativebindings.libc.Memfd;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * HELLO goes out with the protocol version, pid, flags and segment name; WELCOME comes back with the client's limits
 * and the descriptor of its rings file. Every other answer ends the attempt with a typed error. Against a fake
 * daemon on a real Unix socket in a temporary directory.
 */
@Timeout(30)
class ClientHandshakeTest
{
    @TempDir
    Path directory;

    private FakeDaemon daemon;
    private DaemonProxy proxy;

    @BeforeEach
    void connect()
    {
        daemon = new FakeDaemon(directory, System.currentTimeMillis());
        proxy = daemon.connectProxy();
    }

    @AfterEach
    void close()
    {
        proxy.close();
        daemon.close();
    }

    @Test
    void shouldSendHelloAndDecodeWelcomeWithTheRingsFileItPassed()
    {
        daemon.queueWelcome(128, 32);

        final Welcome welcome = ClientHandshake.perform(proxy, 4242, "prefill-0", true);

        final ControlFrame hello = daemon.receive();
        assertThat(hello.type()).isEqualTo(ControlMessages.HELLO);
        assertThat(hello.getInt(ControlMessages.HELLO_VERSION)).isEqualTo(ControlMessages.PROTOCOL_VERSION);
        assertThat(hello.getInt(ControlMessages.HELLO_PID)).isEqualTo(4242);
        assertThat(hello.getInt(ControlMessages.HELLO_FLAGS)).isEqualTo(ControlMessages.HELLO_FLAG_LISTEN);
        assertThat(hello.getString(ControlMessages.HELLO_NAME)).isEqualTo("prefill-0");

        assertThat(welcome.clientSlot()).isEqualTo(3);
        assertThat(welcome.maxInFlight()).isEqualTo(128);
        assertThat(welcome.maxBatchEntries()).isEqualTo(32);
        assertThat(welcome.segmentHandle()).isEqualTo(0x5E6L);
        assertThat(welcome.maxRequestLength()).isEqualTo(1L << 30);
        assertThat(welcome.segmentName()).isEqualTo("127.0.0.1:12001/prefill-0");
        assertThat(welcome.completionRingLength()).isEqualTo(FakeDaemon.COMPLETION_RING_LENGTH);
        assertThat(welcome.submitRingLength()).isEqualTo(FakeDaemon.SUBMIT_RING_LENGTH);
        assertThat(welcome.ringsFd()).as("a descriptor received over the socket").isNotNegative();

        try (ClientRings clientView = ClientRings.map(welcome.ringsFd(),
            welcome.completionRingLength(), welcome.submitRingLength()))
        {
            daemon.complete(77, 0, 4096);
            assertThat(clientView.completionRing().size()).as("the very file the daemon writes").isPositive();
        }
        finally
        {
            Memfd.close(welcome.ringsFd());
        }
    }

    @Test
    void shouldAskForNoOwnPortUnlessTheContextListens()
    {
        daemon.queueWelcome(1, 1);

        Memfd.close(ClientHandshake.perform(proxy, 1, "decode-0", false).ringsFd());

        assertThat(daemon.receive().getInt(ControlMessages.HELLO_FLAGS)).isZero();
    }

    @Test
    void shouldThrowTheDaemonsRefusalWithItsCode()
    {
        daemon.begin(ControlMessages.ERROR)
            .putLong(ControlMessages.CORRELATION_ID, 0)
            .putInt(ControlMessages.ERROR_CODE, ControlError.DUPLICATE_SEGMENT_NAME)
            .putString(ControlMessages.ERROR_MESSAGE, "prefill-0 is taken");
        daemon.send(-1);

        assertThatThrownBy(() -> ClientHandshake.perform(proxy, 1, "prefill-0", false))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.DUPLICATE_SEGMENT_NAME))
            .hasMessageContaining("prefill-0 is taken");
    }

    @Test
    void shouldRefuseAWelcomeWithoutItsRingsFile()
    {
        daemon.begin(ControlMessages.WELCOME).putInt(ControlMessages.WELCOME_MAX_IN_FLIGHT, 1)
            .putString(ControlMessages.WELCOME_SEGMENT_NAME, "x");
        daemon.send(-1);

        assertThatThrownBy(() -> ClientHandshake.perform(proxy, 1, "x", false))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("no rings file descriptor");
    }

    @Test
    void shouldRefuseAnAnswerOtherThanWelcome()
    {
        daemon.queueOk(0, 0);

        assertThatThrownBy(() -> ClientHandshake.perform(proxy, 1, "x", false))
            .isExactlyInstanceOf(XferException.class)
            .hasMessageContaining("answered HELLO with message type " + ControlMessages.OK);
    }

    @Test
    void shouldCountTheDaemonGoneWhenItHangsUpInsteadOfAnswering()
    {
        daemon.closeConnection();

        assertThatThrownBy(() -> ClientHandshake.perform(proxy, 1, "x", false))
            .isInstanceOf(DaemonGoneException.class);
    }

    @Test
    void shouldRefuseRingLengthsThatAreNotTwoRings()
    {
        final int fd = Memfd.create("bad-rings");
        try
        {
            Memfd.truncate(fd, 8192);
            assertThatThrownBy(() -> ClientRings.map(fd, 4096 + 100, 4096))
                .isInstanceOf(XferException.class)
                .hasMessageContaining("not two rings");
            assertThatThrownBy(() -> ClientRings.map(fd, 0, 4096)).isInstanceOf(XferException.class);
        }
        finally
        {
            Memfd.close(fd);
        }
    }

    @Test
    void shouldMapTheRingsSoThatWhatTheClientSubmitsIsWhatTheDaemonReads()
    {
        try (ClientRings clientView = daemon.mapClientRings())
        {
            final int index = clientView.submitRing().tryClaim(1, 16);
            clientView.submitRing().buffer().putLong(index, 0xC0FFEEL);
            clientView.submitRing().commit(index);

            final long[] seen = new long[1];
            assertThat(daemon.readSubmitRing((type, buffer, offset, length) -> seen[0] = buffer.getLong(offset)))
                .isOne();
            assertThat(seen[0]).isEqualTo(0xC0FFEEL);
        }
    }
}
