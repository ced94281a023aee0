/**
 * Discovery of this host's CPUs, NUMA nodes, NICs and GPUs from sysfs, and the topology matrix that
 * tells the daemon which NICs to use for memory at each location. Nothing here opens a socket or talks
 * to the network; everything is read below a {@link io.xferd.topology.SysfsRoot} ({@code /sys} on a real
 * host, a fake tree in tests), and every file may be missing.
 *
 * <h2>Files read (relative to the sysfs root)</h2>
 * <ul>
 *   <li>{@code devices/system/node/nodeN/cpulist}: NUMA node N and its CPUs (cpulist syntax,
 *   {@code 0-3,8-11}); without any {@code nodeN}, one node 0 with {@code devices/system/cpu/online}.</li>
 *   <li>{@code class/net/<if>/}{@code device} (a link whose resolved target is the PCIe path, e.g.
 *   {@code devices/pci0000:00/0000:00:01.0/0000:01:00.0}), {@code speed} (Mb/s; -1 or unreadable when
 *   the link is down), {@code operstate}, {@code address} (MAC); the PCI function's {@code numa_node}
 *   (-1 reads as node 0). {@code lo} is skipped; virtual interfaces have no {@code device} link and are
 *   kept on node 0 without a PCI address.</li>
 *   <li>{@code class/infiniband/<dev>/}{@code device}, {@code device/net/<if>} (the netdev of the RDMA
 *   device; that netdev is then not listed again as an Ethernet NIC), {@code ports/1/state},
 *   {@code ports/1/rate}.</li>
 *   <li>{@code bus/pci/devices/<bdf>/}{@code class} (display {@code 0x0300xx}, 3D {@code 0x0302xx}, other
 *   display {@code 0x0380xx}), {@code vendor} ({@code 0x10de} NVIDIA: {@code cuda:N}; {@code 0x1002}
 *   AMD: {@code hip:N}; N in PCI address order per vendor), {@code numa_node}.</li>
 * </ul>
 * IP addresses are not in sysfs: {@link io.xferd.topology.InterfaceAddresses} adds them on a live host.
 *
 * <h2>Matrix rules</h2>
 * The matrix is Mooncake's {@code {"cpu:0": [[preferred...], [available...]], "cuda:0": [...]}}.
 * <ul>
 *   <li>{@code cpu:N}: preferred = the NICs on NUMA node N (every NIC when node N has none);
 *   available = the rest.</li>
 *   <li>{@code cuda:N} / {@code hip:N}: candidates = the NICs on the GPU's NUMA node (every NIC when none
 *   is there); preferred = the candidates at the smallest PCIe distance from the GPU, the distance being
 *   the hops from each device up to their lowest common ancestor in the PCIe tree, summed (a GPU and a NIC
 *   on two downstream ports of one switch are 4 apart; behind two switches under a common switch, 6;
 *   under different root complexes, the sum of both path lengths); available = the rest.</li>
 *   <li>A location with no row of its own uses the {@code cpu:0} row.</li>
 *   <li>The operator may replace the whole matrix with a file in the same JSON form, or keep only the
 *   NICs of the seeds' {@code device_name} list ({@link io.xferd.topology.TopologyMatrix#filter}).</li>
 * </ul>
 * The matrix describes wiring, not health: a NIC that is down stays in its rows; choosing among the
 * NICs of a row at transfer time is the daemon's job.
 */
package io.xferd.topology;
