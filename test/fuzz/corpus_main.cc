// Runs a fuzz target over its checked-in corpus as an ordinary test (no
// libFuzzer needed): every file under the corpus directories given as
// arguments (runfiles paths) goes through LLVMFuzzerTestOneInput once.
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    std::string dir = std::string(srcdir ? srcdir : ".") + "/provisioner/" + argv[i];
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
      std::fprintf(stderr, "cannot open corpus %s\n", dir.c_str());
      return 1;
    }
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(dir + "/" + e->d_name, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string s = ss.str();
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
      ++files;
    }
    ::closedir(d);
  }
  std::printf("ran %d corpus inputs\n", files);
  return files > 0 ? 0 : 1;
}
