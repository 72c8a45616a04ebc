// The bounded reader (the contract is in FileRead.h).
#include "ir/FileRead.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tl {

namespace {

// What a non-regular file is, for the message.
std::string describeType(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a plain file";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

const FileLimit& fileLimit(FileKind kind) {
  for (const FileLimit& l : kFileLimits)
    if (l.kind == kind) return l;
  return kFileLimits[0];  // unreachable: every kind has a row
}

std::string formatByteLimit(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 20) && bytes % (uint64_t(1) << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (uint64_t(1) << 10) && bytes % (uint64_t(1) << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

FileReadError::FileReadError(std::string p, std::string r)
    : std::runtime_error("cannot read '" + p + "': " + r), path(std::move(p)), reason(std::move(r)) {}

std::optional<std::string> tryReadFileBounded(const std::string& path, FileKind kind, ReadFailure* failure,
                                              const ReadOptions& options) {
  auto fail = [&](ReadFailure::Cause cause, std::string reason, int error = 0) -> std::optional<std::string> {
    if (failure) *failure = ReadFailure{cause, error, std::move(reason)};
    return std::nullopt;
  };
  const FileLimit& limit = fileLimit(kind);
  const uint64_t maxBytes = options.maxBytes ? std::min(options.maxBytes, limit.maxBytes) : limit.maxBytes;
  const std::string limitText = "over the " + formatByteLimit(maxBytes) + " limit for " + limit.what;

  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (options.noFollow) flags |= O_NOFOLLOW;
  Fd f{::open(path.c_str(), flags)};
  if (f.fd < 0) {
    int e = errno;
    if (e == ELOOP && options.noFollow)
      return fail(ReadFailure::NotRegularFile, "it is a symbolic link, not a regular file", e);
    // Some kinds cannot even be opened (a socket: ENXIO); say what they are rather than errno's text.
    struct stat st{};
    if (e != ENOENT && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return fail(ReadFailure::NotRegularFile, "it is " + describeType(st.st_mode) + ", not a regular file", e);
    return fail(ReadFailure::CannotOpen, std::strerror(e), e);
  }
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) return fail(ReadFailure::ReadFailed, std::strerror(errno), errno);
  if (!S_ISREG(st.st_mode))
    return fail(ReadFailure::NotRegularFile, "it is " + describeType(st.st_mode) + ", not a regular file");
  if (st.st_size < 0 || uint64_t(st.st_size) > maxBytes)
    return fail(ReadFailure::TooLarge, "it is " + std::to_string(st.st_size) + " bytes, " + limitText);

  // Read at most maxBytes + 1: one byte more than allowed proves the file is too long even when
  // its size said otherwise (it grew, or it is a /proc-like file that reports 0).
  std::string data;
  data.reserve(size_t(st.st_size) + 1);
  char chunk[1 << 16];
  while (true) {
    size_t want = size_t(std::min<uint64_t>(sizeof(chunk), maxBytes + 1 - data.size()));
    ssize_t n = ::read(f.fd, chunk, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ReadFailure::ReadFailed, std::strerror(errno), errno);
    }
    if (n == 0) break;
    data.append(chunk, size_t(n));
    if (data.size() > maxBytes)
      return fail(ReadFailure::TooLarge, "it has more than " + std::to_string(maxBytes) + " bytes, " + limitText);
  }
  return data;
}

std::string readFileBounded(const std::string& path, FileKind kind, const ReadOptions& options) {
  ReadFailure why;
  auto data = tryReadFileBounded(path, kind, &why, options);
  if (!data) throw FileReadError(path, why.reason);
  return std::move(*data);
}

}  // namespace tl
