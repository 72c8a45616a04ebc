// Tiles of rank 3 through tl-sim (simulateKernel, fused and unfused, shared-memory race
// detection on): the rank-3 test kernels of tests/thread/kernels/ and Triton tutorial 09's
// descriptor matmul with its reshape-permute-split epilogue give a report with a predicted
// time, DRAM traffic covering their outputs, and, where a reshape or split moves elements
// between threads (rank3_shape, t09), shared-memory loads.
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

Json simulate(const std::string& path) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/" + path, {}, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return {};
  SimOptions o;
  o.detectRaces = true;
  return simulateKernel(*k->ir, k->launch, o).json;
}

// The bytes of the launch's outputs.
double outputBytes(const std::string& path) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/" + path, {}, err);
  double n = 0;
  if (k)
    for (const Buffer& b : Memory::fromLaunch(k->launch).buffers())
      if (b.output) n += static_cast<double>(b.bytes.size());
  return n;
}

TEST(Rank3Sim, ReportsForRank3Kernels) {
  for (const char* path : {"tests/thread/kernels/rank3_elementwise.tl", "tests/thread/kernels/rank3_shape.tl",
                           "tests/thread/kernels/rank3_dot.tl", "kernels/triton/t09_matmul_descriptor.tl"}) {
    Json j = simulate(path);
    ASSERT_TRUE(j.contains("timing")) << path;
    EXPECT_GT(j["timing"]["time_us"].get<double>(), 0.0) << path;
    const Json& tot = j["memory"]["totals"];
    // Every output element is written once; rows may start mid-sector.
    EXPECT_GE(tot["dram_write_bytes"].get<double>(), 0.5 * outputBytes(path)) << path << " " << tot.dump();
    EXPECT_GE(j["fusion"]["launches_unfused"].get<int64_t>(), 1) << path;
    const std::string p = path;
    if (p.find("rank3_shape") != std::string::npos || p.find("t09") != std::string::npos)
      EXPECT_GT(tot["shared_load"]["wavefronts"].get<int64_t>(), 0) << path;
  }
}

}  // namespace
}  // namespace tl
