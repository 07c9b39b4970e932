// Link health facts (module `health`): what doctor's health gates read that
// no other module does. The negotiated and maximum PCIe link of every NIC PF,
// every GPU and every bridge above them (sysfs current_link_speed/width and
// max_link_speed/width, drivers/pci/pci-sysfs.c), and the NVIDIA driver's
// flavour for the GPUDirect dma-buf path (/proc/driver/nvidia/version).
#ifndef PROVISIONER_ENGINE_MODEL_HEALTH_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_HEALTH_FACTS_H_

#include <map>
#include <optional>
#include <string>

namespace provisioner {

// The four link attributes of one PCI Express function, as read (trailing
// newline removed). Absent attributes (a conventional PCI function, or a
// tree that did not capture them) stay "" / nullopt.
struct PcieLinkAttrs {
  std::string current_speed;  // "16.0 GT/s PCIe", "8 GT/s" (before 4.19), "Unknown"
  std::string max_speed;
  std::optional<int> current_width;  // 0 when the link is down
  std::optional<int> max_width;
  bool Any() const {
    return !current_speed.empty() || !max_speed.empty() || current_width || max_width;
  }
};

struct HealthFacts {
  bool discovered = false;  // the health module ran (doctor, discover; not plan)
  // By BDF: NIC PFs, GPUs and every PCI function on their sysfs paths.
  std::map<std::string, PcieLinkAttrs> pcie_links;
  // First line of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX
  // Open Kernel Module for x86_64  550.54.15 ..."); nullopt when absent (the
  // nvidia module not loaded, or not captured).
  std::optional<std::string> nvidia_version;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_HEALTH_FACTS_H_
