// GPU descriptions: the four shipped files load and say what the CUDA tables say; a missing
// field, an unknown field, a wrong type or an inconsistent figure is an error naming the file
// and the field; keys cannot escape the folder; $TL_GPU_DIR is searched first.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/Gpu.h"

namespace tl {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The h100 description as JSON, to edit into bad files.
ordered_json h100Json() { return ordered_json::parse(gpuToJson(loadGpu("h100"))); }

std::string parseError(const ordered_json& j) {
  return errorOf([&] { parseGpuJson(j.dump(), "bad.json", "h100"); });
}

TEST(GpuLoad, ShippedDescriptionsLoad) {
  std::vector<std::string> keys = listGpus();
  for (const char* k : {"a100", "h100", "h200", "rtx4090"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
    GpuSpec g = loadGpu(k);
    EXPECT_EQ(g.key, k);
    EXPECT_FALSE(g.sources.empty());
    EXPECT_EQ(g.sharedCarveoutsKB.back() * 1024, g.sharedPerSM);
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

// Figures from the CUDA C++ Programming Guide's per-compute-capability table.
TEST(GpuLoad, FiguresMatchComputeCapabilityTable) {
  GpuSpec h200 = loadGpu("h200"), a100 = loadGpu("a100"), ada = loadGpu("rtx4090");
  EXPECT_EQ(h200.arch, "sm_90");
  EXPECT_EQ(h200.smCount, 132);
  EXPECT_EQ(h200.sharedPerSM, 228 * 1024);
  EXPECT_EQ(h200.maxSharedPerBlock, 227 * 1024);
  EXPECT_EQ(a100.sharedPerSM, 164 * 1024);
  EXPECT_EQ(a100.maxSharedPerBlock, 163 * 1024);
  EXPECT_EQ(a100.smCount, 108);
  EXPECT_EQ(ada.maxThreadsPerSM, 1536);
  EXPECT_EQ(ada.maxBlocksPerSM, 24);
  EXPECT_EQ(ada.sharedPerSM, 100 * 1024);
  for (const GpuSpec* g : {&h200, &a100, &ada}) {
    EXPECT_EQ(g->registersPerSM, 65536);
    EXPECT_EQ(g->reservedSharedPerBlock, 1024);
    EXPECT_EQ(g->registerAllocUnit, 256);
    EXPECT_EQ(g->sharedAllocUnit, 128);
  }
}

// The H200's bandwidth is the one measured on the lab's machine, not the datasheet's.
TEST(GpuLoad, H200UsesMeasuredBandwidth) {
  GpuSpec h200 = loadGpu("h200");
  EXPECT_TRUE(h200.dramBandwidthMeasured);
  EXPECT_EQ(h200.dramBandwidthVendorGBs, 4800);
  EXPECT_LT(h200.dramBandwidthGBs, h200.dramBandwidthVendorGBs);
  EXPECT_EQ(h200.l2Bytes, 60 << 20);  // cudaGetDeviceProperties on the H200 (the H100 SXM has 50 MiB)
  EXPECT_EQ(h200.dramLatencyCycles, 666);  // sim/gpus/measured/h200_latency_probe.json
  const char* anchors = "/work/shared/anchors/h200.json";
  if (!fs::exists(anchors)) GTEST_SKIP() << anchors << " not on this machine";
  std::ifstream in(anchors);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(h200.dramBandwidthGBs, j["device_to_device_copy_GBps"].get<double>());
}

TEST(GpuLoad, JsonRoundTrips) {
  for (const std::string& k : listGpus()) {
    GpuSpec g = loadGpu(k);
    GpuSpec again = parseGpuJson(gpuToJson(g), k + ".json", k);
    EXPECT_EQ(gpuToJson(again), gpuToJson(g)) << k;
  }
}

TEST(GpuLoad, MissingFieldIsNamed) {
  ordered_json j = h100Json();
  j.erase("l2Bytes");
  EXPECT_EQ(parseError(j), "bad.json: field 'l2Bytes': missing (every GpuSpec field must be given)");
}

TEST(GpuLoad, UnknownFieldIsNamed) {
  ordered_json j = h100Json();
  j["l2bytes"] = 5;
  EXPECT_EQ(parseError(j), "bad.json: unknown field 'l2bytes' (did you mean 'l2Bytes'?)");
  j = h100Json();
  j["tensorCores"] = 528;
  EXPECT_EQ(parseError(j), "bad.json: unknown field 'tensorCores'");
}

TEST(GpuLoad, WrongTypesAreNamed) {
  ordered_json j = h100Json();
  j["smCount"] = "many";
  EXPECT_EQ(parseError(j), "bad.json: field 'smCount': expected an integer, got \"many\"");
  j = h100Json();
  j["smCount"] = 132.5;
  EXPECT_EQ(parseError(j), "bad.json: field 'smCount': expected an integer, got 132.5");
  j = h100Json();
  j["smCount"] = 1e12;
  EXPECT_NE(parseError(j).find("field 'smCount'"), std::string::npos);
  j = h100Json();
  j["smCount"] = 99999999999LL;
  EXPECT_EQ(parseError(j), "bad.json: field 'smCount': value 99999999999 is too large");
  j = h100Json();
  j["dramBandwidthMeasured"] = 1;
  EXPECT_EQ(parseError(j), "bad.json: field 'dramBandwidthMeasured': expected true or false, got 1");
  j = h100Json();
  j["sharedCarveoutsKB"] = {0, "8"};
  EXPECT_EQ(parseError(j), "bad.json: field 'sharedCarveoutsKB': expected an integer, got \"8\"");
  j = h100Json();
  j["sources"] = "a paper";
  EXPECT_EQ(parseError(j), "bad.json: field 'sources': expected an array of strings, got \"a paper\"");
}

TEST(GpuLoad, BadValuesAreNamed) {
  ordered_json j = h100Json();
  j["smCount"] = -3;
  EXPECT_EQ(parseError(j), "bad.json: field 'smCount': must be positive, got -3");
  j = h100Json();
  j["arch"] = "sm_80";
  EXPECT_EQ(parseError(j), "bad.json: field 'arch': 'sm_80' does not match computeCapability 90 (expected 'sm_90')");
  j = h100Json();
  j["maxWarpsPerSM"] = 48;
  EXPECT_EQ(parseError(j), "bad.json: field 'maxWarpsPerSM': 48 warps x 32 != maxThreadsPerSM 2048");
  j = h100Json();
  j["sharedCarveoutsKB"] = {0, 8, 16, 32, 64, 100, 132, 164, 196};
  EXPECT_EQ(parseError(j),
            "bad.json: field 'sharedCarveoutsKB': the largest carve-out (196 KB) must equal sharedPerSM (233472 bytes)");
  j = h100Json();
  j["sharedCarveoutsKB"] = {0, 16, 8, 228};
  EXPECT_EQ(parseError(j), "bad.json: field 'sharedCarveoutsKB': sizes must be strictly ascending");
  j = h100Json();
  j["sectorBytes"] = 48;
  EXPECT_EQ(parseError(j), "bad.json: field 'sectorBytes': must be a positive power of two, got 48");
  j = h100Json();
  j["computeCapability"] = 61;
  j["arch"] = "sm_61";
  EXPECT_EQ(parseError(j), "bad.json: field 'computeCapability': the simulator models sm_70 .. sm_12x, got 61");
  j = h100Json();
  j["key"] = "h200";
  EXPECT_EQ(parseError(j), "bad.json: field 'key': 'h200' does not match the file name ('h100')");
  j = h100Json();
  j["sources"] = ordered_json::array();
  EXPECT_EQ(parseError(j), "bad.json: field 'sources': must cite at least one source");
}

TEST(GpuLoad, MalformedJson) {
  std::string e = errorOf([] { parseGpuJson("{\"name\": \"x\",\n \"key\": }", "broken.json", "broken"); });
  EXPECT_EQ(e.rfind("broken.json: invalid JSON: ", 0), 0u) << e;
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  e = errorOf([] { parseGpuJson("[1, 2]", "array.json", "array"); });
  EXPECT_EQ(e, "array.json: expected a JSON object of GPU fields");
}

TEST(GpuLoad, KeysCannotEscapeTheFolder) {
  std::string e = errorOf([] { loadGpu("../../etc/passwd"); });
  EXPECT_NE(e.find("a GPU key is lower-case letters, digits and '_'"), std::string::npos) << e;
  e = errorOf([] { loadGpu("b200"); });
  EXPECT_NE(e.find("no sim/gpus/b200.json (known: a100, h100, h200"), std::string::npos) << e;
  e = errorOf([] { loadGpuFile("/nonexistent/h100.json"); });
  EXPECT_EQ(e, "/nonexistent/h100.json: cannot read the GPU description: No such file or directory");
}

TEST(GpuLoad, EnvironmentFolderIsSearchedFirst) {
  fs::path dir = fs::temp_directory_path() / ("tl_gpu_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ordered_json j = h100Json();
  j["key"] = "mygpu";
  j["smCount"] = 7;
  std::ofstream(dir / "mygpu.json") << j.dump(1);
  ::setenv("TL_GPU_DIR", dir.c_str(), 1);
  GpuSpec g = loadGpu("mygpu");
  std::vector<std::string> keys = listGpus();
  ::unsetenv("TL_GPU_DIR");
  fs::remove_all(dir);
  EXPECT_EQ(g.smCount, 7);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "mygpu"), keys.end());
  EXPECT_NE(std::find(keys.begin(), keys.end(), "h200"), keys.end());
}

}  // namespace
}  // namespace tl
