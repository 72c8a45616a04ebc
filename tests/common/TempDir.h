// A fresh directory under the system temp dir, removed with everything in it when the test ends.
// The one fixture the suites share (tests/io, tests/ptx): TempDir dir("tl-cache-test");
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace tl::test {

// "<temp>/tl-test.<pid>.<n>/<stem><ext>": a path no other process and no other call of this
// process uses (ctest runs the tests of one executable as parallel processes, and two builds'
// tests may run on one machine at once), whose file name stays <stem><ext> for the messages
// that quote it.
inline std::string uniqueTempFile(const std::string& stem, const std::string& ext = ".tl") {
  static std::atomic<int> n{0};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tl-test." + std::to_string(getpid()) + "." + std::to_string(n++));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return (dir / (stem + ext)).string();
}

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tl-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // A file in it: dir / "x.npy".
  std::string operator/(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

}  // namespace tl::test
