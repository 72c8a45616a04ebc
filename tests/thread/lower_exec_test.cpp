// The lowered thread IR computes what tl-scalar computes: every kernel of kernels/ at
// num_warps 1, 2, 4 and 8 (default launch and a ragged size), with the test layouts
// (lower_helpers.h: many convert_layouts), with the real layout passes (layoutPipeline:
// coalesced layouts and vector accesses) and with them keeping the source's layouts, run on the thread-IR executor with race detection
// on, outputs compared with tl::compareBuffers.
#include <filesystem>
#include <map>

#include "lower_helpers.h"
#include "scalar/ScalarInterpreter.h"
#include "sim/ThreadExecutor.h"
#include "thread/Layouts.h"

namespace tl::lowertest {
namespace {

std::vector<std::string> kernelStems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TL_SOURCE_DIR) + "/kernels"))
    if (e.path().extension() == ".tl") stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

// Small, awkward sizes: ragged edges, a last block with few live elements, tiles smaller than
// the threads of a block (so layouts wrap around and replicate).
std::vector<LaunchOverride> raggedSize(const std::string& stem) {
  static const std::map<std::string, std::vector<LaunchOverride>> sizes{
      {"bias_gelu", {{"M", "37"}, {"N", "45"}}},
      {"layernorm", {{"M", "5"}, {"N", "300"}, {"BLOCK_SIZE", "64"}}},
      {"matmul", {{"M", "33"}, {"N", "17"}, {"K", "21"}, {"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"BLOCK_K", "8"}}},
      {"rmsnorm", {{"M", "6"}, {"N", "33"}}},
      {"row_sum", {{"M", "7"}, {"N", "130"}, {"BLOCK_N", "32"}}},
      {"softmax", {{"M", "5"}, {"N", "17"}}},
      {"softmax_online", {{"M", "3"}, {"N", "100"}, {"BLOCK_N", "16"}}},
      {"strided_copy", {{"N", "1000"}, {"BLOCK", "64"}}},
      {"transpose", {{"M", "20"}, {"N", "9"}, {"BLOCK_M", "8"}, {"BLOCK_N", "4"}}},
      {"transpose_tiled", {{"M", "20"}, {"N", "9"}, {"BLOCK_M", "8"}, {"BLOCK_N", "4"}}},  // trans of 8x4 tiles
      {"vector_add", {{"N", "1000"}, {"BLOCK", "16"}}},
  };
  auto it = sizes.find(stem);
  return it == sizes.end() ? std::vector<LaunchOverride>{} : it->second;
}

// tl-scalar's outputs, computed once per kernel and size.
const Memory& scalarReference(const std::string& stem, bool ragged) {
  static std::map<std::pair<std::string, bool>, Memory> cache;
  auto key = std::make_pair(stem, ragged);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), ragged ? raggedSize(stem) : std::vector<LaunchOverride>{}, err);
  EXPECT_TRUE(k) << err.str();
  Memory mem;
  if (k) {
    mem = Memory::fromLaunch(k->launch);
    runScalar(*k->ir, k->launch, mem);
  }
  return cache.emplace(key, std::move(mem)).first->second;
}

enum class Layouts {
  Test,    // assignTestLayouts: default layouts, vec 1, explicit conversions
  Passes,  // the layout passes (stages/thread/Layouts.h)
  Keep,    // the layout passes with keepLayouts (conversions only at trans)
};

class LowerExec : public ::testing::TestWithParam<std::tuple<std::string, int, bool, Layouts>> {};

TEST_P(LowerExec, MatchesScalar) {
  auto [stem, nw, ragged, layouts] = GetParam();
  const Memory& ref = scalarReference(stem, ragged);
  auto k = compileTestKernel(stem, ragged ? raggedSize(stem) : std::vector<LaunchOverride>{});
  ASSERT_TRUE(k);
  if (layouts == Layouts::Test) assignTestLayouts(*k->ir, nw);
  else layoutPipeline(nw, {}, layouts == Layouts::Keep).run(*k->ir);
  auto t = lowerToThreadIR(*k->ir);
  Memory mem = Memory::fromLaunch(k->launch);
  ExecOptions opts;
  opts.recordAccesses = false;
  try {
    runThreadIR(*t, k->launch, mem, opts);
  } catch (const RuntimeError& e) {
    FAIL() << "line " << e.loc.line << ": " << e.what();
  }
  int outputs = 0;
  for (const Buffer& r : ref.buffers()) {
    if (!r.output) continue;
    ++outputs;
    const Buffer* got = mem.find(r.name);
    ASSERT_TRUE(got) << r.name;
    Comparison c = compareBuffers(r, *got);
    EXPECT_TRUE(c.pass) << stem << " " << r.name << ": " << c.reason << " max abs err " << c.maxAbsErr << " at "
                        << c.worstIndex << ", " << c.mismatches << " mismatches";
  }
  EXPECT_GT(outputs, 0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, LowerExec,
                         ::testing::Combine(::testing::ValuesIn(kernelStems()), ::testing::Values(1, 2, 4, 8),
                                            ::testing::Bool(), ::testing::Values(Layouts::Test, Layouts::Passes, Layouts::Keep)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_w" + std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_ragged" : "_default") +
                                  (std::get<3>(info.param) == Layouts::Test     ? "_testlayouts"
                                   : std::get<3>(info.param) == Layouts::Passes ? "_layoutpasses"
                                                                                : "_keeplayouts");
                         });

}  // namespace
}  // namespace tl::lowertest
