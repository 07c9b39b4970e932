// The one choice of address backend per root (address_backend.h).
#include <algorithm>

#include "modules/link/address_backend.h"

namespace provisioner {

std::unique_ptr<NetdevAddressBackend> NewNetdevAddressBackend(HostFs& fs, const std::string& capture) {
  if (fs.IsLiveRoot()) return NewNetlinkNetdevAddressBackend(capture, &fs);
  return NewTreeNetdevAddressBackend(fs, capture);
}

Status SetAddresses(NetdevAddressBackend& backend, const std::string& ifname,
                    const std::vector<std::string>& want) {
  ASSIGN_OR_RETURN(std::vector<std::string> now, backend.Read(ifname));
  for (const std::string& a : now) {
    if (std::find(want.begin(), want.end(), a) == want.end()) {
      RETURN_IF_ERROR(backend.Remove(ifname, a));
    }
  }
  for (const std::string& a : want) {
    if (std::find(now.begin(), now.end(), a) == now.end()) RETURN_IF_ERROR(backend.Add(ifname, a));
  }
  return OkStatus();
}

}  // namespace provisioner
