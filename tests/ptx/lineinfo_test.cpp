// Source lines in the PTX stage (PtxOptions::lineInfo, docs/gpu.md "Source lines"):
//
//   - the softmax: the LLVM IR has a !DILocation for the lines of its load, max, exp, sum and
//     store, the PTX a `.loc 1 L` for each of them, and every ld.global / st.global sits under
//     (nearest preceding .loc) the line of its load / store; `.file 1` names the kernel's path;
//   - the line info changes no instruction: every kernel's PTX without its .loc lines (and the
//     few labels and the empty .debug_loc section that come with them) is the PTX compiled
//     with lineInfo = false, which has no .loc, .file or !dbg at all;
//   - no DWARF sections and no `.target ..., debug`; ptxas accepts the PTX on sm_80/86/89/90;
//   - IR text: ops without a location get no !dbg, the file falls back to "<kernel>.tl",
//     PtxOptions::sourcePath overrides it, odd characters in it still assemble;
//     describePtxOptions tells the settings apart.
#include <cstdio>
#include <fstream>
#include <optional>
#include <regex>

#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a);
}

// The 1-based number of the first line of `path` that is not a comment and contains `what`.
int sourceLineOf(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (!trimmed(l).starts_with("#") && l.find(what) != std::string::npos) return n;
  }
  ADD_FAILURE() << "no line with '" << what << "' in " << path;
  return -1;
}

// The line of a `.loc 1 <line> <col>` directive, or nothing for any other PTX line.
std::optional<int> locLine(const std::string& ptxLine) {
  static const std::regex loc(R"(^\s*\.loc\s+1\s+(\d+)\s+\d+)");
  std::smatch m;
  if (!std::regex_search(ptxLine, m, loc)) return std::nullopt;
  return std::stoi(m[1]);
}

// For every PTX line containing `what` (an instruction), the line of the nearest .loc above it
// (0 when there is none).
std::vector<int> linesAbove(const std::string& ptx, const std::string& what) {
  std::vector<int> out;
  int current = 0;
  for (const std::string& l : lines(ptx)) {
    if (auto line = locLine(l)) current = *line;
    else if (l.find(what) != std::string::npos && !trimmed(l).starts_with("//")) out.push_back(current);
  }
  return out;
}

// The PTX without what line info adds: .loc lines, the function's begin/end and scope labels,
// the (empty) .debug_loc section and the .file directive. What is left must be instruction for
// instruction the PTX compiled without line info.
std::string withoutLineInfo(const std::string& ptx) {
  std::string out;
  for (const std::string& l : lines(ptx)) {
    const std::string t = trimmed(l);
    if (t.starts_with(".loc") || t.starts_with(".file") || t.starts_with(".section\t.debug_loc") ||
        t.starts_with("$L__func_begin") || t.starts_with("$L__func_end") || t.starts_with("$L__tmp"))
      continue;
    out += l + "\n";
  }
  return out;
}

size_t countIf(const std::string& ptx, bool locLines) {
  size_t n = 0;
  for (const std::string& l : lines(ptx))
    if (!trimmed(l).empty() && locLine(l).has_value() == locLines) ++n;
  return n;
}

// The softmax at its launch's sizes (N = 781: masked loads and stores), num_warps 4.
class SoftmaxLineInfo : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    PtxOptions off;
    off.lineInfo = false;
    on_ = new PtxResult(kernelToPTX("softmax", 4));
    off_ = new PtxResult(kernelToPTX("softmax", 4, {}, off));
  }
  static void TearDownTestSuite() {
    delete on_;
    delete off_;
  }
  static const PtxResult& on() { return *on_; }
  static const PtxResult& off() { return *off_; }
  static int line(const std::string& what) { return sourceLineOf(kernelPath("softmax"), what); }

 private:
  static inline PtxResult* on_ = nullptr;
  static inline PtxResult* off_ = nullptr;
};

TEST_F(SoftmaxLineInfo, LlvmIrCarriesTheSourceLines) {
  const std::string& ir = on().llvmIR;
  EXPECT_TRUE(contains(ir, "emissionKind: DebugDirectivesOnly")) << ir;
  EXPECT_TRUE(contains(ir, "!\"Debug Info Version\"")) << ir;
  EXPECT_TRUE(contains(ir, "!\"Dwarf Version\"")) << ir;
  EXPECT_TRUE(contains(ir, "!DIFile(filename: \"" + kernelPath("softmax") + "\"")) << ir;
  EXPECT_TRUE(contains(ir, "!DISubprogram(name: \"softmax_kernel\"")) << ir;
  for (const char* what : {"load(", "max(", "exp(", "sum(", "store("}) {
    const int l = line(what);
    EXPECT_TRUE(contains(ir, "!DILocation(line: " + std::to_string(l) + ",")) << what << " (line " << l << ")\n" << ir;
  }
  // The ops' instructions carry them: a masked load is an inline-asm call with a !dbg.
  std::regex loadWithDbg(R"(call .*asm sideeffect "@\$\d+ ld\.global[^\n]*!dbg !\d+)");
  EXPECT_TRUE(std::regex_search(ir, loadWithDbg)) << ir;
}

TEST_F(SoftmaxLineInfo, PtxCarriesTheSourceLines) {
  const std::string& ptx = on().ptx;
  EXPECT_TRUE(contains(ptx, ".file\t1 \"" + kernelPath("softmax") + "\"")) << ptx;
  for (const char* what : {"load(", "max(", "exp(", "sum(", "store("}) {
    const int l = line(what);
    std::regex loc("\\.loc\\s+1\\s+" + std::to_string(l) + "\\s+\\d+");
    EXPECT_TRUE(std::regex_search(ptx, loc)) << what << " (line " << l << ")\n" << ptx;
  }
  // Each global access sits under the line of its load / store.
  const std::vector<int> loads = linesAbove(ptx, "ld.global");
  const std::vector<int> stores = linesAbove(ptx, "st.global");
  ASSERT_FALSE(loads.empty()) << ptx;
  ASSERT_FALSE(stores.empty()) << ptx;
  for (int l : loads) EXPECT_EQ(l, line("load(")) << ptx;
  for (int l : stores) EXPECT_EQ(l, line("store(")) << ptx;
  // Directives only: no DWARF sections, and ptxas is not asked for a debug compilation.
  EXPECT_TRUE(contains(ptx, ".target sm_90\n")) << ptx;
  EXPECT_FALSE(contains(ptx, ".debug_info")) << ptx;
  EXPECT_FALSE(contains(ptx, ".debug_abbrev")) << ptx;
  std::printf("  softmax (N=781, 4 warps): %zu PTX lines besides %zu .loc lines; %zu lines without line info\n",
              countIf(ptx, false), countIf(ptx, true), countIf(off().ptx, false));
}

TEST_F(SoftmaxLineInfo, OffMeansNoLineInfoAtAll) {
  EXPECT_FALSE(contains(off().ptx, ".loc")) << off().ptx;
  EXPECT_FALSE(contains(off().ptx, ".file")) << off().ptx;
  EXPECT_FALSE(contains(off().llvmIR, "!dbg")) << off().llvmIR;
  EXPECT_FALSE(contains(off().llvmIR, "DICompileUnit")) << off().llvmIR;
}

TEST_F(SoftmaxLineInfo, PtxasAcceptsItOnEveryArch) {
  TL_REQUIRE_PTXAS();
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
    PtxOptions opts;
    opts.arch = arch;
    PtxResult r = arch == std::string("sm_90") ? on() : kernelToPTX("softmax", 4, {}, opts);
    ASSERT_TRUE(contains(r.ptx, ".loc")) << r.ptx;
    PtxasInfo info = runPtxas(r.ptx, arch);
    ASSERT_TRUE(info.ran) << info.skipped;
    EXPECT_TRUE(info.ok) << arch << ":\n" << info.log << "\n" << r.ptx;
  }
  // The same registers with and without line info (the same code).
  PtxasInfo with = runPtxas(on().ptx, "sm_90"), without = runPtxas(off().ptx, "sm_90");
  EXPECT_EQ(with.registers, without.registers) << with.log << without.log;
}

// The optimizer and the code generator are not affected: for every kernel, the PTX minus what
// line info adds is exactly the PTX without line info.
TEST(LineInfo, ChangesNoInstructionOfAnyKernel) {
  for (const std::string& stem : kernelStems()) {
    SCOPED_TRACE(stem);
    ThreadCompilation tc = kernelToThreadIR(stem, 4);
    PtxOptions off;
    off.lineInfo = false;
    PtxResult with = compileToPTX(*tc.threadIR), without = compileToPTX(*tc.threadIR, off);
    EXPECT_TRUE(contains(with.ptx, ".loc\t1 ")) << with.ptx;
    EXPECT_EQ(withoutLineInfo(with.ptx), without.ptx);
  }
}

// Thread IR text: ops with `loc(l:c)` carry it, ops without carry nothing; the file is
// "<kernel>.tl" unless PtxOptions::sourcePath names one.
constexpr const char* kPartlyLocated = R"(thread_func @located(%out: ptr<f32>, %a: f32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %po = addptr %out, %lane : ptr<f32>
  %e = exp %a : f32 loc(7:3)
  st_global %po, %e {vec = 1} loc(9:5)
  return
}
)";

TEST(LineInfo, OnlyLocatedOpsGetALine) {
  auto fn = parseThreadIR(kPartlyLocated);
  ASSERT_TRUE(fn);
  PtxResult r = compileToPTX(*fn);
  EXPECT_TRUE(contains(r.llvmIR, "!DILocation(line: 7, column: 3,")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "!DILocation(line: 9, column: 5,")) << r.llvmIR;
  for (const std::string& l : lines(r.llvmIR)) {
    if (contains(l, "@llvm.nvvm.read.ptx.sreg.tid.x()") && !contains(l, "declare")) {
      EXPECT_FALSE(contains(l, "!dbg")) << l;
    }
    if (contains(l, "store float")) {
      EXPECT_TRUE(contains(l, "!dbg")) << l;
    }
  }
  EXPECT_TRUE(contains(r.ptx, ".file\t1 \"located.tl\"")) << r.ptx;
  const std::vector<int> stores = linesAbove(r.ptx, "st.global");
  ASSERT_EQ(stores.size(), 1u) << r.ptx;
  EXPECT_EQ(stores[0], 9) << r.ptx;
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  if (info.ran) {
    EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
  }
}

TEST(LineInfo, SourcePathOverridesTheFileName) {
  auto fn = parseThreadIR(kPartlyLocated);
  ASSERT_TRUE(fn);
  PtxOptions opts;
  opts.sourcePath = "lessons/my kernel.tl";
  PtxResult r = compileToPTX(*fn, opts);
  EXPECT_TRUE(contains(r.ptx, ".file\t1 \"lessons/my kernel.tl\"")) << r.ptx;
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  if (info.ran) {
    EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
  }
}

TEST(LineInfo, OddCharactersInThePathStillAssemble) {
  auto fn = parseThreadIR(kPartlyLocated);
  ASSERT_TRUE(fn);
  PtxOptions opts;
  opts.sourcePath = "caf\xc3\xa9/a\"b\\c\td.tl";
  PtxResult r = compileToPTX(*fn, opts);
  // LLVM escapes the bytes ptxas cannot read raw; a double quote (ptxas rejects \") becomes '_'.
  EXPECT_TRUE(contains(r.ptx, ".file\t1 \"caf\\303\\251/a_b\\\\c\\td.tl\"")) << r.ptx;
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(r.ptx, "sm_90");
  ASSERT_TRUE(info.ran) << info.skipped;
  EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
}

TEST(LineInfo, DescribeOptionsTellsTheSettingsApart) {
  PtxOptions a, b, c;
  b.lineInfo = false;
  c.sourcePath = "x.tl";
  EXPECT_EQ(describePtxOptions(a), "O3 fast-math line-info");
  EXPECT_EQ(describePtxOptions(b), "O3 fast-math no-line-info");
  EXPECT_NE(describePtxOptions(a), describePtxOptions(c));
}

}  // namespace
}  // namespace tl::ptxtest
