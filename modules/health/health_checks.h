// Doctor's link health gates (module `health`), pure over the facts: what an
// operator checks before a training job. Each result has the evidence (host
// paths and values) and a fix; a FAIL makes `doctor` exit 1, so
// `provisioner doctor -o json` gates a node.
//   health.pcie-link       a NIC PF or GPU whose PCIe link, or the link of a
//                          bridge above it, trained below what both ends
//                          support (x8 of x16, 8 of 16 GT/s): fail; limited
//                          by the slot (both ends agree, below the card's
//                          own maximum): warn
//   health.port-state      a RoCE (Ethernet) port of a NIC PF not ACTIVE /
//                          LinkUp: fail (InfiniBand ports: rdma.ib-port)
//   health.port-rate       an ACTIVE port below the rate of its rail peers
//                          (the ports of the same link layer on PFs of the
//                          same PCI device ID): fail
//   health.gpudirect-rdma  NVIDIA GPUs and RDMA NICs, and neither
//                          nvidia_peermem (nv_peer_mem) loaded nor the
//                          dma-buf path available: fail
#ifndef PROVISIONER_MODULES_HEALTH_HEALTH_CHECKS_H_
#define PROVISIONER_MODULES_HEALTH_HEALTH_CHECKS_H_

#include <optional>
#include <string>
#include <string_view>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner::health {

inline constexpr char kModuleName[] = "health";

// GT/s of a sysfs link speed: "16.0 GT/s PCIe" (pci_speed_string, since
// Linux 4.19/5.x), "8 GT/s" / "2.5 GT/s" (older kernels); nullopt for
// "Unknown", "Unknown speed" and anything else.
std::optional<double> ParseLinkSpeed(std::string_view text);

// Gb/s of an RDMA port's sysfs rate: "400 Gb/sec (4X NDR)", "2.5 Gb/sec
// (1X SDR)", "53.125 Gb/sec (1X HDR)"; nullopt otherwise.
std::optional<double> ParsePortRate(std::string_view text);

// The GPUDirect dma-buf path: Linux >= 5.12 (dma-buf RDMA memory
// registration) with NVIDIA's open kernel modules, R515 or later. Returns
// "" when available, else why not.
std::string DmaBufUnavailableReason(const std::string& kernel_release,
                                    const std::optional<std::string>& nvidia_version);

void CheckHealth(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner::health

#endif  // PROVISIONER_MODULES_HEALTH_HEALTH_CHECKS_H_
