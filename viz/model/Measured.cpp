// Loading measured GPU results for the visualizer (see Measured.h for the files and the
// guarantees). Everything here is defensive: a results folder is data somebody copied from a GPU
// machine, so any field may be missing, any file truncated; nothing throws out of this file.
#include "viz/model/Measured.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "viz/model/Comparisons.h"

namespace fs = std::filesystem;

namespace tl::viz {

namespace {

using Json = nlohmann::json;

// The value at a JSON pointer ("/time/median_ms"), or nullptr when absent.
const Json* at(const Json& doc, const char* pointer) {
  Json::json_pointer p(pointer);
  if (!doc.is_object() || !doc.contains(p)) return nullptr;
  return &doc.at(p);
}

double number(const Json& doc, const char* pointer, double fallback = 0) {
  const Json* v = at(doc, pointer);
  return v && v->is_number() ? v->get<double>() : fallback;
}

std::string text(const Json& doc, const char* pointer) {
  const Json* v = at(doc, pointer);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// A JSON scalar as the text a --set would use ("781", "1e-05").
std::string scalarText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    std::ostringstream os;
    os << v.get<double>();
    return os.str();
  }
  return v.dump();
}

// Reads and parses a JSON file; on failure returns false with the reason.
bool readJson(const fs::path& path, Json& out, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot be opened";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  out = Json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    why = "not valid JSON";
    return false;
  }
  return true;
}

bool fileExists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

bool dirExists(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// Does a results document belong to the kernel file `stem`? Its "source" (the .tl path it ran)
// decides; a document without one is accepted on its file name alone.
bool sourceMatches(const Json& doc, const std::string& stem) {
  std::string source = text(doc, "/source");
  return source.empty() || kernelStem(source) == stem;
}

}  // namespace

std::string kernelStem(const std::string& kernelPath) { return fs::path(kernelPath).stem().string(); }

std::string findResultsDir(const std::string& kernelPath, const std::string& explicitDir) {
  if (!explicitDir.empty()) return dirExists(explicitDir) ? explicitDir : std::string();
  std::vector<fs::path> candidates;
  fs::path kernelDir = fs::path(kernelPath).parent_path();
  candidates.push_back((kernelDir.empty() ? fs::path(".") : kernelDir) / ".." / "bench" / "results" / "gpu");
  candidates.push_back(fs::path("bench") / "results" / "gpu");
#ifdef TL_SOURCE_DIR
  candidates.push_back(fs::path(TL_SOURCE_DIR) / "bench" / "results" / "gpu");
#endif
  for (const auto& c : candidates)
    if (dirExists(c)) return c.lexically_normal().string();
  return "";
}

bool measuredFromJson(const Json& doc, const std::string& file, MeasuredRun& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = file + ": " + why;
    return false;
  };
  if (!doc.is_object()) return fail("not a JSON object");
  const Json* median = at(doc, "/time/median_ms");
  if (!at(doc, "/kernel") || !at(doc, "/kernel")->is_string()) return fail("no \"kernel\" name");
  if (!median || !median->is_number()) return fail("no \"time\": {\"median_ms\"} (did the GPU run?)");
  MeasuredRun r;
  r.file = file;
  r.device = text(doc, "/gpu/device");
  if (const Json* sizes = at(doc, "/sizes"); sizes && sizes->is_object())
    for (const auto& [k, v] : sizes->items()) r.sizes[k] = scalarText(v);
  r.medianMs = median->get<double>();
  r.minMs = number(doc, "/time/min_ms");
  r.gbPerS = number(doc, "/throughput/gb_per_s");
  r.bytes = number(doc, "/throughput/bytes");
  r.registers = static_cast<int>(number(doc, "/resources/registers"));
  r.blocksPerSM = static_cast<int>(number(doc, "/resources/blocks_per_sm"));
  r.numWarps = static_cast<int>(number(doc, "/num_warps"));
  r.unfused = doc.contains("unfused");
  r.raw = doc;
  out = std::move(r);
  return true;
}

MeasuredSet loadMeasured(const std::string& resultsDir, const std::string& kernelPath) {
  MeasuredSet set;
  set.dir = resultsDir;
  if (resultsDir.empty()) return set;
  const std::string stem = kernelStem(kernelPath);
  const fs::path dir(resultsDir);

  // The default launch.
  fs::path warm = dir / "res" / "warm" / (stem + ".json");
  if (fileExists(warm)) {
    Json doc;
    std::string why;
    MeasuredRun run;
    if (!readJson(warm, doc, why))
      set.problems.push_back(warm.string() + ": " + why);
    else if (!sourceMatches(doc, stem))
      set.problems.push_back(warm.string() + ": measured " + text(doc, "/source") + ", not this kernel");
    else if (measuredFromJson(doc, warm.string(), run, &why))
      set.run = std::move(run);
    else
      set.problems.push_back(why);
  }

  // Unfused runs: <stem>.json or <stem>_<anything>.json whose source is this kernel.
  fs::path unfusedDir = dir / "unfused";
  if (dirExists(unfusedDir)) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(unfusedDir, ec)) {
      std::string name = e.path().filename().string();
      if (e.path().extension() != ".json") continue;
      if (name == stem + ".json" || name.rfind(stem + "_", 0) == 0) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      Json doc;
      std::string why;
      MeasuredRun run;
      if (!readJson(f, doc, why)) {
        set.problems.push_back(f.string() + ": " + why);
        continue;
      }
      if (!sourceMatches(doc, stem)) continue;  // softmax_rows_*.json is another kernel's
      if (measuredFromJson(doc, f.string(), run, &why))
        set.unfused.push_back(std::move(run));
      else
        set.problems.push_back(why);
    }
  }

  // compare.json: the rows of this kernel.
  fs::path compare = dir / "compare.json";
  if (fileExists(compare)) {
    Json doc;
    std::string why;
    if (!readJson(compare, doc, why)) {
      set.problems.push_back(compare.string() + ": " + why);
    } else if (const Json* rows = at(doc, "/rows"); !rows || !rows->is_array()) {
      set.problems.push_back(compare.string() + ": no \"rows\" array");
    } else {
      for (size_t i = 0; i < rows->size(); ++i) {
        const Json& row = (*rows)[i];
        if (!row.is_object() || text(row, "/kernel") != stem) continue;
        const Json* tl = at(row, "/tilelab");
        if (tl && tl->is_object() && !sourceMatches(*tl, stem)) continue;
        TimingRow t;
        t.shape = text(row, "/shape");
        t.measuredMs = number(row, "/tilelab_ms");
        t.tritonMs = number(row, "/triton_ms");
        t.torchMs = number(row, "/torch_ms");
        if (tl && tl->is_object()) {
          if (const Json* sizes = at(*tl, "/sizes"); sizes && sizes->is_object())
            for (const auto& [k, v] : sizes->items()) t.sets.push_back(k + "=" + scalarText(v));
          if (int w = static_cast<int>(number(*tl, "/num_warps")); w > 0)
            t.sets.push_back("num_warps=" + std::to_string(w));
          if (t.measuredMs <= 0) t.measuredMs = number(*tl, "/time/median_ms");
        }
        if (t.shape.empty()) {
          for (const auto& s : t.sets) t.shape += (t.shape.empty() ? "" : " ") + s;
        }
        if (t.measuredMs <= 0) {
          set.problems.push_back(compare.string() + ": row " + std::to_string(i) + " has no tilelab_ms");
          continue;
        }
        set.timings.push_back(std::move(t));
        set.timingDocs.push_back(tl && tl->is_object() ? *tl : Json());
      }
    }
  }
  return set;
}

bool measuredMatchesLaunch(const MeasuredRun& run, const LaunchConfig& launch) {
  // One definition of "the same launch": the Fusion and Timings panels list the differences.
  return sizeDifferences(run.sizes, run.numWarps, launch, launch.numWarps).empty();
}

}  // namespace tl::viz
