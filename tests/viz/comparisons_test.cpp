// The Fusion and GPU timings panels' numbers (viz/model/Comparisons.h): error %, the 20% target,
// ratios, the rows read from a report and from measured results, launches measured at other
// sizes flagged; and the fusion section of a real simulator report.
#include "viz/model/Comparisons.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl::viz {
namespace {

LaunchConfig launchWith(std::vector<std::pair<std::string, std::string>> names) {
  LaunchConfig l;
  l.names = std::move(names);
  return l;
}

TEST(Comparisons, ErrorTargetAndRatio) {
  EXPECT_NEAR(*errorPercent(3.0, 2.5), 20.0, 1e-12);
  EXPECT_NEAR(*errorPercent(2.0, 2.5), -20.0, 1e-12);
  EXPECT_FALSE(errorPercent(1.0, 0).has_value());
  EXPECT_FALSE(errorPercent(0, 1.0).has_value());
  EXPECT_FALSE(errorPercent(NAN, 1.0).has_value());
  EXPECT_TRUE(withinTarget(2.4, 2.0));   // +20%: on the line counts
  EXPECT_FALSE(withinTarget(2.5, 2.0));  // +25%
  EXPECT_TRUE(withinTarget(1.7, 2.0));   // -15%
  EXPECT_FALSE(withinTarget(1.0, 0.0));  // nothing to judge
  EXPECT_TRUE(withinTarget(2.5, 2.0, 30));
  EXPECT_NEAR(*ratio(7646208, 1599488), 4.78, 0.005);
  EXPECT_FALSE(ratio(1, 0).has_value());
  EXPECT_FALSE(ratio(INFINITY, 1).has_value());
}

TEST(Comparisons, SizeDifferencesNameWhatDiffers) {
  LaunchConfig here = launchWith({{"M", "256"}, {"N", "781"}, {"eps", "1e-05"}, {"BLOCK_N", "1024"}});
  EXPECT_TRUE(sizeDifferences({{"M", "256"}, {"N", "781"}, {"eps", "0.00001"}}, 4, here, 4).empty());
  auto d = sizeDifferences({{"M", "16384"}, {"N", "781"}, {"K", "3"}}, 8, here, 4);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "K: 3 measured, not a size of this launch");
  EXPECT_EQ(d[1], "M: 16384 measured, 256 here");
  EXPECT_EQ(d[2], "num_warps: 8 measured, 4 here");
  EXPECT_TRUE(sizeDifferences({}, 0, here, 4).empty());  // num_warps unknown: not compared
  EXPECT_EQ(sizesText({{"N", "4096"}, {"M", "16384"}}), "M=16384 N=4096");
}

TEST(Comparisons, FusionFromAReportJson) {
  nlohmann::ordered_json r = nlohmann::ordered_json::parse(R"({
    "timing": {"time_us": 3.05},
    "fusion": {"launches_fused": 1, "launches_unfused": 2, "dram_bytes_fused": 1000,
               "dram_bytes_unfused": 3000, "time_us_fused": 3.0, "time_us_unfused": 7.5,
               "compulsory": {"fused_bytes": 900, "unfused_bytes": 2700, "ratio": 3, "estimated": true},
               "kernels": [{"name": "k.1_max", "description": "max", "dram_read_bytes": 1000,
                            "dram_write_bytes": 8, "time_us": 3.5, "limiter": "memory latency", "blocks_run": 4},
                           {"name": "k.2_div", "dram_read_bytes": "oops", "time_us": 4.0}]}})");
  FusionComparison f = fusionComparison(r);
  ASSERT_TRUE(f.present);
  EXPECT_EQ(f.launchesUnfused, 2);
  EXPECT_NEAR(*f.dramRatio, 3.0, 1e-12);
  EXPECT_NEAR(*f.timeRatio, 2.5, 1e-12);
  EXPECT_NEAR(*f.compulsoryRatio, 3.0, 1e-12);
  EXPECT_TRUE(f.compulsoryEstimated);
  ASSERT_EQ(f.kernels.size(), 2u);
  EXPECT_EQ(f.kernels[0].limiter, "memory latency");
  EXPECT_EQ(f.kernels[0].blocksRun, 4);
  EXPECT_EQ(f.kernels[1].readBytes, 0);  // wrong type reads as 0, no throw
  EXPECT_EQ(f.kernels[1].description, "");

  FusionComparison none = fusionComparison(nlohmann::ordered_json::parse(R"({"timing": {}})"));
  EXPECT_FALSE(none.present);
  EXPECT_NE(none.missing.find("no \"fusion\""), std::string::npos);
  EXPECT_FALSE(fusionComparison(nlohmann::ordered_json()).present);
  EXPECT_FALSE(fusionComparison(nlohmann::ordered_json::parse(R"({"fusion": 3})")).present);
  FusionComparison zero = fusionComparison(nlohmann::ordered_json::parse(R"({"fusion": {}})"));
  EXPECT_TRUE(zero.present);
  EXPECT_FALSE(zero.dramRatio.has_value());  // 0 fused bytes: no ratio, not inf
}

MeasuredRun unfusedRun() {
  MeasuredRun m;
  m.file = "bench/results/gpu/unfused/softmax_N4096.json";
  m.sizes = {{"M", "16384"}, {"N", "4096"}, {"stride", "4096"}, {"BLOCK_N", "4096"}};
  m.numWarps = 4;
  m.unfused = true;
  m.raw = nlohmann::json::parse(R"({"unfused": {
      "kernels": [{"name": "softmax_kernel.1_max", "registers": 32, "read_bytes": 268435456, "write_bytes": 65536}],
      "launches": 5, "predicted_fused_bytes": 536870912, "predicted_unfused_bytes": 2147745792,
      "gpu_ran": true, "median_ms": 0.5339, "fused_median_ms": 0.13384, "check": "PASS"}})");
  return m;
}

TEST(Comparisons, MeasuredFusionFlagsOtherSizes) {
  LaunchConfig here = launchWith({{"M", "256"}, {"N", "781"}, {"stride", "781"}, {"BLOCK_N", "1024"}});
  MeasuredFusion m = measuredFusion(unfusedRun(), here, 4);
  EXPECT_TRUE(m.problem.empty());
  EXPECT_TRUE(m.gpuRan);
  EXPECT_EQ(m.launches, 5);
  EXPECT_NEAR(*m.timeRatio, 0.5339 / 0.13384, 1e-9);
  EXPECT_NEAR(*m.trafficRatio, 4.0005, 1e-4);
  EXPECT_EQ(m.check, "PASS");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].registers, 32);
  EXPECT_EQ(m.differences.size(), 4u);  // M, N, stride, BLOCK_N all differ
  EXPECT_EQ(m.sizes, "BLOCK_N=4096 M=16384 N=4096 stride=4096");

  LaunchConfig same = launchWith({{"M", "16384"}, {"N", "4096"}, {"stride", "4096"}, {"BLOCK_N", "4096"}});
  EXPECT_TRUE(measuredFusion(unfusedRun(), same, 4).differences.empty());

  MeasuredRun bad = unfusedRun();
  bad.raw = nlohmann::json::array();
  EXPECT_FALSE(measuredFusion(bad, same, 4).problem.empty());
}

TEST(Comparisons, MeasuredVsPredictedAtTheDefaultLaunch) {
  MeasuredRun m;
  m.medianMs = 0.004;
  m.sizes = {{"M", "256"}, {"N", "781"}};
  m.numWarps = 4;
  m.registers = 30;
  m.blocksPerSM = 16;
  nlohmann::ordered_json report = nlohmann::ordered_json::parse(
      R"({"timing": {"time_us": 3.05, "achieved_dram_gbs": 524}, "registers": {"per_thread": 32, "estimate": true},
          "occupancy": {"blocks_per_sm": 16}})");
  MeasuredVsPredicted v = measuredVsPredicted(m, report, launchWith({{"M", "256"}, {"N", "781"}}), 4);
  EXPECT_NEAR(v.predictedMs, 0.00305, 1e-12);
  EXPECT_NEAR(*v.errorPct, -23.75, 1e-9);
  EXPECT_FALSE(v.within);
  EXPECT_TRUE(v.differences.empty());
  EXPECT_EQ(v.registersModel, 32);
  EXPECT_TRUE(v.registersModelEstimated);
  EXPECT_EQ(v.blocksPerSMModel, 16);
  EXPECT_EQ(v.gbPerSPredicted, 524);
  MeasuredVsPredicted noReport = measuredVsPredicted(m, nlohmann::ordered_json(), LaunchConfig{}, 4);
  EXPECT_FALSE(noReport.errorPct.has_value());
  EXPECT_EQ(noReport.differences.size(), 2u);
}

TEST(Comparisons, TimingsTableAndSummary) {
  std::vector<TimingRow> rows(4);
  rows[0].shape = "4096 x 781";
  rows[0].sets = {"M=4096", "N=781"};
  rows[0].measuredMs = 0.010;
  rows[0].tritonMs = 0.008;
  rows[0].predictedMs = 0.011;  // +10%
  rows[1].shape = "big";
  rows[1].measuredMs = 1.0;
  rows[1].predictedMs = 1.5;  // +50%
  rows[2].shape = "unpredicted";
  rows[2].measuredMs = 1.0;
  rows[2].predictError = "grid too large";
  rows[3].shape = "pending";
  rows[3].measuredMs = 1.0;
  std::vector<TimingsTableRow> t = timingsTable(rows);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].sets, "M=4096 N=781");
  EXPECT_NEAR(*t[0].errorPct, 10.0, 1e-9);
  EXPECT_TRUE(t[0].within);
  EXPECT_NEAR(*t[0].vsTriton, 1.25, 1e-12);
  EXPECT_FALSE(t[1].within);
  EXPECT_FALSE(t[1].vsTriton.has_value());
  EXPECT_EQ(t[2].note, "grid too large");
  EXPECT_FALSE(t[2].errorPct.has_value());
  EXPECT_EQ(t[3].note, "not predicted yet");
  TimingsSummary s = summarizeTimings(t);
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.compared, 2);
  EXPECT_EQ(s.within, 1);
  EXPECT_NEAR(s.meanAbsErrorPct, 30.0, 1e-9);
  EXPECT_NEAR(s.maxAbsErrorPct, 50.0, 1e-9);
  EXPECT_EQ(summarizeTimings({}).compared, 0);
}

TEST(Comparisons, FusionOfTheSimulatedSoftmax) {
  // The real report: the unfused softmax is 5 launches, moves ~4.8x the DRAM bytes, and the
  // table's kernels add up to the totals.
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl", {}, err);
  ASSERT_TRUE(k) << err.str();
  SimOptions o;
  o.sampleBlocks = 8;
  SimReport rep = simulateKernel(*k->ir, k->launch, o);
  FusionComparison f = fusionComparison(rep.json);
  ASSERT_TRUE(f.present);
  EXPECT_EQ(f.launchesUnfused, 5);
  ASSERT_EQ(f.kernels.size(), 5u);
  double bytes = 0, time = 0;
  for (const FusionKernelRow& r : f.kernels) {
    bytes += r.readBytes + r.writeBytes;
    time += r.timeUs;
    EXPECT_FALSE(r.limiter.empty());
  }
  EXPECT_NEAR(bytes, f.dramUnfused, 1e-6 * f.dramUnfused);
  EXPECT_NEAR(time, f.timeUnfusedUs, 1e-9 * f.timeUnfusedUs);
  EXPECT_GT(*f.dramRatio, 4.0);
  EXPECT_NEAR(*f.compulsoryRatio, 4.78, 0.01);
}

}  // namespace
}  // namespace tl::viz
