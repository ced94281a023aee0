package io.xferd.client;

import io.xferd.ipc.ControlError;
import io.xferd.ipc.ControlFrame;
import io.xferd.ipc.ControlMessages;
import io.xferd.ipc.ProcessMemoryRegistration;
import io.xferd.nativebindings.cuda.CudaRuntime;
import io.xferd.nativebindings.libc.MappedMemory;
import io.xferd.nativebindings.libc.Memfd;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * Memory registration: the shared memory this client allocated is remembered with its memfd, a range inside it is
 * registered by passing that memfd and the range's offset in it, and each kind of registration is one request the
 * daemon answers with OK or a typed refusal. Against a fake daemon on a real Unix socket.
 */
@Timeout(30)
class MemoryRegistrarTest
{
    private static final int PAGE = 4096;

    @TempDir
    Path directory;

    private FakeDaemon daemon;
    private DaemonProxy proxy;
    private final SharedBuffers sharedBuffers = new SharedBuffers("registrar-test");
    private MemoryRegistrar registrar;

    @BeforeEach
    void connect()
    {
        daemon = new FakeDaemon(directory, System.currentTimeMillis());
        proxy = daemon.connectProxy();
        registrar = new MemoryRegistrar(proxy, sharedBuffers);
    }

    @AfterEach
    void close()
    {
        sharedBuffers.close();
        proxy.close();
        daemon.close();
    }

    @Test
    void shouldPassTheBuffersMemfdAndTheRangesOffsetInIt()
    {
        final SharedBuffer buffer = sharedBuffers.allocate(4 * PAGE);
        daemon.queueOk(1, 0);

        registrar.registerMemory(buffer.address() + PAGE, 2 * PAGE, "cpu:0");

        final ControlFrame request = daemon.receive();
        assertThat(request.type()).isEqualTo(ControlMessages.REGISTER_MEMORY);
        assertThat(request.getLong(ControlMessages.CORRELATION_ID)).isEqualTo(1);
        assertThat(request.getLong(ControlMessages.REGISTER_ADDRESS)).isEqualTo(buffer.address() + PAGE);
        assertThat(request.getLong(ControlMessages.REGISTER_LENGTH)).isEqualTo(2 * PAGE);
        assertThat(request.getLong(ControlMessages.REGISTER_FD_OFFSET)).isEqualTo(PAGE);
        assertThat(request.getString(ControlMessages.REGISTER_LOCATION)).isEqualTo("cpu:0");

        final int passedFd = daemon.takeReceivedFd();
        assertThat(passedFd).as("the memfd came along").isNotNegative();
        final MemorySegment daemonView = MappedMemory.mapShared(passedFd, PAGE, PAGE);
        try
        {
            daemonView.set(JAVA_LONG, 8, 0x1234_5678L);
            assertThat(buffer.segment().get(JAVA_LONG, PAGE + 8))
                .as("the daemon writes into the very pages this client holds").isEqualTo(0x1234_5678L);
        }
        finally
        {
            MappedMemory.unmap(daemonView);
            Memfd.close(passedFd);
        }
    }

    @Test
    void shouldRefuseHostMemoryOutsideSharedMemoryBeforeSendingAnything()
    {
        final SharedBuffer buffer = sharedBuffers.allocate(PAGE);

        assertThatThrownBy(() -> registrar.registerMemory(buffer.address() + 1, PAGE, "cpu:0"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not inside memory from allocateMemory()");
        assertThatThrownBy(() -> registrar.registerMemory(0x7000_0000_0000L, PAGE, "cpu:0"))
            .isInstanceOf(IllegalArgumentException.class);

        assertThat(daemon.hasUnreadRequest()).isFalse();
    }

    @Test
    void shouldTakeARangeOutsideSharedMemoryWithACudaLocationForGpuMemory()
    {
        assumeFalse(CudaRuntime.availability().isAvailable(), "checks the path taken where CUDA is absent");

        assertThatThrownBy(() -> registrar.registerMemory(0x7000_0000_0000L, PAGE, "cuda:0"))
            .isInstanceOf(CudaUnavailableException.class);
        assertThatThrownBy(() -> registrar.registerGpuMemory(0x7000_0000_0000L, PAGE, "cuda:0", 0x7000_0000_0000L))
            .isInstanceOf(CudaUnavailableException.class);
        assertThat(daemon.hasUnreadRequest()).isFalse();
    }

    @Test
    void shouldRefuseAGpuRangeThatIsNotOnADeviceOrStartsBeforeItsAllocation()
    {
        assertThatThrownBy(() -> registrar.registerGpuMemory(0x1000, PAGE, "cpu:0", 0x1000))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cuda:N");
        assertThatThrownBy(() -> registrar.registerGpuMemory(0x1000, PAGE, "cuda:0", 0x2000))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad GPU range");
        assertThatThrownBy(() -> registrar.registerGpuMemory(0x1000, 0, "cuda:0", 0x1000))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(daemon.hasUnreadRequest()).isFalse();
    }

    @Test
    void shouldRegisterProcessMemoryWithoutADescriptorAndUnregisterByAddress()
    {
        daemon.queueOk(1, 0);
        registrar.registerProcessMemory(0x10_0000, 3 * PAGE, "*");

        final ControlFrame register = daemon.receive();
        assertThat(register.type()).isEqualTo(ControlMessages.REGISTER_PROCESS_MEMORY);
        assertThat(ProcessMemoryRegistration.decode(register))
            .isEqualTo(new ProcessMemoryRegistration(1, 0x10_0000, 3 * PAGE, "*"));
        assertThat(daemon.takeReceivedFd()).isNegative();

        daemon.queueOk(2, 0);
        registrar.unregisterMemory(0x10_0000);

        final ControlFrame unregister = daemon.receive();
        assertThat(unregister.type()).isEqualTo(ControlMessages.UNREGISTER_MEMORY);
        assertThat(unregister.getLong(ControlMessages.CORRELATION_ID)).isEqualTo(2);
        assertThat(unregister.getLong(ControlMessages.UNREGISTER_ADDRESS)).isEqualTo(0x10_0000);
    }

    @Test
    void shouldThrowTheDaemonsRefusalWithItsCodeAndGoOnWithTheNextRequest()
    {
        daemon.queueError(1, ControlError.OVERLAPPING_REGION, "overlaps 0x10000");
        assertThatThrownBy(() -> registrar.registerProcessMemory(0x10_0000, PAGE, "cpu:0"))
            .isInstanceOfSatisfying(ControlException.class,
                ex -> assertThat(ex.code()).isEqualTo(ControlError.OVERLAPPING_REGION))
            .hasMessageContaining("overlaps 0x10000");

        daemon.queueOk(2, 0);
        registrar.unregisterMemory(0x20_0000);
        assertThat(daemon.receive().type()).isEqualTo(ControlMessages.REGISTER_PROCESS_MEMORY);
        assertThat(daemon.receive().getLong(ControlMessages.UNREGISTER_ADDRESS)).isEqualTo(0x20_0000);
    }

    @Test
    void shouldNeverTakeTwoAnswersForOneRequest()
    {
        daemon.queueOk(1, 0);
        daemon.queueOk(1, 0);

        assertThatThrownBy(() -> registrar.unregisterMemory(0x10_0000))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("more than one answer");
    }

    @Test
    void shouldRefuseAnAnswerToAnotherRequest()
    {
        daemon.queueOk(99, 0);

        assertThatThrownBy(() -> registrar.unregisterMemory(0x10_0000))
            .isInstanceOf(XferException.class)
            .hasMessageContaining("answered another request (99 != 1)");
    }

    @Test
    void shouldRefuseABadProcessRangeBeforeSendingAnything()
    {
        assertThatThrownBy(() -> registrar.registerProcessMemory(0, PAGE, "*"))
            .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registrar.registerProcessMemory(PAGE, -1, "*"))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(daemon.hasUnreadRequest()).isFalse();
    }

    @Test
    void shouldFindTheBufferThatHoldsAWholeRangeAndNoneForARangeThatSpillsOut()
    {
        final SharedBuffer first = sharedBuffers.allocate(PAGE);
        final SharedBuffer second = sharedBuffers.allocate(2 * PAGE);

        assertThat(sharedBuffers.find(first.address(), PAGE)).isSameAs(first);
        assertThat(sharedBuffers.find(second.address() + PAGE, PAGE)).isSameAs(second);
        assertThat(sharedBuffers.find(second.address() + PAGE, PAGE + 1)).isNull();
        // the kernel may map the two side by side: a range across their border is still in neither
        assertThat(sharedBuffers.find(first.address() - 1, 2)).isNull();
        assertThat(sharedBuffers.find(second.address() - 1, 2)).isNull();
        assertThatThrownBy(() -> sharedBuffers.allocate(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldForgetAFreedBufferAndLeaveOneItDidNotAllocateAlone()
    {
        final SharedBuffer buffer = sharedBuffers.allocate(PAGE);
        final SharedBuffers other = new SharedBuffers("other");
        final SharedBuffer foreign = other.allocate(PAGE);

        assertThat(sharedBuffers.free(foreign)).isFalse();
        assertThat(sharedBuffers.free(buffer)).isTrue();
        assertThat(sharedBuffers.free(buffer)).as("freed once").isFalse();
        assertThat(sharedBuffers.find(buffer.address(), PAGE)).isNull();
        assertThat(sharedBuffers.size()).isZero();

        foreign.segment().set(JAVA_LONG, 0, 7L);
        assertThat(foreign.segment().get(JAVA_LONG, 0)).as("still mapped").isEqualTo(7L);
        other.close();
        assertThat(other.size()).isZero();
    }
}
