// What the ipoib module asks the kernel besides sysfs. Mode, pkey children
// (create_child/delete_child) and the pkey/parent files are sysfs on the live
// root as under a tree root, read and written through HostFs by the module.
// MTU and admin state go through the link module's LinkBackend (rtnetlink /
// the /sys/class/net files). Addresses through the shared NetdevAddressBackend
// (modules/link/address_backend.h), with the ipoib module's capture file.
#ifndef PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_
#define PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "modules/link/address_backend.h"

namespace provisioner {

inline constexpr const char* kIpoibAddressCapture = "/run/provisioner/ipoib-addresses";

using IpoibAddressBackend = NetdevAddressBackend;

inline std::unique_ptr<NetdevAddressBackend> NewNetlinkIpoibAddressBackend(const HostFs* notes = nullptr) {
  return NewNetlinkNetdevAddressBackend(kIpoibAddressCapture, notes);
}
inline std::unique_ptr<NetdevAddressBackend> NewTreeIpoibAddressBackend(HostFs& fs) {
  return NewTreeNetdevAddressBackend(fs, kIpoibAddressCapture);
}
inline std::unique_ptr<NetdevAddressBackend> NewIpoibAddressBackend(HostFs& fs) {
  return NewNetdevAddressBackend(fs, kIpoibAddressCapture);
}
inline std::string RenderIpoibAddresses(
    const std::map<std::string, std::vector<std::string>>& by_if) {
  return RenderAddressCapture(by_if);
}
inline std::map<std::string, std::vector<std::string>> ParseIpoibAddresses(
    const std::string& text) {
  return ParseAddressCapture(text);
}

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_
