// Tests of the simulator report (stages/sim/SimReport.h): the documented top-level fields are
// present (docs/sim.md, "The report"), the numbers are the ones a student can work out by hand
// for vector_add and the softmax, the Chrome trace parses, and sampling scales counts by the
// right factor with a small, printed error against the full run.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <set>
#include <map>
#include <sstream>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

std::unique_ptr<CompiledKernel> compileStem(const std::string& stem) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl", {}, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

SimReport simulate(const std::string& stem, SimOptions o = {}) {
  auto k = compileStem(stem);
  if (!k) return {};
  return simulateKernel(*k->ir, k->launch, o);
}

// The top-level fields docs/sim.md documents, in their documented order.
const std::vector<std::string> kTopLevel = {"schema_version", "tool",      "tool_version", "kernel",
                                            "source",         "gpu",       "launch",       "compile",
                                            "sampling",       "execution", "registers",    "occupancy",
                                            "memory",         "timing",    "fusion"};

void expectTopLevel(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, kTopLevel);
  EXPECT_EQ(j["schema_version"], kSimReportSchemaVersion);
  EXPECT_EQ(j["tool"], "tl-sim");
  EXPECT_EQ(j["gpu"]["key"], "h200");
  EXPECT_TRUE(j["registers"]["estimate"].get<bool>());  // no compiler ran: labelled an estimate
  EXPECT_GT(j["occupancy"]["blocks_per_sm"].get<int>(), 0);
  EXPECT_GT(j["timing"]["time_us"].get<double>(), j["timing"]["sm_time_us"].get<double>());
  EXPECT_FALSE(j["memory"]["ncu_metrics"].empty());
  for (const Json& m : j["memory"]["ncu_metrics"]) EXPECT_FALSE(m["ours"].get<std::string>().empty()) << m.dump();
}

// The first global load/store instruction of the report.
const Json* findInstr(const Json& j, bool store) {
  for (const Json& i : j["memory"]["instructions"])
    if (i["space"] == "global" && i["store"].get<bool>() == store) return &i;
  return nullptr;
}

TEST(SimReport, VectorAddNumbers) {
  SimReport r = simulate("vector_add");
  const Json& j = r.json;
  expectTopLevel(j);
  const int64_t N = 98432, blocks = 97;
  EXPECT_EQ(j["sampling"]["grid_blocks"], blocks);
  EXPECT_FALSE(j["sampling"]["sampled"].get<bool>());
  EXPECT_EQ(j["sampling"]["scale"].get<double>(), 1.0);
  // x and y are read once: 2 x N x 4 bytes, give or take a sector per block and buffer.
  const Json& tot = j["memory"]["totals"];
  EXPECT_NEAR(tot["dram_read_bytes"].get<double>(), 2.0 * N * 4, 2.0 * 32 * blocks);
  EXPECT_NEAR(tot["dram_write_bytes"].get<double>(), 1.0 * N * 4, 32.0 * blocks);
  // Vec-4 f32 accesses: 32 lanes x 16 B = 512 B = 16 sectors per request, all used.
  for (const Json& i : j["memory"]["instructions"]) {
    EXPECT_EQ(i["bytes_per_lane"], 16) << i.dump();
    EXPECT_DOUBLE_EQ(i["counters"]["sectors_per_request"].get<double>(), 16.0) << i.dump();
    EXPECT_DOUBLE_EQ(i["counters"]["efficiency"].get<double>(), 1.0) << i.dump();
  }
  ASSERT_TRUE(findInstr(j, false));
  ASSERT_TRUE(findInstr(j, true));
  // Nothing to fuse: the unfused version is the same single kernel.
  EXPECT_EQ(j["fusion"]["launches_unfused"], 1);
  EXPECT_DOUBLE_EQ(j["fusion"]["dram_ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["fusion"]["compulsory"]["ratio"].get<double>(), 1.0);
}

TEST(SimReport, SoftmaxNumbers) {
  SimReport r = simulate("softmax");
  const Json& j = r.json;
  expectTopLevel(j);
  const int64_t M = 256, N = 781;
  EXPECT_EQ(j["launch"]["num_warps"], 4);
  // Rows of 781 floats start mid-sector: at most one extra sector at each end of a row.
  const Json& tot = j["memory"]["totals"];
  EXPECT_GE(tot["dram_read_bytes"].get<double>(), double(M * N * 4));
  EXPECT_LE(tot["dram_read_bytes"].get<double>(), double(M * N * 4 + M * 2 * 32));
  EXPECT_NEAR(tot["dram_write_bytes"].get<double>(), double(M * N * 4), double(M * 2 * 32));
  // The reductions go through shared memory (wavefronts reported, never fewer than ideal).
  EXPECT_GT(tot["shared_load"]["wavefronts"].get<int64_t>(), 0);
  EXPECT_GE(tot["shared_load"]["wavefronts"].get<int64_t>(), tot["shared_load"]["ideal_wavefronts"].get<int64_t>());
  // Five eager kernels, far more DRAM traffic and time.
  const Json& f = j["fusion"];
  EXPECT_EQ(f["launches_unfused"], 5);
  EXPECT_EQ(f["kernels"].size(), 5u);
  EXPECT_GT(f["dram_ratio"].get<double>(), 3.0);
  EXPECT_GT(f["time_ratio"].get<double>(), 1.0);
  // The summary names the occupancy limiter; the Nsight Compute metrics only when asked (--ncu).
  EXPECT_NE(r.summary.find("limited by " + j["occupancy"]["limiter"].get<std::string>()), std::string::npos);
  EXPECT_EQ(r.summary.find("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), std::string::npos) << r.summary;
  SummaryOptions ncu;
  ncu.ncu = true;
  const std::string withNcu = formatSimReport(j, ncu);
  EXPECT_NE(withNcu.find("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), std::string::npos) << withNcu;
  EXPECT_NE(withNcu.find("dram__bytes_read.sum"), std::string::npos);
  EXPECT_EQ(formatSimReport(j), r.summary);
}

TEST(SimReport, ChromeTraceParses) {
  SimOptions o;
  o.unfused = false;
  SimReport r = simulate("softmax", o);
  EXPECT_FALSE(r.json.contains("fusion"));
  Json trace = Json::parse(r.chromeTrace);  // throws (fails the test) if it does not parse
  const Json& events = trace.is_array() ? trace : trace["traceEvents"];
  int complete = 0;
  for (const Json& e : events) complete += e["ph"] == "X";
  EXPECT_GT(complete, 0) << r.chromeTrace.substr(0, 400);
}

// What the Trace Event Format (the JSON Perfetto and chrome://tracing import) requires of our
// events: an object with a traceEvents array and a valid displayTimeUnit; every event a string
// `ph` and `name` and an integer pid; complete ("X") events an integer tid and numeric ts and
// dur >= 0; metadata ("M") events one of the names the importers know, with args; and, per
// thread row, complete events that never partly overlap (an importer nests slices on a row,
// and a partial overlap is an import error).
TEST(SimReport, ChromeTraceFollowsTheTraceEventFormat) {
  SimOptions o;
  o.unfused = false;
  SimReport r = simulate("softmax", o);
  Json trace = Json::parse(r.chromeTrace);
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_TRUE(trace["displayTimeUnit"] == "ns" || trace["displayTimeUnit"] == "ms");
  std::map<int64_t, std::vector<std::pair<double, double>>> rows;  // tid -> (ts, dur)
  for (const Json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["ph"].is_string() && e["name"].is_string() && e["pid"].is_number_integer()) << e.dump();
    if (e["ph"] == "X") {
      ASSERT_TRUE(e["tid"].is_number_integer() && e["ts"].is_number() && e["dur"].is_number()) << e.dump();
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      rows[e["tid"].get<int64_t>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    } else {
      ASSERT_EQ(e["ph"], "M") << e.dump();
      static const std::set<std::string> known = {"process_name", "thread_name", "process_sort_index",
                                                  "thread_sort_index"};
      EXPECT_TRUE(known.count(e["name"].get<std::string>())) << e.dump();
      EXPECT_TRUE(e["args"].is_object()) << e.dump();
    }
  }
  ASSERT_FALSE(rows.empty());
  for (auto& [tid, slices] : rows) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i) {
      const double end = slices[i - 1].first + slices[i - 1].second;
      EXPECT_GE(slices[i].first, end - 1e-9) << "row " << tid << ": slice " << i << " starts inside the previous one";
    }
  }
}

// Sampling: the first 16 of vector_add's 97 blocks, scaled x97/16, against the full run.
TEST(SimReport, SamplingScaleAndError) {
  SimOptions full, sampled;
  full.unfused = sampled.unfused = false;
  sampled.sampleBlocks = 16;
  for (const std::string stem : {"vector_add", "softmax"}) {
    Json a = simulate(stem, full).json, b = simulate(stem, sampled).json;
    const double grid = a["sampling"]["grid_blocks"].get<double>();
    EXPECT_TRUE(b["sampling"]["sampled"].get<bool>());
    EXPECT_EQ(b["sampling"]["blocks_run"], 16);
    EXPECT_EQ(b["execution"]["blocks"], 16);
    EXPECT_DOUBLE_EQ(b["sampling"]["scale"].get<double>(), grid / 16.0);
    EXPECT_DOUBLE_EQ(b["memory"]["scale"].get<double>(), grid / 16.0);
    auto err = [&](const Json& x, const Json& y) { return std::abs(y.get<double>() / x.get<double>() - 1.0); };
    double readErr = err(a["memory"]["totals"]["dram_read_bytes"], b["memory"]["totals"]["dram_read_bytes"]);
    double sectorErr = err(a["memory"]["totals"]["global_load"]["sectors"], b["memory"]["totals"]["global_load"]["sectors"]);
    double timeErr = err(a["timing"]["time_us"], b["timing"]["time_us"]);
    std::cout << "[sampling] " << stem << ": 16 of " << grid << " blocks: DRAM read error " << 100 * readErr
              << "%, load sectors error " << 100 * sectorErr << "%, time error " << 100 * timeErr << "%\n";
    EXPECT_LT(readErr, 0.02) << stem;
    EXPECT_LT(sectorErr, 0.02) << stem;
    EXPECT_LT(timeErr, 0.25) << stem;
  }
}

TEST(SimReport, BadOptionsThrow) {
  auto k = compileStem("vector_add");
  ASSERT_TRUE(k);
  SimOptions o;
  o.gpu = "no_such_gpu";
  EXPECT_THROW(simulateKernel(*k->ir, k->launch, o), std::runtime_error);
  o.gpu = "h200";
  o.sampleBlocks = -1;
  EXPECT_THROW(simulateKernel(*k->ir, k->launch, o), std::invalid_argument);
}

}  // namespace
}  // namespace tl
