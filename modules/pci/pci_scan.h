// libpci behind a Status: the list of PCI functions of a sysfs tree with their
// IDs, classes and pci.ids names. The only file of the project that includes
// <pci/pci.h>.
#ifndef PROVISIONER_MODULES_PCI_PCI_SCAN_H_
#define PROVISIONER_MODULES_PCI_PCI_SCAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace provisioner {

struct PciIdent {
  std::string address;  // "0000:af:00.0"
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint16_t device_class = 0;  // class and subclass (0x0200), no prog-if
  std::string vendor_name;    // "" when pci.ids does not know it
  std::string device_name;
};

struct PciScanOptions {
  // Filesystem path libpci scans ("<root>/sys/bus/pci"), as HostFs::FsPath gives it.
  std::string sysfs_path;
  // pci.ids to take names from; "" = no names.
  std::string ids_path;
};

// Every function under `sysfs_path`/devices, in directory order. libpci's
// fatal errors (a missing vendor/device/class file, an unreadable directory)
// come back as a FailedPrecondition naming the file; they never exit.
StatusOr<std::vector<PciIdent>> ScanPci(const PciScanOptions& options);

// Only the pci.ids names of functions whose IDs were read elsewhere (through
// the host layer, under a tree root): libpci then opens `ids_path` and no
// other file. Fills vendor_name and device_name ("" when unknown).
Status LookupPciNames(const std::string& ids_path, std::vector<PciIdent>* idents);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCI_PCI_SCAN_H_
