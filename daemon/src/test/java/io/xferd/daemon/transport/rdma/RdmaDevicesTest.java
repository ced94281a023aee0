package io.xferd.daemon.transport.rdma;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which devices the daemon serves with: every usable one when {@code device_name} is empty (a NIC without an
 * active port is skipped, not fatal), exactly the listed ones otherwise.
 */
class RdmaDevicesTest
{
    private final SimulatedFabric fabric = new SimulatedFabric();
    private final List<String> opened = new ArrayList<>();
    private final Function<String, RdmaDevice> opener = name ->
    {
        if (name.equals("mlx5_1"))
        {
            throw new IllegalStateException("RDMA device mlx5_1 has no active port");
        }
        opened.add(name);
        return fabric.device(name);
    };

    @Test
    void shouldSkipADeviceWithoutAnActivePortWhenServingWithEveryDevice()
    {
        final RdmaDevices devices = RdmaDevices.open(List.of(), List.of("mlx5_0", "mlx5_1", "mlx5_2"), opener);

        assertThat(devices.names()).containsExactly("mlx5_0", "mlx5_2");
    }

    @Test
    void shouldRefuseAListedDeviceThatCannotBeUsed()
    {
        assertThatThrownBy(() -> RdmaDevices.open(List.of("mlx5_0", "mlx5_1"), List.of("mlx5_0", "mlx5_1"), opener))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("mlx5_1 has no active port");
        assertThatThrownBy(() -> RdmaDevices.open(List.of("mlx5_9"), List.of("mlx5_0"), opener))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("device_name lists RDMA device mlx5_9");
    }

    @Test
    void shouldRefuseWhenNoDeviceIsUsable()
    {
        assertThatThrownBy(() -> RdmaDevices.open(List.of(), List.of("mlx5_1"), opener))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("no usable RDMA device: mlx5_1 (RDMA device mlx5_1 has no active port)");
    }
}
