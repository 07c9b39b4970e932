#include "modules/pci/pci_scan.h"

#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "spdlog/spdlog.h"

extern "C" {
#include <pci/pci.h>
}

namespace provisioner {
namespace {

constexpr size_t kNameSize = 256;

// Plain data only: filled between libpci calls that may longjmp.
struct RawIdent {
  int domain;
  unsigned bus, dev, func;
  unsigned vendor, device, device_class;
  char vendor_name[kNameSize];
  char device_name[kNameSize];
};

// libpci's error callback must not return. It records the message and jumps
// back to RunScan; nothing between that setjmp and libpci's frames owns a
// destructor (the output vector belongs to the caller of RunScan).
struct ScanState {
  std::jmp_buf jump;
  char error[1024];
  std::vector<RawIdent>* out;
};

thread_local ScanState* current_scan = nullptr;

// GNU noreturn, not [[noreturn]]: libpci's `error` pointer has the attribute in its
// type, and clang only accepts a function whose type has it too.
__attribute__((noreturn)) void OnPciError(char* msg, ...) {
  if (current_scan == nullptr) {
    // libpci reported a fatal error outside ScanPci: nowhere to return to.
    spdlog::critical("libpci: fatal error outside a scan: {}", msg);
    std::abort();
  }
  va_list ap;
  va_start(ap, msg);
  std::vsnprintf(current_scan->error, sizeof current_scan->error, msg, ap);
  va_end(ap);
  std::longjmp(current_scan->jump, 1);
}

// A libpci warning or debug message (printf-style) in our log at `level`.
void LogPciMessage(spdlog::level::level_enum level, const char* msg, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, msg, ap);
  spdlog::log(level, "libpci: {}", buf);
}

void OnPciWarning(char* msg, ...) {
  va_list ap;
  va_start(ap, msg);
  LogPciMessage(spdlog::level::warn, msg, ap);
  va_end(ap);
}

void OnPciDebug(char* msg, ...) {
  va_list ap;
  va_start(ap, msg);
  LogPciMessage(spdlog::level::trace, msg, ap);
  va_end(ap);
}

void LookupName(pci_access* acc, char* out, int flags, unsigned vendor, unsigned device) {
  constexpr int kModes = PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB;
  char* name =
      pci_lookup_name(acc, out, static_cast<int>(kNameSize), flags | kModes, vendor, device);
  if (name == nullptr) {
    out[0] = '\0';
  } else if (name != out) {
    std::snprintf(out, kNameSize, "%s", name);
  }
}

// Every call in here may longjmp to RunScan.
void ScanAll(ScanState* st, pci_access* acc, bool with_names) {
  pci_init(acc);
  pci_scan_bus(acc);
  for (pci_dev* d = acc->devices; d != nullptr; d = d->next) {
    // Only what we use: IRQ and resources would make `irq`/`resource` mandatory.
    pci_fill_info(d, PCI_FILL_IDENT | PCI_FILL_CLASS);
    RawIdent r;
    std::memset(&r, 0, sizeof r);
    r.domain = d->domain;
    r.bus = d->bus;
    r.dev = d->dev;
    r.func = d->func;
    r.vendor = d->vendor_id;
    r.device = d->device_id;
    r.device_class = d->device_class;
    if (with_names) {
      LookupName(acc, r.vendor_name, PCI_LOOKUP_VENDOR, d->vendor_id, 0);
      LookupName(acc, r.device_name, PCI_LOOKUP_DEVICE, d->vendor_id, d->device_id);
    }
    st->out->push_back(r);
  }
}

bool RunScan(ScanState* st, pci_access* acc, bool with_names) {
  if (setjmp(st->jump) != 0) return false;
  ScanAll(st, acc, with_names);
  return true;
}

// Names only: every call in here may longjmp to RunLookup.
void LookupAll(pci_access* acc, std::vector<RawIdent>* idents) {
  for (RawIdent& r : *idents) {
    LookupName(acc, r.vendor_name, PCI_LOOKUP_VENDOR, r.vendor, 0);
    LookupName(acc, r.device_name, PCI_LOOKUP_DEVICE, r.vendor, r.device);
  }
}

bool RunLookup(ScanState* st, pci_access* acc, std::vector<RawIdent>* idents) {
  if (setjmp(st->jump) != 0) return false;
  LookupAll(acc, idents);
  return true;
}

// A pci_access that reads nothing but what it is told: no ID cache
// ($HOME/.pciids-cache, which libpci reads by default, PCI_LOOKUP_CACHE, for
// an ID its list lacks), no network, no udev hwdb (LookupName). Results must
// not depend on the machine that reads a tree.
pci_access* NewAccess() {
  pci_access* acc = pci_alloc();
  if (acc == nullptr) return nullptr;
  acc->error = OnPciError;
  acc->warning = OnPciWarning;
  acc->debug = OnPciDebug;
  acc->debugging = spdlog::should_log(spdlog::level::trace) ? 1 : 0;
  acc->id_lookup_mode = 0;
  return acc;
}

}  // namespace

StatusOr<std::vector<PciIdent>> ScanPci(const PciScanOptions& options) {
  std::vector<RawIdent> raw;
  ScanState st;
  st.error[0] = '\0';
  st.out = &raw;

  pci_access* acc = NewAccess();
  if (acc == nullptr) return InternalError("libpci: pci_alloc failed");
  acc->method = PCI_ACCESS_SYS_BUS_PCI;
  // libpci copies parameter values; the name list path must outlive `acc`.
  pci_set_param(acc, const_cast<char*>("sysfs.path"),
                const_cast<char*>(options.sysfs_path.c_str()));
  const bool with_names = !options.ids_path.empty();
  if (with_names) pci_set_name_list_path(acc, const_cast<char*>(options.ids_path.c_str()), 0);

  ScanState* outer = current_scan;
  current_scan = &st;
  bool ok = RunScan(&st, acc, with_names);
  current_scan = outer;
  pci_cleanup(acc);
  if (!ok) {
    size_t n = std::strlen(st.error);
    while (n > 0 && (st.error[n - 1] == '\n' || st.error[n - 1] == ' ')) st.error[--n] = '\0';
    return FailedPreconditionError("scan PCI functions under " + options.sysfs_path +
                                   " <- libpci: " + st.error);
  }

  std::vector<PciIdent> out;
  out.reserve(raw.size());
  for (const RawIdent& r : raw) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%04x:%02x:%02x.%u", static_cast<unsigned>(r.domain), r.bus,
                  r.dev, r.func);
    PciIdent id;
    id.address = addr;
    id.vendor = static_cast<uint16_t>(r.vendor);
    id.device = static_cast<uint16_t>(r.device);
    id.device_class = static_cast<uint16_t>(r.device_class);
    id.vendor_name = r.vendor_name;
    id.device_name = r.device_name;
    out.push_back(std::move(id));
  }
  return out;
}

Status LookupPciNames(const std::string& ids_path, std::vector<PciIdent>* idents) {
  if (ids_path.empty() || idents->empty()) return OkStatus();
  std::vector<RawIdent> raw(idents->size());
  for (size_t i = 0; i < idents->size(); ++i) {
    std::memset(&raw[i], 0, sizeof raw[i]);
    raw[i].vendor = (*idents)[i].vendor;
    raw[i].device = (*idents)[i].device;
  }
  ScanState st;
  st.error[0] = '\0';
  st.out = nullptr;
  pci_access* acc = NewAccess();
  if (acc == nullptr) return InternalError("libpci: pci_alloc failed");
  // libpci keeps the pointer: `ids_path` outlives `acc`.
  pci_set_name_list_path(acc, const_cast<char*>(ids_path.c_str()), 0);
  ScanState* outer = current_scan;
  current_scan = &st;
  bool ok = RunLookup(&st, acc, &raw);
  current_scan = outer;
  pci_cleanup(acc);
  if (!ok) {
    size_t n = std::strlen(st.error);
    while (n > 0 && (st.error[n - 1] == '\n' || st.error[n - 1] == ' ')) st.error[--n] = '\0';
    return FailedPreconditionError("PCI names from " + ids_path + " <- libpci: " + st.error);
  }
  for (size_t i = 0; i < idents->size(); ++i) {
    (*idents)[i].vendor_name = raw[i].vendor_name;
    (*idents)[i].device_name = raw[i].device_name;
  }
  return OkStatus();
}

}  // namespace provisioner
