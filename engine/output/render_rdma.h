// Rendering of the rdma module's facts (discover JSON "rdmaDevices" and the
// RDMA part of the discover table).
#ifndef PROVISIONER_ENGINE_OUTPUT_RENDER_RDMA_H_
#define PROVISIONER_ENGINE_OUTPUT_RENDER_RDMA_H_

#include <string>

#include "engine/model/host_model.h"
#include "nlohmann/json.hpp"

namespace provisioner {

// Contract "rdmaDevices": every device with its ports and GIDs. Before the
// rdma module ran (facts.rdma.discovered false), the devices PCI discovery
// saw, by name and PCI address only.
nlohmann::json RdmaDevicesToJson(const HostFacts& facts);
// Contract "rdma": { netnsMode, ... }.
nlohmann::json RdmaSystemToJson(const HostFacts& facts);
// "RDMA devices:" and "RoCE GIDs:" tables ("" without RDMA devices).
std::string RenderRdmaTable(const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_RENDER_RDMA_H_
