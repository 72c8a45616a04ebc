// lab.json -> LabSpec, validating every field (LabSpec.h; the format is docs/labs.md).
#include "grader/LabSpec.h"

#include "ir/FileRead.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace tl::grade {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const char* checkKindName(CheckKind k) {
  switch (k) {
    case CheckKind::Correct: return "correct";
    case CheckKind::Written: return "written";
    case CheckKind::InBounds: return "in_bounds";
    case CheckKind::RaceFree: return "race_free";
    case CheckKind::Metric: return "metric";
  }
  return "?";
}

const LabLaunch* LabSpec::findLaunch(const std::string& name) const {
  for (const auto& l : launches)
    if (l.name == name) return &l;
  return nullptr;
}

bool LabSpec::hasCpuLaunches() const {
  return std::any_of(launches.begin(), launches.end(), [](const LabLaunch& l) { return l.cpu; });
}

bool LabSpec::needsFusion() const {
  for (const auto& c : checks)
    if (c.kind == CheckKind::Metric && c.report == "sim" && (c.field.rfind("fusion.", 0) == 0 || c.divideBy.rfind("fusion.", 0) == 0))
      return true;
  return false;
}

const nlohmann::json* lookup(const nlohmann::json& j, const std::string& dottedPath) {
  const nlohmann::json* cur = &j;
  std::stringstream ss(dottedPath);
  std::string key;
  while (std::getline(ss, key, '.')) {
    if (cur->is_object()) {
      auto it = cur->find(key);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos) {
      size_t i = std::stoul(key);
      if (i >= cur->size()) return nullptr;
      cur = &(*cur)[i];
    } else {
      return nullptr;
    }
  }
  return cur;
}

namespace {

// Reads one spec, reporting problems at their JSON path.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw SpecError(file_ + ": " + (path.empty() ? "/" : path) + ": " + msg);
  }

  const ojson& need(const ojson& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing \"") + key + "\"");
    return *it;
  }
  std::string str(const ojson& v, const std::string& path) const {
    if (!v.is_string()) fail(path, "expected a string");
    return v.get<std::string>();
  }
  double num(const ojson& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number");
    return v.get<double>();
  }
  bool boolean(const ojson& v, const std::string& path) const {
    if (!v.is_boolean()) fail(path, "expected true or false");
    return v.get<bool>();
  }
  // {"N": "300", "alpha": 1.5}: @launch expressions; numbers are accepted and written as text.
  Assignments assignments(const ojson& v, const std::string& path) const {
    if (!v.is_object()) fail(path, "expected an object of NAME: \"EXPR\"");
    Assignments out;
    for (const auto& [k, e] : v.items()) {
      if (e.is_string()) out.emplace_back(k, e.get<std::string>());
      else if (e.is_number_integer()) out.emplace_back(k, std::to_string(e.get<int64_t>()));
      else if (e.is_number()) out.emplace_back(k, e.dump());
      else fail(path + "/" + k, "expected an expression (a string) or a number");
    }
    return out;
  }
  // Rejects keys a reader does not know (a typo must not be ignored silently).
  void onlyKeys(const ojson& obj, const std::string& path, std::initializer_list<const char*> keys) const {
    for (const auto& [k, v] : obj.items()) {
      bool known = false;
      for (const char* key : keys) known = known || k == key;
      if (!known) {
        std::string list;
        for (const char* key : keys) list += std::string(list.empty() ? "" : ", ") + key;
        fail(path + "/" + k, "unknown field (known: " + list + ")");
      }
    }
  }

 private:
  std::string file_;
};

// "performance" / "cpu_performance": which launch, and how the time ratio becomes points.
LabPerformance parsePerformance(const Reader& r, const ojson& pf, const std::string& path, const LabSpec& spec,
                                bool onCpu) {
  r.onlyKeys(pf, path, {"launch", "points", "full_within", "minimal_beyond", "zero_beyond", "minimal_points"});
  LabPerformance perf;
  perf.enabled = true;
  perf.launch = r.str(r.need(pf, path, "launch"), path + "/launch");
  const LabLaunch* l = spec.findLaunch(perf.launch);
  if (!l) r.fail(path + "/launch", "no launch named '" + perf.launch + "'");
  if (onCpu && !l->cpu) r.fail(path + "/launch", "launch '" + perf.launch + "' does not run on tl-cpu (add \"cpu\": true)");
  if (!onCpu && !l->simulate) r.fail(path + "/launch", "launch '" + perf.launch + "' is not simulated");
  perf.points = r.num(r.need(pf, path, "points"), path + "/points");
  if (pf.contains("full_within")) perf.fullWithin = r.num(pf["full_within"], path + "/full_within");
  // "zero_beyond" is "minimal_beyond" with no minimal points.
  if (pf.contains("zero_beyond")) perf.minimalBeyond = r.num(pf["zero_beyond"], path + "/zero_beyond");
  if (pf.contains("minimal_beyond")) perf.minimalBeyond = r.num(pf["minimal_beyond"], path + "/minimal_beyond");
  if (pf.contains("minimal_points")) perf.minimalPoints = r.num(pf["minimal_points"], path + "/minimal_points");
  if (!(perf.fullWithin >= 1 && perf.minimalBeyond > perf.fullWithin)) r.fail(path, "need 1 <= full_within < minimal_beyond");
  if (perf.minimalPoints < 0 || perf.minimalPoints > perf.points)
    r.fail(path + "/minimal_points", "must be between 0 and points");
  return perf;
}

CheckKind parseKind(const Reader& r, const std::string& s, const std::string& path) {
  for (CheckKind k : {CheckKind::Correct, CheckKind::Written, CheckKind::InBounds, CheckKind::RaceFree, CheckKind::Metric})
    if (s == checkKindName(k)) return k;
  r.fail(path, "unknown check kind '" + s + "' (correct, written, in_bounds, race_free, metric)");
}

}  // namespace

LabSpec loadLabSpec(const fs::path& labDir) {
  LabSpec spec;
  spec.dir = fs::absolute(labDir);
  const fs::path file = spec.dir / "lab.json";
  const std::string fileName = (labDir / "lab.json").string();
  std::error_code ec;
  ReadFailure failure;
  std::optional<std::string> text = tryReadFileBounded(file.string(), FileKind::Json, &failure);
  if (!text)
    throw SpecError(fileName + ": " + (failure.cause == ReadFailure::CannotOpen && failure.error == ENOENT
                                           ? std::string("not found (a lab folder holds lab.json)")
                                           : failure.reason));
  ojson j = ojson::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw SpecError(fileName + ": not valid JSON");
  Reader r(fileName);
  r.onlyKeys(j, "", {"schema", "title", "kernel", "reference", "starter", "compile", "problem", "submission_chooses",
                     "tolerance", "launches", "checks", "performance", "cpu", "cpu_performance"});
  if (r.num(r.need(j, "", "schema"), "/schema") != 1) r.fail("/schema", "this grader reads schema 1");
  spec.title = r.str(r.need(j, "", "title"), "/title");

  const ojson& kernel = r.need(j, "", "kernel");
  r.onlyKeys(kernel, "/kernel", {"name", "params"});
  if (kernel.contains("name")) spec.kernelName = r.str(kernel["name"], "/kernel/name");
  const ojson& params = r.need(kernel, "/kernel", "params");
  if (!params.is_array() || params.empty()) r.fail("/kernel/params", "expected a non-empty list of parameter names");
  for (size_t i = 0; i < params.size(); ++i) {
    std::string p = r.str(params[i], "/kernel/params/" + std::to_string(i));
    ParamSpec ps;
    auto colon = p.find(':');
    ps.name = p.substr(0, colon);
    while (!ps.name.empty() && ps.name.back() == ' ') ps.name.pop_back();
    if (colon != std::string::npos) {
      std::string annot = p.substr(colon + 1);
      annot.erase(0, annot.find_first_not_of(' '));
      if (annot != "constexpr") r.fail("/kernel/params/" + std::to_string(i), "only ': constexpr' may follow a name");
      ps.isConstexpr = true;
    }
    spec.params.push_back(ps);
  }

  spec.reference = spec.dir / r.str(r.need(j, "", "reference"), "/reference");
  if (!fs::is_regular_file(spec.reference, ec)) r.fail("/reference", spec.reference.string() + " does not exist");
  if (j.contains("starter")) spec.starter = spec.dir / r.str(j["starter"], "/starter");
  if (j.contains("compile")) {
    r.onlyKeys(j["compile"], "/compile", {"keep_layouts"});
    if (j["compile"].contains("keep_layouts"))
      spec.keepLayouts = r.boolean(j["compile"]["keep_layouts"], "/compile/keep_layouts");
  }
  spec.problem = r.assignments(r.need(j, "", "problem"), "/problem");
  if (j.contains("submission_chooses")) {
    const ojson& sc = j["submission_chooses"];
    if (!sc.is_array()) r.fail("/submission_chooses", "expected a list of @launch keywords");
    for (size_t i = 0; i < sc.size(); ++i) spec.submissionChooses.insert(r.str(sc[i], "/submission_chooses/" + std::to_string(i)));
  }
  if (j.contains("tolerance")) {
    r.onlyKeys(j["tolerance"], "/tolerance", {"atol", "rtol"});
    if (j["tolerance"].contains("atol")) spec.tolerance.atol = r.num(j["tolerance"]["atol"], "/tolerance/atol");
    if (j["tolerance"].contains("rtol")) spec.tolerance.rtol = r.num(j["tolerance"]["rtol"], "/tolerance/rtol");
  }

  if (j.contains("cpu")) {
    const ojson& c = j["cpu"];
    r.onlyKeys(c, "/cpu", {"threads", "runs"});
    auto count = [&](const char* key, double hi) {  // a whole number in [1, hi], checked before the cast
      const std::string path = std::string("/cpu/") + key;
      double v = r.num(c[key], path);
      if (!(v >= 1 && v <= hi) || v != std::floor(v)) r.fail(path, "expected a whole number from 1 to " + std::to_string(int(hi)));
      return static_cast<int>(v);
    };
    if (c.contains("threads")) spec.cpu.threads = count("threads", 1024);
    if (c.contains("runs")) spec.cpu.runs = count("runs", 1000);
  }

  const ojson& launches = r.need(j, "", "launches");
  if (!launches.is_array() || launches.empty()) r.fail("/launches", "expected a non-empty list");
  for (size_t i = 0; i < launches.size(); ++i) {
    const std::string p = "/launches/" + std::to_string(i);
    const ojson& l = launches[i];
    r.onlyKeys(l, p, {"name", "set", "hidden", "simulate", "cpu", "steps"});
    LabLaunch ll;
    ll.name = r.str(r.need(l, p, "name"), p + "/name");
    if (spec.findLaunch(ll.name)) r.fail(p + "/name", "launch '" + ll.name + "' is named twice");
    if (l.contains("set")) ll.set = r.assignments(l["set"], p + "/set");
    if (l.contains("hidden")) ll.hidden = r.boolean(l["hidden"], p + "/hidden");
    if (l.contains("simulate")) ll.simulate = r.boolean(l["simulate"], p + "/simulate");
    if (l.contains("cpu")) ll.cpu = r.boolean(l["cpu"], p + "/cpu");
    if (l.contains("steps")) {
      if (ll.cpu) r.fail(p + "/steps", "a tl-cpu launch has one step");
      const ojson& steps = l["steps"];
      if (!steps.is_array() || steps.empty()) r.fail(p + "/steps", "expected a non-empty list");
      for (size_t s = 0; s < steps.size(); ++s) {
        const std::string sp = p + "/steps/" + std::to_string(s);
        r.onlyKeys(steps[s], sp, {"set", "feed"});
        LabStep st;
        if (steps[s].contains("set")) st.set = r.assignments(steps[s]["set"], sp + "/set");
        if (steps[s].contains("feed")) {
          if (s == 0) r.fail(sp + "/feed", "the first step has no previous step to feed from");
          for (const auto& [dst, src] : r.assignments(steps[s]["feed"], sp + "/feed")) st.feed.emplace_back(dst, src);
        }
        ll.steps.push_back(std::move(st));
      }
    } else {
      ll.steps.emplace_back();
    }
    spec.launches.push_back(std::move(ll));
  }

  const ojson& checks = r.need(j, "", "checks");
  if (!checks.is_array() || checks.empty()) r.fail("/checks", "expected a non-empty list");
  std::set<std::string> ids;
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::string p = "/checks/" + std::to_string(i);
    const ojson& c = checks[i];
    r.onlyKeys(c, p, {"id", "kind", "hint", "points", "launches", "launch", "report", "value", "where", "field",
                      "aggregate", "divide_by", "relative_to_reference", "min", "max"});
    LabCheck lc;
    lc.id = r.str(r.need(c, p, "id"), p + "/id");
    if (!ids.insert(lc.id).second) r.fail(p + "/id", "check '" + lc.id + "' is named twice");
    lc.kind = parseKind(r, r.str(r.need(c, p, "kind"), p + "/kind"), p + "/kind");
    if (c.contains("hint")) lc.hint = r.str(c["hint"], p + "/hint");
    if (c.contains("points")) lc.points = r.num(c["points"], p + "/points");
    if (c.contains("launches")) {
      if (!c["launches"].is_array()) r.fail(p + "/launches", "expected a list of launch names");
      for (size_t k = 0; k < c["launches"].size(); ++k) {
        std::string name = r.str(c["launches"][k], p + "/launches/" + std::to_string(k));
        if (!spec.findLaunch(name)) r.fail(p + "/launches/" + std::to_string(k), "no launch named '" + name + "'");
        lc.launches.push_back(name);
      }
    }
    if (lc.kind == CheckKind::Metric) {
      lc.launch = r.str(r.need(c, p, "launch"), p + "/launch");
      const LabLaunch* l = spec.findLaunch(lc.launch);
      if (!l) r.fail(p + "/launch", "no launch named '" + lc.launch + "'");
      if (c.contains("report")) {
        lc.report = r.str(c["report"], p + "/report");
        if (lc.report != "sim" && lc.report != "cpu") r.fail(p + "/report", "expected \"sim\" (tl-sim) or \"cpu\" (tl-cpu)");
      }
      if (lc.report == "sim" && !l->simulate)
        r.fail(p + "/launch", "launch '" + lc.launch + "' is not simulated (add \"simulate\": true)");
      if (lc.report == "cpu" && !l->cpu)
        r.fail(p + "/launch", "launch '" + lc.launch + "' does not run on tl-cpu (add \"cpu\": true)");
      lc.field = r.str(r.need(c, p, "field"), p + "/field");
      if (c.contains("value")) lc.value = r.str(c["value"], p + "/value");
      if (c.contains("where")) {
        if (!c["where"].is_object()) r.fail(p + "/where", "expected an object of field: value");
        for (const auto& [k, v] : c["where"].items()) lc.where.emplace_back(k, nlohmann::json::parse(v.dump()));
      }
      if (c.contains("aggregate")) {
        lc.aggregate = r.str(c["aggregate"], p + "/aggregate");
        if (lc.aggregate != "max" && lc.aggregate != "min" && lc.aggregate != "sum" && lc.aggregate != "mean" &&
            lc.aggregate != "count")
          r.fail(p + "/aggregate", "expected max, min, sum, mean or count");
      }
      if (c.contains("divide_by")) lc.divideBy = r.str(c["divide_by"], p + "/divide_by");
      if (c.contains("relative_to_reference"))
        lc.relativeToReference = r.boolean(c["relative_to_reference"], p + "/relative_to_reference");
      if (c.contains("min")) lc.min = r.num(c["min"], p + "/min");
      if (c.contains("max")) lc.max = r.num(c["max"], p + "/max");
      if (!lc.min && !lc.max) r.fail(p, "a metric check needs \"min\" or \"max\"");
      if (lc.min && lc.max && *lc.min > *lc.max) r.fail(p, "\"min\" is above \"max\": nothing can pass");
    } else {
      for (const char* k : {"launch", "report", "value", "where", "field", "aggregate", "divide_by", "relative_to_reference",
                            "min", "max"})
        if (c.contains(k)) r.fail(p + "/" + k, std::string("only metric checks take \"") + k + "\"");
    }
    spec.checks.push_back(std::move(lc));
  }

  // A simulated or tl-cpu launch is graded on figures: its outputs must be checked too, or a
  // kernel that skips the work at exactly that size would earn them.
  for (size_t i = 0; i < spec.launches.size(); ++i) {
    const LabLaunch& l = spec.launches[i];
    if (!l.simulate && !l.cpu) continue;
    bool checked = false;
    for (const LabCheck& c : spec.checks)
      checked = checked || (c.kind == CheckKind::Correct &&
                            (c.launches.empty() || std::find(c.launches.begin(), c.launches.end(), l.name) != c.launches.end()));
    if (!checked)
      r.fail("/launches/" + std::to_string(i), "launch '" + l.name +
                                                   "' is graded on figures but no \"correct\" check covers it: a kernel that "
                                                   "skips work at that size would earn its figures");
  }

  if (j.contains("performance")) spec.performance = parsePerformance(r, j["performance"], "/performance", spec, false);
  if (j.contains("cpu_performance"))
    spec.cpuPerformance = parsePerformance(r, j["cpu_performance"], "/cpu_performance", spec, true);
  return spec;
}

}  // namespace tl::grade
