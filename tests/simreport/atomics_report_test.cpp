// Atomics in tl-sim's report (was tests/triton/repro/sim_atomics_summary.tl): the per-line table
// of the summary lists an atomic line as "atomic", not "store"; the JSON has the atomics' totals
// (memory.totals.global_atomic), their Nsight Compute metrics with the field each comes from,
// the executor's atomic count and the timing model's serialized cycles.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/Driver.h"
#include "sim/SimReport.h"

namespace tl {
namespace {

using Json = nlohmann::ordered_json;

SimReport simulateHistogram(int n) {
  std::ostringstream err;
  auto k = compileKernelFile(std::string(TL_SOURCE_DIR) + "/tests/simreport/kernels/histogram_atomics.tl",
                             {{"N", std::to_string(n)}}, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return {};
  SimOptions o;
  o.unfused = false;
  return simulateKernel(*k->ir, k->launch, o);
}

// The summary's row of one source line (the table's lines start with four spaces and the line).
std::string summaryRow(const std::string& summary, int line) {
  std::istringstream in(summary);
  std::string row;
  const std::string head = "    " + std::to_string(line) + " ";
  while (std::getline(in, row))
    if (row.rfind(head, 0) == 0 && row.find("global") != std::string::npos) return row;
  return "";
}

TEST(SimReportAtomics, SummaryListsAtomicLinesAsAtomics) {
  SimReport r = simulateHistogram(1000);
  for (int line : {17, 18, 19}) {
    const std::string row = summaryRow(r.summary, line);
    EXPECT_NE(row.find(" atomic "), std::string::npos) << line << ": " << row << "\n" << r.summary;
    EXPECT_EQ(row.find(" store "), std::string::npos) << row;
  }
  const std::string plain = summaryRow(r.summary, 20);  // tl.store
  EXPECT_NE(plain.find(" store "), std::string::npos) << plain;
  EXPECT_NE(summaryRow(r.summary, 16).find(" load "), std::string::npos);  // tl.load
  // (The atomics whose old values are used hand them to the replicas through shared memory:
  // shared rows of lines 17-19, plain stores and loads.)
  for (const Json& l : r.json["memory"]["lines"]) {
    const uint32_t line = l["line"];
    const bool atomicLine = l["space"] == "global" && line >= 17 && line <= 19;
    EXPECT_EQ(l["atomics"].get<size_t>(), atomicLine ? l["instrs"].size() : 0) << l.dump();
  }
  for (const Json& i : r.json["memory"]["instructions"])
    EXPECT_EQ(i["atomic"].get<bool>(), i["op"] == "atom_global") << i.dump();
}

TEST(SimReportAtomics, TotalsMetricsCountsAndSerialCycles) {
  for (int n : {1000, 300}) {
    SimReport r = simulateHistogram(n);
    const Json& j = r.json;
    const Json& a = j["memory"]["totals"]["global_atomic"];
    // Every program: line 17's and 19's atomics on n elements in all, line 18's one per program.
    const int64_t programs = (n + 127) / 128;
    EXPECT_EQ(j["execution"]["atomics"].get<int64_t>(), 2 * n + programs) << n;
    EXPECT_EQ(a["thread_accesses"].get<int64_t>(), 2 * n + programs) << a.dump();
    EXPECT_GT(a["executions"].get<int64_t>(), 0);
    EXPECT_GT(a["sectors"].get<int64_t>(), 0);
    // Each atomic metric names its field, and its value is that field's.
    int found = 0;
    for (const Json& m : j["memory"]["ncu_metrics"]) {
      const std::string name = m["metric"], ours = m["ours"];
      EXPECT_FALSE(ours.empty()) << name;
      if (name.find("_atom") == std::string::npos) continue;
      ++found;
      ASSERT_EQ(ours.rfind("global_atomic.", 0), 0u) << name << " -> " << ours;
      EXPECT_EQ(m["value"].get<double>(), a[ours.substr(14)].get<double>()) << name;
    }
    EXPECT_EQ(found, 4);  // executions, requests, sectors, L2 sectors (the H200 has caches)
    // The hottest bin gets about n/7 + n/7 updates: the serialized cycles are at least that many.
    EXPECT_GE(j["timing"]["atomic_serial_cycles"].get<int64_t>(), 2 * n / 7 / 2) << j["timing"].dump();
  }
}

}  // namespace
}  // namespace tl
