// Atomic file writes (contract in AtomicFile.h).
#include "runtime/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tl {

namespace fs = std::filesystem;

bool writeFileAtomic(const std::string& path, std::string_view data, std::string* error) {
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmpl = (dir / (".tmp-" + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  auto fail = [&](const std::string& what) {
    if (error) *error = "cannot write " + path + ": " + what + ": " + std::strerror(errno);
    return false;
  };
  int fd = mkstemp(name.data());
  if (fd < 0) return fail("mkstemp");
  // mkstemp creates the file 0600; a cache or results file is as readable as any other.
  fchmod(fd, 0644);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(name.data());
      errno = saved;
      return fail("write");
    }
    done += size_t(w);
  }
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(name.data());
    errno = saved;
    return fail("close");
  }
  if (std::rename(name.data(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(name.data());
    errno = saved;
    return fail("rename");
  }
  return true;
}

std::string defaultCacheRoot() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (std::string d = env("TL_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return (fs::path(d) / "tilelab").string();
  if (std::string d = env("HOME"); !d.empty()) return (fs::path(d) / ".cache" / "tilelab").string();
  return ".tilelab-cache";
}

}  // namespace tl
