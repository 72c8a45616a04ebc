// The report fields a grader relies on (docs/sim.md, "The report"): ideal sectors, sectors per
// ideal and per 128 requested bytes on the real strided copy; the buffers each global
// instruction touches; per-line rows merging a line's instructions; theoretical and achieved
// occupancy; the launch, source, SHA-256, GPU file and version; the driver's reserved shared
// memory; and a measured file without a GPU run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "runtime/Driver.h"
#include "runtime/Hash.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

std::unique_ptr<CompiledKernel> compile(const std::string& stem, const std::vector<LaunchOverride>& sets = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), sets, err);
  EXPECT_TRUE(k) << err.str();
  return k;
}

SimReport simulate(const std::string& stem, const std::vector<LaunchOverride>& sets = {}, SimOptions o = {}) {
  auto k = compile(stem, sets);
  if (!k) return {};
  return simulateKernel(*k->ir, k->launch, o);
}

SimOptions noUnfused() {
  SimOptions o;
  o.unfused = false;
  return o;
}

// The per-line entry of a line's global load or store (there is one per line, space, direction).
const Json* globalLine(const Json& report, bool store) {
  for (const Json& l : report["memory"]["lines"])
    if (l["space"] == "global" && l["store"].get<bool>() == store) return &l;
  return nullptr;
}

// strided_copy reads x[i * stride]: sectors / ideal is the stride up to 8 (a sector per lane),
// the store stays perfect. Before ideal sectors, stride 1 read 16 sectors per request (vec-4)
// and could not be told from a bad access.
TEST(SimReportFields, StridedCopyIdealSectors) {
  for (int stride : {1, 2, 4, 32}) {
    SimReport r = simulate("strided_copy", {{"stride", std::to_string(stride)}}, noUnfused());
    const Json* ld = globalLine(r.json, false);
    const Json* st = globalLine(r.json, true);
    ASSERT_TRUE(ld && st) << stride;
    const Json &lc = (*ld)["counters"], &sc = (*st)["counters"];
    const double expect = std::min(stride, 8);
    EXPECT_NEAR(lc["sectors_per_ideal"].get<double>(), expect, 0.02 * expect) << "stride " << stride;
    EXPECT_NEAR(lc["sectors_per_128B"].get<double>(), 4 * expect, 0.02 * 4 * expect) << "stride " << stride;
    EXPECT_DOUBLE_EQ(lc["sectors_per_128B"].get<double>(), 4.0 / lc["efficiency"].get<double>());
    EXPECT_DOUBLE_EQ(lc["sectors_per_ideal"].get<double>(),
                     lc["sectors"].get<double>() / lc["ideal_sectors"].get<double>());
    EXPECT_NEAR(sc["sectors_per_ideal"].get<double>(), 1.0, 0.02) << "stride " << stride;
    // The useful bytes are the same at every stride: 50000 floats read, 50000 written.
    EXPECT_EQ(lc["ideal_sectors"], sc["ideal_sectors"]) << "stride " << stride;
    EXPECT_EQ((*ld)["buffers"], Json::array({"x_ptr"}));
    EXPECT_EQ((*st)["buffers"], Json::array({"out_ptr"}));
    if (stride == 1) {  // vec-4: 16 per request
      EXPECT_GT(lc["sectors_per_request"].get<double>(), 15.0);
    }
    // Per instruction too, with its buffers.
    for (const Json& i : r.json["memory"]["instructions"])
      if (i["space"] == "global") {
        EXPECT_EQ(i["buffers"], Json::array({i["store"].get<bool>() ? "out_ptr" : "x_ptr"})) << i.dump();
        EXPECT_TRUE(i["counters"].contains("ideal_sectors"));
      }
  }
}

// SimOptions::keepLayouts (tl-sim --keep-layouts): the naive transpose keeps its store in the
// load's layout, so the store is uncoalesced (a lane every 4 x M bytes) where the default
// compilation converts through shared memory and stores coalesced. The report says which.
TEST(SimReportFields, KeepLayoutsShowsTheNaiveTranspose) {
  SimOptions o = noUnfused();
  SimReport converted = simulate("transpose", {}, o);
  o.keepLayouts = true;
  SimReport kept = simulate("transpose", {}, o);
  EXPECT_FALSE(converted.json["compile"]["keep_layouts"].get<bool>());
  EXPECT_TRUE(kept.json["compile"]["keep_layouts"].get<bool>());
  const double a = (*globalLine(converted.json, true))["counters"]["sectors_per_ideal"].get<double>();
  const double b = (*globalLine(kept.json, true))["counters"]["sectors_per_ideal"].get<double>();
  EXPECT_LT(a, 1.5);
  EXPECT_GT(b, 3.0);
  EXPECT_NE(kept.summary.find("layouts: kept as the source implies"), std::string::npos) << kept.summary;
  EXPECT_EQ(converted.summary.find("layouts: kept"), std::string::npos);
}

// The kernel totals carry the same fields, and vector_add's 16-byte accesses are perfect.
TEST(SimReportFields, VectorAddIsPerfectlyCoalesced) {
  SimReport r = simulate("vector_add", {}, noUnfused());
  for (const char* side : {"global_load", "global_store"}) {
    const Json& c = r.json["memory"]["totals"][side];
    EXPECT_DOUBLE_EQ(c["sectors_per_request"].get<double>(), 16.0) << side;
    EXPECT_DOUBLE_EQ(c["sectors_per_ideal"].get<double>(), 1.0) << side;
    EXPECT_DOUBLE_EQ(c["sectors_per_128B"].get<double>(), 4.0) << side;
  }
  // x and y are loaded on their own lines: each line names its buffer.
  std::set<std::string> loaded;
  for (const Json& l : r.json["memory"]["lines"])
    if (l["space"] == "global" && !l["store"].get<bool>()) {
      ASSERT_EQ(l["buffers"].size(), 1u) << l.dump();
      loaded.insert(l["buffers"][0].get<std::string>());
    }
  EXPECT_EQ(loaded, (std::set<std::string>{"x_ptr", "y_ptr"}));
  EXPECT_EQ((*globalLine(r.json, true))["buffers"], Json::array({"out_ptr"}));
}

// One per-line row per line + space + direction, whatever the number of instructions; its
// counters are the sum of the instructions'. The summary prints the merged rows (one per
// line), --full the instructions.
TEST(SimReportFields, PerLineRowsMergeALinesInstructions) {
  SimReport r = simulate("matmul", {}, noUnfused());
  const Json& mem = r.json["memory"];
  std::map<int64_t, const Json*> byId;
  for (const Json& i : mem["instructions"]) byId[i["instr"].get<int64_t>()] = &i;
  std::set<std::tuple<uint32_t, std::string, bool>> keys;
  size_t merged = 0;
  for (const Json& l : mem["lines"]) {
    auto key = std::make_tuple(l["line"].get<uint32_t>(), l["space"].get<std::string>(), l["store"].get<bool>());
    EXPECT_TRUE(keys.insert(key).second) << "two rows for " << l.dump();
    int64_t requests = 0;
    for (const Json& id : l["instrs"]) {
      const Json& i = *byId.at(id.get<int64_t>());
      EXPECT_EQ(i["line"], l["line"]);
      requests += i["counters"]["requests"].get<int64_t>();
    }
    EXPECT_EQ(l["counters"]["requests"].get<int64_t>(), requests);
    if (l["instrs"].size() > 1) ++merged;
  }
  ASSERT_GT(merged, 0u) << "the matmul's dot stages and reads a and b on one line";
  // The summary: one row per per-line entry (rows start with the line number and space).
  auto rows = [](const std::string& text, const std::string& prefix) {
    size_t n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
    return n;
  };
  for (const Json& l : mem["lines"]) {
    std::ostringstream prefix;
    prefix << "    " << l["line"].get<uint32_t>();
    prefix << std::string(5 - std::to_string(l["line"].get<uint32_t>()).size(), ' ') << " " << l["space"].get<std::string>();
    const std::string dir = l["store"].get<bool>() ? "store" : "load";
    size_t sameKey = 0;
    for (const Json& m : mem["lines"]) sameKey += m["line"] == l["line"] && m["space"] == l["space"];
    EXPECT_EQ(rows(r.summary, prefix.str()), sameKey) << prefix.str() << "\n" << r.summary;
  }
  SummaryOptions full;
  full.full = true;
  const std::string detail = formatSimReport(r.json, full);
  EXPECT_NE(detail.find("memory instructions:"), std::string::npos);
  EXPECT_EQ(r.summary.find("memory instructions:"), std::string::npos);
  // The default summary fits one screen.
  EXPECT_LE(std::count(r.summary.begin(), r.summary.end(), '\n'), 26) << r.summary;
}

// Theoretical (the occupancy calculator) and achieved (the timing model), labelled; achieved is
// never above theoretical. The softmax's 256 blocks give each of the 132 SMs at most 2 of the
// 16 it could hold, so its achieved occupancy is far lower.
TEST(SimReportFields, AchievedOccupancyIsAtMostTheoretical) {
  for (const std::string stem : {"vector_add", "softmax", "strided_copy", "matmul", "layernorm"}) {
    SimOptions o = noUnfused();
    o.sampleBlocks = 64;
    SimReport r = simulate(stem, {}, o);
    const Json& occ = r.json["occupancy"];
    EXPECT_DOUBLE_EQ(occ["theoretical"].get<double>(), occ["occupancy"].get<double>()) << stem;
    EXPECT_GT(occ["achieved"].get<double>(), 0.0) << stem;
    EXPECT_LE(occ["achieved"].get<double>(), occ["theoretical"].get<double>() + 1e-12) << stem;
    EXPECT_NEAR(occ["achieved"].get<double>(),
                occ["achieved_warps_per_sm"].get<double>() / occ["max_warps_per_sm"].get<double>(), 1e-12);
    EXPECT_FALSE(occ["achieved_method"].get<std::string>().empty());
    EXPECT_NE(r.summary.find("theoretical"), std::string::npos) << stem;
    EXPECT_NE(r.summary.find("achieved"), std::string::npos) << stem;
  }
  SimReport s = simulate("softmax", {}, noUnfused());
  const double small = s.json["occupancy"]["achieved"].get<double>();
  EXPECT_LT(small, 0.25);  // about 2 blocks of 4 warps / 64
  // 16 blocks per SM keep more warps active (the block scheduler's rate, 158 cycles a block,
  // still keeps the SM from filling all 16 slots at once).
  SimOptions o = noUnfused();
  o.sampleBlocks = 16;
  SimReport big = simulate("softmax", {{"M", "2112"}}, o);
  EXPECT_GT(big.json["occupancy"]["achieved"].get<double>(), 2 * small);
  EXPECT_EQ(big.json["timing"]["blocks_per_sm"], 16);
}

// What ran: the launch as evaluated, the source and its SHA-256, the GPU file and the version.
TEST(SimReportFields, LaunchSourceAndVersion) {
  auto k = compile("softmax", {{"M", "100"}});
  ASSERT_TRUE(k);
  SimOptions o = noUnfused();
  o.sourcePath = k->path;
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  const Json& j = r.json;
  std::ifstream in(k->path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(j["source"]["path"], k->path);
  EXPECT_EQ(j["source"]["sha256"], sha256Hex(text.str()));  // read from the path when no text is given
  EXPECT_EQ(j["source"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["source"]["bytes"], text.str().size());
  EXPECT_EQ(j["tool_version"], releaseVersion());
  EXPECT_EQ(j["gpu"]["file"], "sim/gpus/h200.json");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(TL_SOURCE_DIR) / j["gpu"]["file"].get<std::string>()));
  const Json& l = j["launch"];
  EXPECT_EQ(l["grid"], Json::array({100, 1, 1}));
  EXPECT_EQ(l["num_warps"], 4);
  EXPECT_EQ(l["sizes"]["M"], "100");
  EXPECT_EQ(l["sizes"]["N"], "781");
  // Like a tl-ptx results file's sizes: no grid, num_warps or buffers (they have fields of their own).
  EXPECT_FALSE(l["sizes"].contains("grid"));
  EXPECT_FALSE(l["sizes"].contains("num_warps"));
  EXPECT_FALSE(l["sizes"].contains("x_ptr"));
  EXPECT_EQ(l["constexprs"]["BLOCK_N"], 1024);
  EXPECT_EQ(l["scalars"]["N"], 781);
  ASSERT_EQ(l["buffers"].size(), 2u);
  EXPECT_EQ(l["buffers"][0]["name"], "x_ptr");
  EXPECT_EQ(l["buffers"][0]["dtype"], "f32");
  EXPECT_EQ(l["buffers"][0]["shape"], Json::array({100, 781}));
  EXPECT_EQ(l["buffers"][0]["bytes"], 100 * 781 * 4);
  EXPECT_EQ(l["buffers"][1]["output"], true);
  // Given text is what is hashed (an edited source that was never saved).
  o.sourceText = "edited";
  EXPECT_EQ(simulateKernel(*k->ir, k->launch, o).json["source"]["sha256"], sha256Hex("edited"));
  // No source given: null, not made up.
  SimReport none = simulateKernel(*k->ir, k->launch, noUnfused());
  EXPECT_TRUE(none.json["source"]["path"].is_null());
  EXPECT_TRUE(none.json["source"]["sha256"].is_null());
  EXPECT_NE(none.summary.find("source: (not given)"), std::string::npos);
}

// The 1,024 bytes the driver reserves per block (sm_80+): recorded, and explained in the summary.
TEST(SimReportFields, ReservedSharedMemoryIsExplained) {
  SimReport r = simulate("softmax", {}, noUnfused());
  const Json& occ = r.json["occupancy"];
  EXPECT_EQ(occ["shared_reserved_bytes_per_block"], 1024);
  const int used = occ["shared_bytes_per_block"].get<int>();
  EXPECT_EQ(occ["shared_allocated_bytes_per_block"], (used + 1024 + 127) / 128 * 128);
  EXPECT_NE(r.summary.find("1,024 B the driver reserves per block (sm_80+; reservedSharedPerBlock"), std::string::npos)
      << r.summary;
}

// A results file written without a GPU (tl-ptx on a machine with no driver): no time, no
// driver occupancy. The report says so (timed false, a note, nulls), the summary too.
TEST(SimReportFields, MeasuredWithoutAGpuRunSaysSo) {
  nlohmann::json m = {{"tool", "tl-ptx"},
                      {"source", "kernels/vector_add.tl"},
                      {"gpu", {{"ran", false}, {"skipped", "no CUDA driver (libcuda.so.1 not found)"}, {"device", ""}}},
                      {"time", {{"runs", 0}, {"median_ms", nullptr}}},
                      {"resources", {{"registers", 0}, {"blocks_per_sm", 0}}}};
  std::string why;
  EXPECT_FALSE(measuredHasTiming(m, &why));
  EXPECT_NE(why.find("no GPU run"), std::string::npos) << why;
  EXPECT_NE(why.find("libcuda.so.1"), std::string::npos) << why;
  SimOptions o = noUnfused();
  o.measured = &m;
  SimReport r = simulate("vector_add", {}, o);
  const Json& j = r.json["measured"];
  EXPECT_FALSE(j["timed"].get<bool>());
  EXPECT_FALSE(j["gpu_ran"].get<bool>());
  EXPECT_EQ(j["note"], why);
  for (const char* f : {"median_us", "gb_per_s", "time_error", "registers", "blocks_per_sm", "occupancy_agrees"})
    EXPECT_TRUE(j[f].is_null()) << f << ": " << j.dump();
  EXPECT_NE(r.summary.find("measured: none: the results file has no GPU run"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("us median"), std::string::npos) << r.summary;
  // A GPU run with no time, and a file that is not a results file.
  m["gpu"]["ran"] = true;
  EXPECT_FALSE(measuredHasTiming(m, &why));
  EXPECT_NE(why.find("no time"), std::string::npos) << why;
  EXPECT_FALSE(measuredHasTiming(nlohmann::json::object(), &why));
  EXPECT_NE(why.find("not a tl-ptx results file"), std::string::npos) << why;
}

// A real results file (the H200's, checked in) is timed and names the same source.
TEST(SimReportFields, MeasuredH200FileIsTimedAndMatchesTheSource) {
  std::ifstream in(std::string(TL_SOURCE_DIR) + "/bench/results/gpu/res/warm/softmax.json");
  ASSERT_TRUE(in) << "bench/results/gpu/res/warm/softmax.json";
  nlohmann::json m = nlohmann::json::parse(in);
  EXPECT_TRUE(measuredHasTiming(m));
  auto k = compile("softmax");
  ASSERT_TRUE(k);
  SimOptions o = noUnfused();
  o.measured = &m;
  o.sourcePath = k->path;
  SimReport r = simulateKernel(*k->ir, k->launch, o);
  const Json& j = r.json["measured"];
  EXPECT_TRUE(j["timed"].get<bool>());
  EXPECT_TRUE(j["launch_matches"].get<bool>());
  EXPECT_EQ(r.summary.find("WARNING"), std::string::npos) << r.summary;
  // Another launch: said so.
  auto other = compile("softmax", {{"M", "128"}});
  ASSERT_TRUE(other);
  SimReport o2 = simulateKernel(*other->ir, other->launch, o);
  EXPECT_FALSE(o2.json["measured"]["launch_matches"].get<bool>());
  EXPECT_NE(o2.summary.find("the results file ran another launch"), std::string::npos) << o2.summary;
  // The same launch, written the same way (compared as unordered objects).
  EXPECT_EQ(nlohmann::json::parse(j["sizes"].dump()), nlohmann::json::parse(r.json["launch"]["sizes"].dump()));
  EXPECT_GT(j["median_us"].get<double>(), 0.0);
  if (m.contains("source_sha256")) {
    EXPECT_EQ(j["source_matches"], m["source_sha256"].dump() == r.json["source"]["sha256"].dump());
  }
  EXPECT_NE(r.summary.find("us median"), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace tl

namespace tl {
namespace {

// Counts read as English: "1 block", "1 SM", never "1 blocks".
TEST(SimReportFields, SingularCountsInTheSummary) {
  SimReport r = simulate("vector_add", {{"N", "100"}}, noUnfused());
  EXPECT_NE(r.summary.find("1 block x 4 warps"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("mean over 1 SM,"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("the grid gives an SM 1 block,"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("1 blocks"), std::string::npos) << r.summary;
}

}  // namespace
}  // namespace tl
