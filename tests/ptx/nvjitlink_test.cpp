// In-process assembly with libnvJitLink (ptx/NvJitLink.h) next to the ptxas process (Ptxas.h):
//
//   - the library on this machine opens and says its version;
//   - real tl-ptx PTX (softmax, matmul, layernorm_row, transpose, and the softmax for sm_80) is
//     accepted both ways; both cubins are 64-bit CUDA ELF files for the arch asked for; nvJitLink's
//     report (registers, smem, spills, stack) is exactly `ptxas -c`'s — it compiles the PTX as
//     relocatable code — read by the one parser, parsePtxasReport;
//   - .loc line info reaches the cubin both ways without -lineinfo;
//   - assemblePtx: Auto takes nvJitLink; with $TL_NVJITLINK at a missing file or at a library
//     without nvJitLink's entry points it runs the ptxas process and says why; a forced
//     nvJitLink then does not run;
//   - a malformed PTX gives ok = false with ptxas' error lines from nvJitLink's log;
//   - the JIT cache keys the assembler (the cubins differ) and records which one ran;
//   - tl-ptx --assembler prints the assembler on its ptxas line and in the results JSON.
// The library tests skip (with the reason) only where no libnvJitLink is installed.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "../common/TempDir.h"
#include "codegen_util.h"
#include "ptx/JitCache.h"
#include "ptx/NvJitLink.h"
#include "ptx/Results.h"

namespace tl::ptxtest {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one scope and puts the old value back.
class EnvGuard {
 public:
  EnvGuard(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~EnvGuard() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The library, or nullptr after GTEST_SKIP when none is installed; a library that is installed
// but does not open fails the test.
std::unique_ptr<NvJitLink> openOrSkip(bool* skipped) {
  std::string why;
  std::unique_ptr<NvJitLink> lib = NvJitLink::open(&why);
  *skipped = false;
  if (lib) return lib;
  const bool installed = fs::exists("/usr/local/cuda/lib64/libnvJitLink.so.13") || std::getenv("TL_NVJITLINK");
  if (installed) {
    ADD_FAILURE() << "libnvJitLink is installed but does not open: " << why;
  } else {
    *skipped = true;
  }
  return nullptr;
}

#define TL_REQUIRE_NVJITLINK(lib)                                              \
  bool skipped_ = false;                                                       \
  std::unique_ptr<NvJitLink> lib = openOrSkip(&skipped_);                      \
  if (skipped_) GTEST_SKIP() << "libnvJitLink is not installed";               \
  ASSERT_TRUE(lib)

// The SM number a CUDA cubin is for, or -1 when `cubin` is not a 64-bit CUDA ELF file
// (e_machine 190, EM_CUDA). ELF ABI version 8 (CUDA 12.8 and later) keeps the SM in bits 8-15 of
// e_flags, older versions in bits 0-7.
int cubinArch(const std::string& cubin) {
  if (cubin.size() < 64 || cubin.compare(0, 4, "\x7f" "ELF") != 0 || cubin[4] != 2 /* ELFCLASS64 */) return -1;
  uint16_t machine = 0;
  uint32_t flags = 0;
  std::memcpy(&machine, cubin.data() + 18, 2);
  std::memcpy(&flags, cubin.data() + 48, 4);
  if (machine != 190) return -1;
  const int abiVersion = static_cast<unsigned char>(cubin[8]);
  return abiVersion >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);
}

// `ptxas -c -arch=<arch> -v` (relocatable code, what nvJitLink compiles) as a process; its log.
std::string ptxasRelocatableLog(const std::string& ptx, const std::string& arch) {
  test::TempDir dir("tl-nvjitlink-test");
  {
    std::ofstream(dir / "k.ptx") << ptx;
  }
  const std::string cmd = findPtxas() + " -c -arch=" + arch + " -v " + (dir / "k.ptx") + " -o " + (dir / "k.o") +
                          " > " + (dir / "log") + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir / "log");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(NvJitLink, OpensAndSaysItsVersion) {
  TL_REQUIRE_NVJITLINK(lib);
  EXPECT_EQ(lib->version().rfind("nvJitLink ", 0), 0u) << lib->version();
  const int major = std::atoi(lib->version().c_str() + 10);
  EXPECT_GE(major, 12) << lib->version();
  EXPECT_FALSE(lib->path().empty());
}

// The parser reads ptxas' lines only: nvJitLink's linker summary says "1040 bytes smem" (the 1 KB
// the driver reserves included), ptxas' line 32.
TEST(PtxasReport, ReadsOnlyPtxasLines) {
  const std::string nvJitLinkLog =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'softmax_kernel' for 'sm_90'\n"
      "ptxas info    : Function properties for softmax_kernel\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 47 registers, used 1 barriers, 32 bytes smem\n"
      "info    : 0 bytes gmem\n"
      "info    : Function properties for 'softmax_kernel':\n"
      "info    : used 47 registers, used 1 barriers, 0 stack, 1040 bytes smem, 552 bytes cmem[0], 0 bytes lmem\n";
  PtxasInfo a;
  parsePtxasReport(nvJitLinkLog, a);
  EXPECT_EQ(a.registers, 47);
  EXPECT_EQ(a.sharedBytes, 32);
  EXPECT_EQ(a.stackFrameBytes, 8);
  EXPECT_EQ(a.spillStoreBytes, 4);
  EXPECT_EQ(a.spillLoadBytes, 12);
  const std::string processLog =
      "ptxas info    : Function properties for softmax_kernel\n"
      "    0 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 16 bytes smem, 368 bytes cmem[0]\n";
  PtxasInfo b;
  parsePtxasReport(processLog, b);
  EXPECT_EQ(b.registers, 40);
  EXPECT_EQ(b.sharedBytes, 16);
  EXPECT_EQ(b.spillStoreBytes, 16);
  EXPECT_EQ(b.spillLoadBytes, 16);
}

TEST(PtxasReport, PerformanceNotes) {
  const std::string log =
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma "
      "instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the "
      "function 'matmul_tc'\n"
      "ptxas info    : Used 206 registers, used 1 barriers\n"
      "ptxas info    : Potential Performance Loss: something without a code\n";
  const std::vector<std::string> notes = ptxasPerformanceNotes(log);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("(C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized", 0), 0u) << notes[0];
  EXPECT_EQ(notes[1], "Potential Performance Loss: something without a code");
  EXPECT_TRUE(ptxasPerformanceNotes("ptxas info    : Used 40 registers, used 1 barriers\n").empty());
}

struct Case {
  const char* stem;
  const char* arch;
};

TEST(NvJitLink, AssemblesRealKernelsLikeThePtxasProcess) {
  TL_REQUIRE_PTXAS();
  TL_REQUIRE_NVJITLINK(lib);
  for (Case c : {Case{"softmax", "sm_90"}, Case{"matmul", "sm_90"}, Case{"layernorm_row", "sm_90"},
                 Case{"transpose", "sm_90"}, Case{"softmax", "sm_80"}}) {
    SCOPED_TRACE(std::string(c.stem) + " " + c.arch);
    PtxOptions opts;
    opts.arch = c.arch;
    PtxResult r = kernelToPTX(c.stem, 0, {}, opts);
    std::string inProcess, process;
    PtxasInfo a = lib->assemble(r.ptx, c.arch, &inProcess);
    PtxasInfo p = runPtxas(r.ptx, c.arch, &process);
    ASSERT_TRUE(a.ran && a.ok) << a.skipped << a.log;
    ASSERT_TRUE(p.ran && p.ok) << p.skipped << p.log;
    EXPECT_EQ(a.assembler, lib->version());
    EXPECT_EQ(p.assembler, findPtxas());
    const int sm = std::atoi(c.arch + 3);
    EXPECT_EQ(cubinArch(inProcess), sm);
    EXPECT_EQ(cubinArch(process), sm);
    // -verbose puts ptxas' report in the info log.
    EXPECT_TRUE(contains(a.log, "ptxas info    : Used ")) << a.log;
    EXPECT_GT(a.registers, 0) << a.log;
    EXPECT_GT(p.registers, 0) << p.log;
    // nvJitLink compiles relocatable code: its report is `ptxas -c`'s, number for number.
    PtxasInfo rel;
    parsePtxasReport(ptxasRelocatableLog(r.ptx, c.arch), rel);
    EXPECT_EQ(a.registers, rel.registers) << a.log;
    EXPECT_EQ(a.sharedBytes, rel.sharedBytes) << a.log;
    EXPECT_EQ(a.spillStoreBytes, rel.spillStoreBytes);
    EXPECT_EQ(a.spillLoadBytes, rel.spillLoadBytes);
    EXPECT_EQ(a.stackFrameBytes, rel.stackFrameBytes);
  }
}

// The `.loc` lines reach the cubin (.nv_debug_line_sass) both ways without -lineinfo, and
// without line info neither cubin has the section.
TEST(NvJitLink, LineInfoNeedsNoOption) {
  TL_REQUIRE_PTXAS();
  TL_REQUIRE_NVJITLINK(lib);
  PtxOptions off;
  off.lineInfo = false;
  for (bool lineInfo : {true, false}) {
    SCOPED_TRACE(lineInfo ? "line info" : "no line info");
    PtxResult r = kernelToPTX("softmax", 4, {}, lineInfo ? PtxOptions{} : off);
    std::string inProcess, process;
    ASSERT_TRUE(lib->assemble(r.ptx, "sm_90", &inProcess).ok);
    ASSERT_TRUE(runPtxas(r.ptx, "sm_90", &process).ok);
    EXPECT_EQ(contains(inProcess, ".nv_debug_line_sass"), lineInfo);
    EXPECT_EQ(contains(process, ".nv_debug_line_sass"), lineInfo);
  }
}

TEST(NvJitLink, RejectedPtxGivesItsLog) {
  TL_REQUIRE_NVJITLINK(lib);
  const std::string bad = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
  std::string cubin = "untouched";
  PtxasInfo info = lib->assemble(bad, "sm_90", &cubin);
  EXPECT_TRUE(info.ran);
  EXPECT_FALSE(info.ok);
  EXPECT_TRUE(contains(info.log, "line 4; error")) << info.log;
  EXPECT_TRUE(contains(info.log, "'bogus'")) << info.log;
  EXPECT_TRUE(contains(info.log, "NVJITLINK_ERROR_PTX_COMPILE")) << info.log;
  EXPECT_EQ(cubin, "untouched");
  // Auto does not retry a rejected PTX with the process.
  PtxasInfo autoInfo = assemblePtx(bad, "sm_90", nullptr, Assembler::Auto);
  EXPECT_FALSE(autoInfo.ok);
  EXPECT_EQ(autoInfo.assembler, lib->version());
  // Not an arch: nothing runs.
  PtxasInfo noArch = lib->assemble(bad, "compute_90");
  EXPECT_FALSE(noArch.ran);
  EXPECT_TRUE(contains(noArch.skipped, "compute_90")) << noArch.skipped;
}

TEST(AssemblePtx, AutoTakesNvJitLink) {
  TL_REQUIRE_NVJITLINK(lib);
  std::string cubin;
  PtxasInfo info = assemblePtx(kernelToPTX("softmax", 4).ptx, "sm_90", &cubin, Assembler::Auto);
  EXPECT_TRUE(info.ok) << info.log;
  EXPECT_EQ(info.assembler, lib->version());
  EXPECT_EQ(info.assemblerNote, "");
  EXPECT_EQ(cubinArch(cubin), 90);
}

TEST(AssemblePtx, FallsBackToTheProcessWithoutTheLibrary) {
  TL_REQUIRE_PTXAS();
  const std::string ptx = kernelToPTX("softmax", 4).ptx;
  const PtxasInfo process = runPtxas(ptx, "sm_90");
  // A missing file, and a library that is not nvJitLink (no nvJitLinkCreate).
  for (const std::string& path : {std::string("/nonexistent/libnvJitLink.so.13"), std::string("libm.so.6")}) {
    SCOPED_TRACE(path);
    EnvGuard env("TL_NVJITLINK", path);
    std::string why;
    EXPECT_EQ(NvJitLink::open(&why), nullptr);
    EXPECT_TRUE(contains(why, path)) << why;
    std::string cubin;
    PtxasInfo info = assemblePtx(ptx, "sm_90", &cubin, Assembler::Auto);
    ASSERT_TRUE(info.ran && info.ok) << info.skipped << info.log;
    EXPECT_EQ(info.assembler, findPtxas());
    EXPECT_TRUE(contains(info.assemblerNote, "nvJitLink not used: ")) << info.assemblerNote;
    EXPECT_TRUE(contains(info.assemblerNote, path)) << info.assemblerNote;
    EXPECT_EQ(info.registers, process.registers);
    EXPECT_EQ(cubinArch(cubin), 90);
    PtxasInfo forced = assemblePtx(ptx, "sm_90", nullptr, Assembler::NvJitLink);
    EXPECT_FALSE(forced.ran);
    EXPECT_TRUE(contains(forced.skipped, "--assembler=nvjitlink")) << forced.skipped;
  }
  EnvGuard env("TL_NVJITLINK", "libm.so.6");
  std::string why;
  NvJitLink::open(&why);
  EXPECT_TRUE(contains(why, "lacks nvJitLinkCreate")) << why;
}

TEST(AssemblePtx, PtxasIsAlwaysTheProcess) {
  TL_REQUIRE_PTXAS();
  PtxasInfo info = assemblePtx(kernelToPTX("softmax", 4).ptx, "sm_90", nullptr, Assembler::Ptxas);
  EXPECT_TRUE(info.ok) << info.log;
  EXPECT_EQ(info.assembler, findPtxas());
  EXPECT_EQ(info.assemblerNote, "");
}

// The cubins differ, so the assembler asked for is part of the key; the entry records the one
// that ran, and a hit says so.
TEST(JitCacheAssembler, KeyedAndRecorded) {
  TL_REQUIRE_PTXAS();
  TL_REQUIRE_NVJITLINK(lib);
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath("softmax"), {}, err);
  ASSERT_TRUE(k) << err.str();
  PtxOptions po;
  const std::string autoKey = cacheKeyFor(*k, po, false, Assembler::Auto).digest();
  EXPECT_NE(autoKey, cacheKeyFor(*k, po, false, Assembler::Ptxas).digest());
  EXPECT_NE(autoKey, cacheKeyFor(*k, po, false, Assembler::NvJitLink).digest());
  test::TempDir dir("tl-nvjitlink-cache");
  JitCache cache(dir.path());
  for (Assembler a : {Assembler::Auto, Assembler::Ptxas}) {
    SCOPED_TRACE(assemblerName(a));
    JitOptions jo;
    jo.assembler = a;
    JitResult miss = jitCompile(*k, jo, &cache);
    JitResult hit = jitCompile(*k, jo, &cache);
    EXPECT_FALSE(miss.cacheHit);
    ASSERT_TRUE(hit.cacheHit) << hit.cacheNote;
    const std::string expected = a == Assembler::Auto ? lib->version() : findPtxas();
    EXPECT_EQ(miss.entry.ptxas.assembler, expected);
    EXPECT_EQ(hit.entry.ptxas.assembler, expected);
    EXPECT_EQ(hit.entry.cubin, miss.entry.cubin);
    EXPECT_EQ(hit.entry.ptxas.registers, miss.entry.ptxas.registers);
  }
}

// tl-ptx --assembler as a user runs it: the ptxas line names the assembler, the results JSON
// records it; ptxas by default; auto without the library says why in a note.
TEST(TlPtxAssembler, PrintsAndRecordsTheAssembler) {
  const std::string exe = std::string(TL_BINARY_DIR) + "/stages/ptx/tl-ptx";
  if (!fs::exists(exe)) GTEST_SKIP() << exe << " is not built";
  TL_REQUIRE_PTXAS();
  TL_REQUIRE_NVJITLINK(lib);
  test::TempDir dir("tl-nvjitlink-cli");
  struct Run {
    std::string log, assembler;
  };
  auto run = [&](const std::string& env, const std::string& options) {
    const std::string cmd = "cd " + dir.path() + " && " + env + " TL_LIBCUDA=/nonexistent/libcuda.so.1 " + exe + " " +
                            TL_SOURCE_DIR + "/kernels/softmax.tl --no-cache " + options + " > log.txt 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Run r;
    std::ifstream log(dir / "log.txt");
    r.log.assign((std::istreambuf_iterator<char>(log)), {});
    std::ifstream results(dir / "out/results/softmax.json");
    r.assembler = resultsFromJson(nlohmann::ordered_json::parse(results)).assembler;
    return r;
  };
  Run byDefault = run("", "");
  EXPECT_TRUE(contains(byDefault.log, "B  (" + findPtxas() + ")\n")) << byDefault.log;
  EXPECT_EQ(byDefault.assembler, findPtxas());
  Run inProcess = run("", "--assembler auto");
  EXPECT_TRUE(contains(inProcess.log, "B  (" + lib->version() + ", in process)\n")) << inProcess.log;
  EXPECT_EQ(inProcess.assembler, lib->version());
  Run fallback = run("TL_NVJITLINK=/nonexistent/libnvJitLink.so", "--assembler auto");
  EXPECT_TRUE(contains(fallback.log, "note: nvJitLink not used: $TL_NVJITLINK=/nonexistent/libnvJitLink.so"))
      << fallback.log;
  EXPECT_EQ(fallback.assembler, findPtxas());
  Run none = run("TL_NVJITLINK=/nonexistent/libnvJitLink.so", "--assembler nvjitlink");
  EXPECT_TRUE(contains(none.log, "ptxas: not run (--assembler=nvjitlink: ")) << none.log;
  EXPECT_EQ(none.assembler, "");
}

}  // namespace
}  // namespace tl::ptxtest
