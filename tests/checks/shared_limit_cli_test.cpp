// Issue 12, section 6, through the executables: a kernel that needs more shared memory than one
// block may use on the target GPU is a located error (`file:line:col: error: ...`, the source
// line and a caret under the dot that asked for it, exit code 1) in tl-thread and tl-ptx, with
// the bytes, the limit and the GPU, instead of ptxas' "uses too much shared data"; tl-ptx's
// --gpu picks the limit; a 104 KB kernel compiles in tl-ptx to dynamic shared memory (without a
// driver the GPU step is skipped and the PTX written).
//
// The kernel is kernels/matmul.tl with its tiles sized by --set: dot stages both operands in
// shared memory, (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) x 4 bytes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../common/TempDir.h"

namespace fs = std::filesystem;

namespace tl {
namespace {

struct ToolRun {
  int status = -1;
  std::string out;  // stdout and stderr
};

// Runs build/stages/<tool> in a fresh directory (its out/ folders go there), without a driver
// and with a private JIT cache.
ToolRun run(const std::string& tool, const std::string& args) {
  test::TempDir dir("tl-smem-cli");
  std::string exe = std::string(TL_BINARY_DIR) + "/stages/" + tool;
  std::string cmd = "cd " + dir.path() + " && TL_LIBCUDA=/nonexistent/libcuda.so.1 TL_CACHE_DIR=" + dir.path() +
                    "/cache " + exe + " " + args + " > log.txt 2>&1";
  int st = std::system(cmd.c_str());
  ToolRun r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(fs::path(dir.path()) / "log.txt");
  r.out.assign(std::istreambuf_iterator<char>(f), {});
  if (fs::exists(fs::path(dir.path()) / "out/ptx/matmul.ptx")) {
    std::ifstream p(fs::path(dir.path()) / "out/ptx/matmul.ptx");
    r.out += "\n---- matmul.ptx ----\n" + std::string(std::istreambuf_iterator<char>(p), {});
  }
  return r;
}

std::string matmul() { return std::string(TL_SOURCE_DIR) + "/kernels/matmul.tl"; }
std::string tiles(int bm, int bn, int bk) {
  return " --set BLOCK_M=" + std::to_string(bm) + " --set BLOCK_N=" + std::to_string(bn) +
         " --set BLOCK_K=" + std::to_string(bk) + " --set M=64 --set N=64 --set K=" + std::to_string(bk);
}

// The line of `acc = dot(a, b, acc=acc)` and the caret line under its `dot`.
struct DotLine {
  int line = 0;
  std::string text, caret;
};
DotLine dotLine() {
  std::ifstream f(matmul());
  DotLine d;
  std::string text;
  for (int line = 1; std::getline(f, text); ++line) {
    size_t col = text.find("dot(a, b");
    if (col == std::string::npos) continue;
    d.line = line;
    d.text = text;
    d.caret = std::string(col, ' ') + "^";
    return d;
  }
  return d;
}

void expectLocatedError(const ToolRun& r, const std::string& bytes, const std::string& limit) {
  const DotLine d = dotLine();
  ASSERT_GT(d.line, 0);
  EXPECT_EQ(r.status, 1) << r.out;
  const size_t col = d.caret.size();
  EXPECT_NE(r.out.find("matmul.tl:" + std::to_string(d.line) + ":" + std::to_string(col) + ": error: dot needs " + bytes),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(limit), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    " + d.text + "\n    " + d.caret + "\n"), std::string::npos) << "source line and caret\n"
                                                                                   << r.out;
  EXPECT_EQ(r.out.find("ptxas"), std::string::npos) << "no ptxas message\n" << r.out;
  EXPECT_EQ(r.out.find("internal compiler error"), std::string::npos) << r.out;
}

// 576 KB (a 320 KB transposed, padded tile of a and a 256 KB tile of b) is over the H200's 227 KB:
// located error in both tools.
TEST(SharedLimitCli, OverTheLimitIsALocatedErrorInTlThreadAndTlPtx) {
  for (const char* tool : {"thread/tl-thread", "ptx/tl-ptx"}) {
    if (!fs::exists(std::string(TL_BINARY_DIR) + "/stages/" + tool)) GTEST_SKIP() << tool << " is not built";
    SCOPED_TRACE(tool);
    expectLocatedError(run(tool, matmul() + tiles(16, 16, 4096)), "589824 bytes (576 KB) of shared memory per block",
                       "more than the 232448 bytes (227 KB) one block may use on h200");
  }
}

// tl-ptx --gpu: 200 KB fits the H200 and compiles (dynamic), not the A100's 163 KB.
TEST(SharedLimitCli, TlPtxChecksTheGpuItIsGiven) {
  if (!fs::exists(std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx")) GTEST_SKIP() << "tl-ptx is not built";
  ToolRun h200 = run("ptx/tl-ptx", matmul() + tiles(64, 32, 512));
  EXPECT_EQ(h200.status, 0) << h200.out;
  EXPECT_NE(h200.out.find("204800 B shared, dynamic: over 48 KB"), std::string::npos) << h200.out;
  ToolRun a100 = run("ptx/tl-ptx", matmul() + tiles(64, 32, 512) + " --gpu a100 --arch sm_80");
  expectLocatedError(a100, "204800 bytes (200 KB)", "more than the 166912 bytes (163 KB) one block may use on a100");
  ToolRun bad = run("ptx/tl-ptx", matmul() + " --gpu no_such_gpu");
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("--gpu: GPU 'no_such_gpu'"), std::string::npos) << bad.out;
}

// 104 KB through tl-ptx without a driver: dynamic declaration in the PTX, ptxas (when installed)
// reports 0 static bytes, the GPU step is skipped, exit 0.
TEST(SharedLimitCli, TlPtxCompiles104KBToDynamicSharedMemory) {
  if (!fs::exists(std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx")) GTEST_SKIP() << "tl-ptx is not built";
  ToolRun r = run("ptx/tl-ptx", matmul() + tiles(32, 16, 512));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("106496 B shared, dynamic: over 48 KB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(".extern .shared .align 16 .b8 tl_shared[];"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU step skipped"), std::string::npos) << r.out;
  if (r.out.find("ptxas: not run") == std::string::npos)
    EXPECT_NE(r.out.find("0 B smem (static; + 106496 B dynamic at launch)"), std::string::npos) << r.out;
}

// wgmma is Hopper's: tl-ptx --arch sm_90a with another GPU's file, and tl-sim --wgmma on a GPU
// without warpgroup MMAs, are errors that say so (exit 1), before any kernel is compiled.
TEST(SharedLimitCli, WgmmaNeedsAHopperGpu) {
  const std::string tc = " " + std::string(TL_SOURCE_DIR) + "/kernels/matmul_tc.tl";
  if (fs::exists(std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx")) {
    ToolRun r = run("ptx/tl-ptx", tc + " --arch sm_90a --gpu a100 --no-check");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--arch sm_90a is Hopper's (compute capability 9.0), but --gpu a100"), std::string::npos) << r.out;
  }
  if (fs::exists(std::string(TL_BINARY_DIR) + "/stages/sim/tl-sim")) {
    ToolRun r = run("sim/tl-sim", tc + " --wgmma --gpu rtx4090");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--wgmma: rtx4090"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("has no warpgroup MMAs"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace tl
