// FileRead: the one way tilelab reads a file from disk — bounded, and regular files only.
//
// Every file tilelab reads (a kernel source, an --input/--expect .npy, a JIT cache manifest or
// payload, a tl-ptx results file, a JSON description) goes through readFileBounded(), which
//   1. opens the path with O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC (O_NOFOLLOW on request),
//      so opening a FIFO with no writer returns at once instead of blocking forever;
//   2. fstat()s the opened descriptor (not the path: no check-then-open race) and refuses
//      anything that is not a regular file — a FIFO, a character device such as /dev/zero, a
//      block device, a socket, a directory — naming what it is;
//   3. refuses a file whose size is over its kind's limit before reading a byte, then reads at
//      most limit + 1 bytes (a file that grows while it is read, or a /proc file whose size
//      says 0, is still caught), growing the string as data arrives, never by the limit.
// A failure throws FileReadError naming the file and the reason:
//   cannot read 'kernels/x.tl': it is a character device, not a regular file
//   cannot read 'big.tl': it is 6291456 bytes, over the 4 MiB limit for a kernel source
//
// The limits, one per kind of file, are stated here and nowhere else (kFileLimits); the .npy
// data limit is the CPU stages' largest buffer (Memory::kMaxBufferBytes, checked by a
// static_assert in lib/runtime/Npy.cpp). This lives in lib/ir, the lowest library, because
// SourceFile::load (lib/ir/Diagnostics.cpp) needs it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tl {

// What a file is, which decides its size limit and how errors name it.
enum class FileKind {
  KernelSource,   // a .tl kernel (SourceFile::load)
  Npy,            // an --input / --expect .npy array (readNpy)
  CacheManifest,  // a JIT cache entry's manifest.json
  CachePayload,   // a JIT cache entry's kernel.ptx / kernel.cubin, or ptxas' cubin and log
  Results,        // a tl-ptx results file (--measured)
  Json,           // a small JSON description: a GPU model, a lab spec
};

struct FileLimit {
  FileKind kind;
  uint64_t maxBytes;
  const char* what;  // how messages name the kind: "a kernel source"
};

// The .npy limits: the data is at most the largest CPU buffer; the header (magic, version,
// length and the dict: numpy writes under 200 bytes, a version 1.0 header is under 64 KiB) at
// most kNpyMaxHeaderBytes.
inline constexpr uint64_t kNpyMaxDataBytes = uint64_t(1) << 30;
inline constexpr uint64_t kNpyMaxHeaderBytes = uint64_t(1) << 20;

inline constexpr FileLimit kFileLimits[] = {
    {FileKind::KernelSource, uint64_t(4) << 20, "a kernel source"},
    {FileKind::Npy, kNpyMaxDataBytes + kNpyMaxHeaderBytes, "a .npy file"},
    {FileKind::CacheManifest, uint64_t(1) << 20, "a JIT cache manifest"},
    {FileKind::CachePayload, uint64_t(256) << 20, "a JIT cache PTX or cubin"},
    {FileKind::Results, uint64_t(16) << 20, "a tl-ptx results file"},
    {FileKind::Json, uint64_t(4) << 20, "a JSON description"},
};

const FileLimit& fileLimit(FileKind kind);

// "4 MiB", "1025 MiB", "512 KiB", "100 bytes": a limit as the messages say it.
std::string formatByteLimit(uint64_t bytes);

struct FileReadError : std::runtime_error {
  std::string path;
  std::string reason;  // "it is a FIFO (named pipe), not a regular file"
  FileReadError(std::string p, std::string r);
};

struct ReadOptions {
  // Refuse a symbolic link as the last path component (the JIT cache: it writes only plain
  // files, so a link in an entry is not its own).
  bool noFollow = false;
  // A tighter limit than the kind's (0: the kind's), e.g. the size a cache manifest recorded.
  uint64_t maxBytes = 0;
};

// The whole file; throws FileReadError.
std::string readFileBounded(const std::string& path, FileKind kind, const ReadOptions& options = {});

// Why a read failed, for callers that react to the cause (the JIT cache: a missing file is a
// miss, a payload longer than its manifest says is "the wrong size").
struct ReadFailure {
  enum Cause {
    CannotOpen,       // open(2) failed; `error` is its errno (ENOENT: no such file)
    NotRegularFile,   // a FIFO, device, socket, directory (or a symbolic link with noFollow)
    TooLarge,         // over the limit
    ReadFailed,       // read(2) failed; `error` is its errno
  } cause = CannotOpen;
  int error = 0;
  std::string reason;  // the text FileReadError carries, without the path
};

// The same without throwing: nullopt with *failure (may be null) saying why.
std::optional<std::string> tryReadFileBounded(const std::string& path, FileKind kind, ReadFailure* failure,
                                              const ReadOptions& options = {});

}  // namespace tl
