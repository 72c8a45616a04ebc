// A fresh directory under the system temp dir, removed with everything in it when the test ends.
// The one fixture the suites share (tests/io, tests/ptx): TempDir dir("tl-cache-test");
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace tl::test {

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
