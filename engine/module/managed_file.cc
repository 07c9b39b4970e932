#include "engine/module/managed_file.h"

#include <cctype>
#include <cerrno>
#include <string>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

using nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Bytes a JSON document (plan, journal) holds as a string: valid UTF-8.
bool JsonSafe(const std::string& bytes) {
  try {
    (void)json(bytes).dump();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

std::string ToHex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::optional<std::string> FromHex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

const json* CaptureOf(const Change& c, std::string_view path) {
  if (!c.detail.is_object()) return nullptr;
  auto it = c.detail.find(kRestoreFileKey);
  if (it == c.detail.end() || !it->is_object()) return nullptr;
  if (it->value("path", std::string()) != path) return nullptr;
  return &*it;
}

// The capture's content; an error for a capture of the wrong shape.
StatusOr<std::string> ContentOf(const json& cap, const std::string& path) {
  if (cap.contains("content") && cap["content"].is_string())
    return cap["content"].get<std::string>();
  if (cap.contains("contentHex") && cap["contentHex"].is_string()) {
    if (auto b = FromHex(cap["contentHex"].get<std::string>())) return *b;
  }
  return InvalidArgumentError("the recorded content of " + path + " is malformed");
}

bool HasOwnership(const json& cap) {
  return cap.contains("mode") && cap["mode"].is_number_unsigned() && cap.contains("uid") &&
         cap["uid"].is_number_unsigned() && cap.contains("gid") && cap["gid"].is_number_unsigned();
}

}  // namespace

bool WrittenByProvisioner(std::string_view content) {
  for (const std::string& line : SplitLines(content)) {
    if (line.empty()) continue;
    if (line[0] != '#') return false;  // the leading comment block ended
    if (Lower(line).find("written by provisioner") != std::string::npos) return true;
  }
  return false;
}

void DeclareManagedFile(Change& c, const std::string& path,
                        const std::optional<std::string>& current, const std::string& field,
                        PlanSink& sink) {
  DeclareEditedFile(c, path);
  if (current && !WrittenByProvisioner(*current)) {
    sink.Warning(field, path +
                            " exists and was not written by provisioner: taken over (apply "
                            "replaces it; a rollback restores its bytes, mode and owner)");
  }
}

void DeclareEditedFile(Change& c, const std::string& path) {
  if (!c.detail.is_object()) c.detail = json::object();
  c.detail[kManagedFileKey] = path;
}

StatusOr<json> CaptureManagedFile(const HostFs& fs, const Change& c) {
  if (!c.detail.is_object() || !c.detail.contains(kManagedFileKey)) return json();
  if (!c.detail[kManagedFileKey].is_string()) {
    return InvalidArgumentError(c.id + ": " + kManagedFileKey + " must be a path");
  }
  const std::string path = c.detail[kManagedFileKey].get<std::string>();
  json cap = {{"path", path}};
  auto text = fs.ReadFile(path);
  if (!text.ok()) {
    if (text.status().err() != ENOENT && text.status().err() != ENOTDIR) {
      return text.status().WithContext("record " + path + " for a rollback");
    }
    cap["exists"] = false;
    return cap;
  }
  if (text->size() > kMaxManagedFileBytes) {
    return FailedPreconditionError(path + " holds " + std::to_string(text->size()) +
                                   " bytes, more than a rollback records (" +
                                   std::to_string(kMaxManagedFileBytes) + "): not replaced");
  }
  cap["exists"] = true;
  if (JsonSafe(*text)) {
    cap["content"] = *text;
  } else {
    cap["contentHex"] = ToHex(*text);
  }
  auto own = fs.StatFile(path);
  if (own.ok()) {
    cap["mode"] = own->mode;
    cap["uid"] = own->uid;
    cap["gid"] = own->gid;
  } else if (own.status().err() != ENOTSUP) {
    return own.status().WithContext("record " + path + " for a rollback");
  }
  return cap;
}

void AttachRestore(Change& inverse, const json& capture) {
  if (!inverse.detail.is_object()) return;
  inverse.detail.erase(kRestoreFileKey);
  if (capture.is_object()) inverse.detail[kRestoreFileKey] = capture;
}

bool RestoresManagedFile(const Change& c, std::string_view path) {
  return CaptureOf(c, path) != nullptr;
}

Status WriteManagedFile(HostFs& fs, const Change& c, const std::string& path,
                        const std::optional<std::string>& content, int mode) {
  if (c.detail.is_object() && c.detail.contains(kRestoreFileKey) && !CaptureOf(c, path)) {
    return InvalidArgumentError(c.id + ": the recorded file is not " + path + ", refused");
  }
  if (const json* cap = CaptureOf(c, path)) {
    if (!cap->value("exists", false)) {
      if (!fs.Exists(path)) return OkStatus();
      return fs.RemoveFile(path).WithContext("restore " + path + " (absent before)");
    }
    ASSIGN_OR_RETURN(std::string bytes, ContentOf(*cap, path));
    const int want_mode =
        HasOwnership(*cap) ? static_cast<int>((*cap)["mode"].get<uint32_t>()) : 0644;
    RETURN_IF_ERROR(fs.WriteFileAtomic(path, bytes, want_mode).WithContext("restore " + path));
    if (!HasOwnership(*cap)) return OkStatus();
    const uint32_t uid = (*cap)["uid"].get<uint32_t>(), gid = (*cap)["gid"].get<uint32_t>();
    auto now = fs.StatFile(path);
    if (now.ok() && now->uid == uid && now->gid == gid) return OkStatus();
    return fs.SetOwner(path, uid, gid).WithContext("restore " + path);
  }
  if (!content) {
    if (!fs.Exists(path)) return OkStatus();
    return fs.RemoveFile(path).WithContext("remove " + path);
  }
  return fs.WriteFileAtomic(path, *content, mode).WithContext("write " + path);
}

Status VerifyManagedFileRestored(const HostFs& fs, const Change& c, const std::string& path) {
  const json* cap = CaptureOf(c, path);
  if (cap == nullptr) return InternalError(c.id + ": no recorded " + path + " to verify");
  const std::string label = c.field_path.empty() ? c.id : c.field_path;
  auto now = fs.ReadFile(path);
  if (!cap->value("exists", false)) {
    if (!now.ok() && now.status().err() == ENOENT) return OkStatus();
    return FailedPreconditionError(label + ": " + path + " was absent before and is still there");
  }
  if (!now.ok()) return now.status().WithContext(label);
  ASSIGN_OR_RETURN(std::string bytes, ContentOf(*cap, path));
  if (*now != bytes) {
    return FailedPreconditionError(label + ": " + path + " does not hold its earlier bytes");
  }
  if (!HasOwnership(*cap)) return OkStatus();
  auto own = fs.StatFile(path);
  if (!own.ok()) return own.status().WithContext(label);
  if (own->mode != (*cap)["mode"].get<uint32_t>() || own->uid != (*cap)["uid"].get<uint32_t>() ||
      own->gid != (*cap)["gid"].get<uint32_t>()) {
    return FailedPreconditionError(label + ": " + path +
                                   " does not have its earlier mode and owner");
  }
  return OkStatus();
}

Status VerifyManagedFile(const HostFs& fs, const Change& c, const std::string& path,
                         const ManagedFileMismatch& mismatch) {
  if (RestoresManagedFile(c, path)) return VerifyManagedFileRestored(fs, c, path);
  const std::string label = c.field_path.empty() ? c.id : c.field_path;
  auto now = fs.ReadFile(path);
  if (c.after.is_null()) {
    if (!now.ok() && now.status().err() == ENOENT) return OkStatus();
    return FailedPreconditionError(label + ": " + path + " still exists");
  }
  if (!now.ok()) return now.status().WithContext(label);
  if (std::optional<std::string> differs = mismatch(*now)) {
    return FailedPreconditionError(label + ": " + path + " " + *differs);
  }
  return OkStatus();
}

}  // namespace provisioner
