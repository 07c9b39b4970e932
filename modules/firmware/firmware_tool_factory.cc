// The firmware module's one choice of tool per root (firmware_tool.h).
#include "modules/firmware/firmware_tool.h"

namespace provisioner {

std::unique_ptr<FirmwareTool> NewFirmwareTool(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewMstconfigTool();
  return NewCapturedFirmwareTool(fs);
}

}  // namespace provisioner
