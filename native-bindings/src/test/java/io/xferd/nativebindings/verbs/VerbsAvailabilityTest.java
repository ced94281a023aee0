package io.xferd.nativebindings.verbs;

import io.xferd.nativebindings.Availability;
import io.xferd.nativebindings.LibraryUnavailableException;
import io.xferd.nativebindings.NativeLibrary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * On a host without RDMA devices (with or without libibverbs installed) the bindings report why, list nothing, and
 * never fail at class initialisation.
 */
class VerbsAvailabilityTest
{
    @Test
    @Timeout(30)
    void shouldInitialiseEveryPublicClassWithoutThrowing() throws Exception
    {
        for (final Class<?> type : List.of(Verbs.class, VerbsLayouts.class, VerbsDevice.class, VerbsDeviceList.class,
            VerbsContext.class, ProtectionDomain.class, MemoryRegion.class, CompletionQueue.class, QueuePair.class,
            Gid.class, QueuePairEndpoint.class))
        {
            assertThat(Class.forName(type.getName(), true, getClass().getClassLoader())).isSameAs(type);
        }
        assertThat(Verbs.availability()).isNotNull();
    }

    @Test
    @Timeout(30)
    void shouldReportNoRdmaDevicesOrMissingLibraryOnThisHost()
    {
        final List<String> names = VerbsDevice.names();
        assumeTrue(names.isEmpty(), "this host has RDMA devices " + names);

        final Availability availability = Verbs.availability();
        assertThat(availability.isAvailable()).isFalse();
        assertThat(availability.library()).isEqualTo("libibverbs");
        assertThat(availability.reason()).containsAnyOf("no RDMA devices", "libibverbs.so.1");
        System.out.println("VerbsAvailabilityTest: " + availability);
        try (VerbsDeviceList list = VerbsDevice.list())
        {
            assertThat(list.devices()).isEmpty();
            assertThat(list.isEmpty()).isTrue();
        }
    }

    @Test
    @Timeout(30)
    void shouldSayNoRdmaDevicesWhenTheLibraryLoadsButListsNone()
    {
        assumeTrue(Verbs.library().isLoaded(), "libibverbs.so.1 is not installed");
        assumeTrue(VerbsDevice.names().isEmpty(), "this host has RDMA devices");
        assertThat(Verbs.availability().reason()).startsWith("no RDMA devices (libibverbs.so.1 loaded");
    }

    @Test
    @Timeout(30)
    void shouldReportALibraryThatDoesNotExistAsUnavailable()
    {
        final Availability availability = Verbs.probe("libibverbs-xferd-missing.so.9");

        assertThat(availability.isAvailable()).isFalse();
        assertThat(availability.library()).isEqualTo("libibverbs");
        assertThat(availability.reason()).contains("cannot load libibverbs-xferd-missing.so.9");
    }

    @Test
    @Timeout(30)
    void shouldThrowATypedExceptionForASymbolOfAMissingLibrary()
    {
        final NativeLibrary missing = NativeLibrary.load("libibverbs", List.of("libibverbs-xferd-missing.so.9"));

        assertThat(missing.isLoaded()).isFalse();
        assertThatThrownBy(() -> missing.downcall("ibv_open_device", java.lang.foreign.FunctionDescriptor.ofVoid()))
            .isInstanceOf(LibraryUnavailableException.class)
            .hasMessageContaining("libibverbs: unavailable (cannot load libibverbs-xferd-missing.so.9");
    }

    @Test
    @Timeout(10)
    void shouldExplainEnosysFromTheDeviceList()
    {
        assertThat(Verbs.noDevices("libibverbs.so.1", 38))
            .isEqualTo("no RDMA devices (libibverbs.so.1 loaded, ibv_get_device_list failed: ENOSYS (38), " +
                "the kernel exposes no uverbs devices)");
    }
}
