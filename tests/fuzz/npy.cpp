// Fuzz harness: the .npy reader. Bytes are written to a temporary file, then readNpy
// (runtime/Memory.h) reads it: a std::runtime_error with the reason is the only allowed failure.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "runtime/Memory.h"

namespace {

const std::string& tempPath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/tl_fuzz_npy_" + std::to_string(getpid()) + ".npy";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tempPath();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
    tl::Buffer buf = tl::readNpy(path);
    (void)buf;
  } catch (const std::runtime_error&) {
  }
  std::remove(path.c_str());
  return 0;
}
