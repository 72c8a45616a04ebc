// Loading and pairing measured GPU results for the visualizer (see Measured.h for the files,
// the pairing rule and the guarantees). Everything here is defensive: a results folder is data
// somebody copied from a GPU machine, so any field may be missing, any file truncated; nothing
// throws out of this file.
#include "viz/model/Measured.h"

#include "ir/FileRead.h"

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
  ReadFailure failure;
  std::optional<std::string> text = tryReadFileBounded(path.string(), FileKind::Results, &failure);
  if (!text) {
    why = failure.reason;
    return false;
  }
  out = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    why = "not valid JSON";
    return false;
  }
  return true;
}

bool dirExists(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string shortHash(const std::string& h) { return h.size() > 12 ? h.substr(0, 12) + "..." : h; }

std::string gridText(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + ")";
}

// Every *.json under `dir`, in path order (a folder that cannot be listed is a problem).
std::vector<fs::path> jsonFiles(const fs::path& dir, std::vector<std::string>& problems) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) {
    problems.push_back(dir.string() + ": cannot be listed (" + ec.message() + ")");
    return files;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code fec;
    if (it->path().extension() == ".json" && it->is_regular_file(fec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The best reason seen so far for "no measurement for this launch": a same-source run at
// another launch says more than another source, which says more than a missing hash.
struct NoteCandidate {
  int rank = -1;
  std::string text;
  void offer(int r, const std::string& t) {
    if (r > rank) {
      rank = r;
      text = t;
    }
  }
};

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
  r.source = text(doc, "/source");
  r.sourceSha256 = text(doc, "/source_sha256");
  if (const Json* g = at(doc, "/grid"); g && g->is_array() && g->size() == 3)
    for (size_t d = 0; d < 3; ++d) r.grid[d] = (*g)[d].is_number_integer() ? (*g)[d].get<int64_t>() : 0;
  r.warmCache = at(doc, "/compile_ms/cache_hit") && at(doc, "/compile_ms/cache_hit")->is_boolean() &&
                at(doc, "/compile_ms/cache_hit")->get<bool>();
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
  if (text(doc, "/tool") == "tl-cpu") {
    r.device = text(doc, "/cpu/model");
    r.threads = static_cast<int>(number(doc, "/cpu/threads"));
    r.isa = text(doc, "/cpu/isa");
  }
  r.raw = doc;
  out = std::move(r);
  return true;
}

std::vector<std::string> launchDifferences(const MeasuredRun& run, const LaunchConfig& launch) {
  // One definition of "the same launch": the Fusion and Timings panels list the same lines.
  std::vector<std::string> out = sizeDifferences(run.sizes, run.numWarps, launch, launch.numWarps);
  bool recorded = run.grid[0] > 0 || run.grid[1] > 0 || run.grid[2] > 0;
  std::array<int64_t, 3> here{launch.grid[0], launch.grid[1], launch.grid[2]};
  if (recorded && run.grid != here) out.push_back("grid: " + gridText(run.grid) + " measured, " + gridText(here) + " here");
  return out;
}

bool measuredMatchesLaunch(const MeasuredRun& run, const LaunchConfig& launch) { return launchDifferences(run, launch).empty(); }

Pairing pairMeasurement(const MeasuredRun& run, const std::string& sourceSha256, const LaunchConfig& launch,
                        bool checkLaunch) {
  Pairing p;
  const std::string what = run.file.empty() ? std::string("the measurement") : run.file;
  if (sourceSha256.empty()) {
    p.reason = "the SHA-256 of this source is not known";
  } else if (run.sourceSha256.empty()) {
    p.reason = what + " was measured before tl-ptx recorded source_sha256, so nothing proves which source of " +
               (run.source.empty() ? std::string("its kernel") : run.source) + " ran";
  } else if (run.sourceSha256 != sourceSha256) {
    p.reason = what + " measured another source (SHA-256 " + shortHash(run.sourceSha256) + ", this source " +
               shortHash(sourceSha256) + ")";
  } else {
    p.sameSource = true;
    std::vector<std::string> diffs = checkLaunch ? launchDifferences(run, launch) : std::vector<std::string>{};
    if (diffs.empty()) {
      p.paired = true;
    } else {
      p.reason = what + " measured this source at another launch (";
      for (size_t i = 0; i < diffs.size(); ++i) p.reason += (i ? "; " : "") + diffs[i];
      p.reason += ")";
    }
  }
  return p;
}

MeasuredSet loadMeasured(const std::string& dirText, const std::string& sourceSha256, const std::string& sourcePath,
                         const LaunchConfig& launch) {
  MeasuredSet set;
  set.dir = dirText;
  if (dirText.empty()) {
    set.note = "no measurement for this source: no results folder (--measured DIR)";
    return set;
  }
  const std::string stem = kernelStem(sourcePath);
  NoteCandidate note;
  // Only documents that name this kernel file (or carry its hash) are worth a reason; a folder
  // full of other kernels' files says "none measured this source".
  auto consider = [&](const MeasuredRun& run, const Pairing& p) {
    bool related = p.sameSource || kernelStem(run.source) == stem;
    if (!related) return;
    note.offer(p.sameSource ? 3 : !run.sourceSha256.empty() ? 2 : 1, p.reason);
  };
  std::vector<MeasuredRun> paired;

  for (const fs::path& f : jsonFiles(dirText, set.problems)) {
    Json doc;
    std::string why;
    if (!readJson(f, doc, why)) {
      set.problems.push_back(f.string() + ": " + why);
      continue;
    }
    if (const Json* rows = at(doc, "/rows")) {  // a comparison file
      if (!rows->is_array()) {
        set.problems.push_back(f.string() + ": \"rows\" is not an array");
        continue;
      }
      for (size_t i = 0; i < rows->size(); ++i) {
        const Json& row = (*rows)[i];
        const Json* tl = at(row, "/tilelab");
        MeasuredRun run;
        if (!tl || !measuredFromJson(*tl, f.string() + " row " + std::to_string(i), run, nullptr)) continue;
        Pairing p = pairMeasurement(run, sourceSha256, launch, /*checkLaunch=*/false);
        if (!p.paired) continue;
        TimingRow t;
        t.shape = text(row, "/shape");
        t.measuredMs = number(row, "/tilelab_ms");
        t.tritonMs = number(row, "/triton_ms");
        t.torchMs = number(row, "/torch_ms");
        for (const auto& [k, v] : run.sizes) t.sets.push_back(k + "=" + v);
        if (run.numWarps > 0) t.sets.push_back("num_warps=" + std::to_string(run.numWarps));
        if (t.measuredMs <= 0) t.measuredMs = run.medianMs;
        if (t.shape.empty()) t.shape = sizesText(run.sizes);
        if (t.measuredMs <= 0) {
          set.problems.push_back(f.string() + ": row " + std::to_string(i) + " has no tilelab_ms");
          continue;
        }
        set.timings.push_back(std::move(t));
        set.timingDocs.push_back(*tl);
      }
      continue;
    }
    const std::string tool = text(doc, "/tool");
    if (!doc.is_object() || !doc.contains("schema_version") || (tool != "tl-ptx" && tool != "tl-cpu"))
      continue;  // not a results file
    MeasuredRun run;
    if (!measuredFromJson(doc, f.string(), run, &why)) {
      set.problems.push_back(why);
      continue;
    }
    if (tool == "tl-cpu") {  // the CPU column: this source at this launch, the most threads
      if (run.medianMs > 0 && pairMeasurement(run, sourceSha256, launch).paired &&
          (!set.cpuRun || run.threads > set.cpuRun->threads))
        set.cpuRun = std::move(run);
      continue;
    }
    if (run.unfused) {
      if (pairMeasurement(run, sourceSha256, launch, false).paired) set.unfused.push_back(std::move(run));
      continue;
    }
    Pairing p = pairMeasurement(run, sourceSha256, launch);
    if (p.paired)
      paired.push_back(std::move(run));
    else
      consider(run, p);
  }
  // Several runs of this source at this launch (a cold- and a warm-cache run): the warm one.
  auto warm = std::find_if(paired.begin(), paired.end(), [](const MeasuredRun& r) { return r.warmCache; });
  if (warm != paired.end())
    set.run = *warm;
  else if (!paired.empty())
    set.run = paired.front();
  if (!set.run)
    set.note = "no measurement for this source: " +
               (note.rank >= 0 ? note.text : "no results file in " + dirText + " measured it");
  return set;
}

}  // namespace tl::viz
