// Reading files (ir/FileRead.h): every kind of file goes through one bounded reader that refuses
// FIFOs, devices, directories and sockets without blocking, refuses a file over its kind's limit
// before reading it, and never reads more than the limit plus one byte — checked on the reader
// itself, on SourceFile::load and readNpy (its two users in lib/), and on tl-block's command
// line. Anything that could block or fill memory without the fix runs in a child process with
// a time and an address-space limit, so the test fails instead of hanging or exhausting memory.
#include <gtest/gtest.h>

#include "runtime/Sanitizers.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "../common/InChild.h"
#include "../common/TempDir.h"
#include "ir/Diagnostics.h"
#include "ir/FileRead.h"
#include "runtime/Memory.h"

namespace fs = std::filesystem;
using namespace tl;

namespace {

using test::inChild;

// A fresh temporary directory per test (tests/common/TempDir.h), named "tl-io-test.*".
struct TempDir : test::TempDir {
  TempDir() : test::TempDir("tl-io-test") {}
};

void writeAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// The message `fn` throws ("" when it throws nothing).
std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// In a child: the message reading `path` as `kind` throws must contain `word`.
std::string refusedWith(const std::string& path, FileKind kind, const std::string& word) {
  std::string e = errorOf([&] { readFileBounded(path, kind); });
  if (e.find(word) == std::string::npos || e.find(path) == std::string::npos)
    return "expected an error naming " + path + " and '" + word + "', got: '" + e + "'";
  return "";
}

}  // namespace

TEST(BoundedRead, ReadsRegularFilesWhole) {
  TempDir dir;
  std::string binary("a\0b\r\n\xff", 6);
  writeAll(dir / "f", binary);
  EXPECT_EQ(readFileBounded(dir / "f", FileKind::KernelSource), binary);
  writeAll(dir / "empty", "");
  EXPECT_EQ(readFileBounded(dir / "empty", FileKind::KernelSource), "");
  // A symbolic link to a regular file is followed unless the caller says not to.
  fs::create_symlink(dir / "f", dir / "link");
  EXPECT_EQ(readFileBounded(dir / "link", FileKind::KernelSource), binary);
  ReadOptions noFollow;
  noFollow.noFollow = true;
  EXPECT_NE(errorOf([&] { readFileBounded(dir / "link", FileKind::KernelSource, noFollow); }).find("symbolic link"),
            std::string::npos);
}

TEST(BoundedRead, RefusesWhatIsNotARegularFile) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_directory(dir / "sub");
  fs::create_symlink("/dev/zero", dir / "zero-link");
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sockPath = dir / "sock";
  ASSERT_LT(sockPath.size(), sizeof(addr.sun_path));
  std::strcpy(addr.sun_path, sockPath.c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // Without the fix a FIFO with no writer blocks open() forever and /dev/zero fills memory.
  EXPECT_EQ(inChild([&] { return refusedWith(dir / "fifo", FileKind::KernelSource, "it is a FIFO (named pipe), not a regular file"); }), "");
  EXPECT_EQ(inChild([&] { return refusedWith("/dev/zero", FileKind::Npy, "it is a character device, not a regular file"); }), "");
  EXPECT_EQ(inChild([&] { return refusedWith(dir / "zero-link", FileKind::CacheManifest, "character device"); }), "");
  EXPECT_EQ(inChild([&] { return refusedWith(dir / "sub", FileKind::Results, "it is a directory"); }), "");
  EXPECT_EQ(inChild([&] { return refusedWith(sockPath, FileKind::Json, "socket"); }), "");
  close(sock);
  std::string e = errorOf([&] { readFileBounded(dir / "missing", FileKind::KernelSource); });
  EXPECT_EQ(e, "cannot read '" + (dir / "missing") + "': No such file or directory");
}

TEST(BoundedRead, EveryKindHasItsLimit) {
  TempDir dir;
  for (const FileLimit& l : kFileLimits) {
    SCOPED_TRACE(l.what);
    EXPECT_GT(l.maxBytes, 0u);
    EXPECT_EQ(&fileLimit(l.kind), &l);
  }
  EXPECT_EQ(fileLimit(FileKind::KernelSource).maxBytes, uint64_t(4) << 20);
  EXPECT_EQ(fileLimit(FileKind::Npy).maxBytes, Memory::kMaxBufferBytes + kNpyMaxHeaderBytes);
  // A source of exactly the limit is read; one byte more is refused before it is read.
  const uint64_t limit = fileLimit(FileKind::KernelSource).maxBytes;
  writeAll(dir / "at-limit.tl", std::string(limit, '#'));
  EXPECT_EQ(readFileBounded(dir / "at-limit.tl", FileKind::KernelSource).size(), limit);
  writeAll(dir / "over.tl", std::string(limit + 1, '#'));
  EXPECT_EQ(errorOf([&] { readFileBounded(dir / "over.tl", FileKind::KernelSource); }),
            "cannot read '" + (dir / "over.tl") + "': it is 4194305 bytes, over the 4 MiB limit for a kernel source");
  // A sparse file that claims 64 GiB is refused from its size alone (no read, no allocation).
  { std::ofstream(dir / "sparse.npy").close(); }
  fs::resize_file(dir / "sparse.npy", uintmax_t(64) << 30);
  EXPECT_EQ(inChild([&] { return refusedWith(dir / "sparse.npy", FileKind::Npy, "over the 1025 MiB limit for a .npy file"); }), "");
  // A caller's tighter limit.
  ReadOptions tight;
  tight.maxBytes = 10;
  writeAll(dir / "eleven", std::string(11, 'x'));
  EXPECT_NE(errorOf([&] { readFileBounded(dir / "eleven", FileKind::CachePayload, tight); }).find("over the 10 bytes limit"),
            std::string::npos);
  EXPECT_EQ(formatByteLimit(1536), "1536 bytes");
  EXPECT_EQ(formatByteLimit(2048), "2 KiB");
}

TEST(BoundedRead, ReadsAtMostTheLimitPlusOneByte) {
  // A /proc file is "regular" with a size of 0 (its length is known only by reading it): the
  // limit must still hold while reading, as for a file that grows while it is read.
  ASSERT_EQ(fs::file_size("/proc/self/status"), 0u);
  ReadOptions tight;
  tight.maxBytes = 16;
  ReadFailure why;
  EXPECT_FALSE(tryReadFileBounded("/proc/self/status", FileKind::Json, &why, tight));
  EXPECT_EQ(why.cause, ReadFailure::TooLarge);
  EXPECT_EQ(why.reason, "it has more than 16 bytes, over the 16 bytes limit for a JSON description");
  EXPECT_NE(readFileBounded("/proc/self/status", FileKind::Json).find("Pid:"), std::string::npos);
  EXPECT_FALSE(tryReadFileBounded("/nonexistent/x", FileKind::Json, &why));
  EXPECT_EQ(why.cause, ReadFailure::CannotOpen);
  EXPECT_EQ(why.error, ENOENT);
}

TEST(BoundedRead, SourceFileLoadIsBounded) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "k.tl").c_str(), 0600), 0);
  auto loadFails = [](const std::string& path, const std::string& word) {
    std::string e = errorOf([&] { SourceFile::load(path); });
    return e.find(word) != std::string::npos && e.find(path) != std::string::npos ? "" : "got: '" + e + "'";
  };
  EXPECT_EQ(inChild([&] { return loadFails("/dev/zero", "character device"); }), "");
  EXPECT_EQ(inChild([&] { return loadFails(dir / "k.tl", "FIFO"); }), "");
  writeAll(dir / "big.tl", std::string((5 << 20), ' '));
  EXPECT_EQ(loadFails(dir / "big.tl", "over the 4 MiB limit for a kernel source"), "");
  writeAll(dir / "ok.tl", "a\nb\n");
  EXPECT_EQ(SourceFile::load(dir / "ok.tl")->line(2), "b");
}

TEST(BoundedRead, ReadNpyIsBounded) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "x.npy").c_str(), 0600), 0);
  auto npyFails = [](const std::string& path, const std::string& word) {
    std::string e = errorOf([&] { readNpy(path); });
    return e.find(word) != std::string::npos && e.find(path) != std::string::npos ? "" : "got: '" + e + "'";
  };
  EXPECT_EQ(inChild([&] { return npyFails("/dev/zero", "character device"); }), "");
  EXPECT_EQ(inChild([&] { return npyFails(dir / "x.npy", "FIFO"); }), "");
  // A version 2.0 header may say 4 GiB; one over kNpyMaxHeaderBytes is refused.
  uint32_t len = uint32_t(kNpyMaxHeaderBytes) + 64;
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  for (int k = 0; k < 4; ++k) v2 += char((len >> (8 * k)) & 0xff);
  v2 += "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  v2.append(12 + len - v2.size() - 1, ' ');
  v2 += '\n';
  v2 += std::string(4, '\0');
  writeAll(dir / "long-header.npy", v2);
  EXPECT_EQ(npyFails(dir / "long-header.npy", "over the 1 MiB limit"), "");
}

// The stage tools report a file they cannot read as `path: error: ...` and exit 1, without
// blocking or filling memory.
TEST(BoundedRead, StageToolsRefuseDevicesAndFifos) {
  std::string exe = std::string(TL_BINARY_DIR) + "/stages/block/tl-block";
  if (!fs::exists(exe)) GTEST_SKIP() << exe << " is not built";
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo.tl").c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((dir / "fifo.npy").c_str(), 0600), 0);
  auto run = [&](const std::string& args, int* status) {
    // A 2 GiB cap (ulimit -v, or ASan's RSS limit): without the fix /dev/zero grows until it.
    std::string cmd = "cd " + dir.path() + " && timeout 60 sh -c '" + shellMemoryLimit(2048) + "exec " + exe + " " +
                      args + "' > log.txt 2>&1";
    *status = std::system(cmd.c_str());
    std::ifstream log(dir / "log.txt");
    return std::string(std::istreambuf_iterator<char>(log), {});
  };
  int status = 0;
  std::string log = run("/dev/zero", &status);
  EXPECT_EQ(WEXITSTATUS(status), 1) << log;
  EXPECT_NE(log.find("/dev/zero: error: it is a character device, not a regular file"),
            std::string::npos)
      << log;
  log = run("fifo.tl", &status);
  EXPECT_EQ(WEXITSTATUS(status), 1) << log;  // 124 when it blocks
  EXPECT_NE(log.find("fifo.tl: error: it is a FIFO (named pipe), not a regular file"),
            std::string::npos)
      << log;
  // A launch buffer read from a file (@launch or --set x_ptr=file(...)).
  std::string kernel = std::string(TL_SOURCE_DIR) + "/kernels/vector_add.tl";
  for (const char* npy : {"/dev/zero", "fifo.npy"}) {
    log = run(kernel + " --set \"x_ptr=file(\\\"" + npy + "\\\")\"", &status);
    EXPECT_EQ(WEXITSTATUS(status), 1) << log;
    EXPECT_NE(log.find(std::string("cannot read '") + npy + "': it is a"), std::string::npos) << log;
  }
}
