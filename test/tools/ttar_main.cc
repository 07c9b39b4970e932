// ttar: materializes and captures host trees kept as ttar text archives.
//   ttar -x ARCHIVE -C DIR [--strip N]    extract
//   ttar -c DIR -f ARCHIVE                create (sorted, deterministic)
//   ttar -c DIR                           create to stdout
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "test/support/ttar.h"

namespace {

int Usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: ttar -x ARCHIVE -C DIR [--strip N]\n"
               "       ttar -c DIR [-f ARCHIVE]\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, archive, dir;
  int strip = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") return Usage(0);
    if (a == "-x" && mode.empty() && next(&archive)) {
      mode = "x";
    } else if (a == "-c" && mode.empty() && next(&dir)) {
      mode = "c";
    } else if (a == "-C" && next(&dir)) {
    } else if (a == "-f" && next(&archive)) {
    } else if (a == "--strip" || a == "--strip-components") {
      std::string n;
      if (!next(&n)) return Usage(1);
      char* end = nullptr;
      strip = static_cast<int>(std::strtol(n.c_str(), &end, 10));
      if (n.empty() || *end != '\0' || strip < 0) return Usage(1);
    } else {
      std::fprintf(stderr, "ttar: unexpected argument '%s'\n", a.c_str());
      return Usage(1);
    }
  }
  if (mode == "x") {
    if (dir.empty()) return Usage(1);
    provisioner::Status s = provisioner::testing::ExtractTtar(archive, dir, strip);
    if (!s.ok()) {
      std::fprintf(stderr, "ttar: %s\n", s.message().c_str());
      return 1;
    }
    return 0;
  }
  if (mode == "c") {
    if (archive.empty() || archive == "-") {
      auto text = provisioner::testing::TreeToTtar(dir);
      if (!text.ok()) {
        std::fprintf(stderr, "ttar: %s\n", text.status().message().c_str());
        return 1;
      }
      std::fwrite(text->data(), 1, text->size(), stdout);
      return 0;
    }
    provisioner::Status s = provisioner::testing::WriteTtar(dir, archive);
    if (!s.ok()) {
      std::fprintf(stderr, "ttar: %s\n", s.message().c_str());
      return 1;
    }
    return 0;
  }
  return Usage(1);
}
