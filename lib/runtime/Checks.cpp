// Correctness against intent (Checks.h): --expect files, --reference kernels, stage agreement
// and never-written outputs, printed one line each and collected as data for tl-grade.
#include "runtime/Checks.h"

#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "runtime/Driver.h"

namespace tl {

namespace fs = std::filesystem;

const char* checkAgainstName(CheckAgainst a) {
  switch (a) {
    case CheckAgainst::Stage: return "stage";
    case CheckAgainst::Expected: return "expected";
    case CheckAgainst::Reference: return "reference";
  }
  return "?";
}

bool CheckReport::pass() const {
  for (const auto& c : outputs)
    if (!c.cmp.pass) return false;
  return true;
}

static nlohmann::json shapeJson(const Shape& s) {
  nlohmann::json j = nlohmann::json::array();
  for (int64_t d : s) j.push_back(d);
  return j;
}

static nlohmann::json indexJson(const Shape& shape, int64_t flat) {
  nlohmann::json j = nlohmann::json::array();
  if (flat < 0) return j;
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t d = shape[k] > 0 ? shape[k] : 1;
    idx[k] = flat % d;
    flat /= d;
  }
  for (int64_t i : idx) j.push_back(i);
  return j;
}

nlohmann::json toJson(const CheckReport& r) {
  nlohmann::json j;
  j["pass"] = r.pass();
  j["intent_checked"] = r.intentChecked;
  j["outputs"] = nlohmann::json::array();
  for (const auto& c : r.outputs) {
    nlohmann::json o = {{"output", c.output},
                        {"against", checkAgainstName(c.kind)},
                        {"against_text", c.against},
                        {"shape", shapeJson(c.shape)},
                        {"dtype", dtypeName(c.dtype)},
                        {"pass", c.cmp.pass},
                        {"max_abs_err", c.cmp.maxAbsErr},
                        {"max_rel_err", c.cmp.maxRelErr},
                        {"atol", c.cmp.atol},
                        {"rtol", c.cmp.rtol},
                        {"mismatches", c.cmp.mismatches},
                        {"worst_index", indexJson(c.shape, c.cmp.worstIndex)},
                        {"reason", c.cmp.reason}};
    j["outputs"].push_back(std::move(o));
  }
  j["unwritten"] = nlohmann::json::array();
  for (const auto& u : r.unwritten)
    j["unwritten"].push_back({{"output", u.output},
                              {"count", u.unwritten.count},
                              {"numel", u.numel},
                              {"first_index", indexJson(u.shape, u.unwritten.first)}});
  return j;
}

static std::string shapeStr(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

CheckedOutput compareOutput(const Buffer& expected, const Memory& got, const std::string& name, CheckAgainst kind,
                          const std::string& against, const ToleranceOverride& tol) {
  CheckedOutput c;
  c.output = name;
  c.kind = kind;
  c.against = against;
  c.shape = expected.shape;
  c.dtype = expected.dtype;
  const Buffer* g = got.find(name);
  if (!g) {
    c.cmp.name = name;
    c.cmp.reason = "missing output";
  } else {
    c.cmp = compareBuffers(expected, *g, tol);
  }
  return c;
}

std::vector<CheckedOutput> compareAllOutputs(const Memory& reference, const Memory& got, CheckAgainst kind,
                                           const std::string& against, const ToleranceOverride& tol) {
  std::vector<CheckedOutput> out;
  for (const Buffer& ref : reference.buffers())
    if (ref.output) out.push_back(compareOutput(ref, got, ref.name, kind, against, tol));
  return out;
}

std::vector<UnwrittenOutput> findUnwritten(const Memory& memory) {
  std::vector<UnwrittenOutput> out;
  for (const Buffer& b : memory.buffers()) {
    if (!b.output) continue;
    Unwritten u = unwrittenElements(b);
    if (u.count > 0) out.push_back({b.name, b.shape, b.numel(), u});
  }
  return out;
}

void printCheck(const CheckedOutput& c, std::ostream& out) {
  out << "  " << (c.cmp.pass ? "PASS" : "FAIL") << " " << std::left << std::setw(10) << c.output << std::right
      << " vs " << c.against << "  " << shapeStr(c.shape) << " " << dtypeName(c.dtype);
  if (!c.cmp.reason.empty()) {
    out << "  " << c.cmp.reason << "\n";
    return;
  }
  std::ostringstream line;  // formatting flags stay local to this line
  line << std::scientific << std::setprecision(2) << "  max_abs_err=" << c.cmp.maxAbsErr
       << " max_rel_err=" << c.cmp.maxRelErr << "  tol: atol=" << c.cmp.atol << " rtol=" << c.cmp.rtol;
  if (!c.cmp.pass)
    line << "  mismatches=" << c.cmp.mismatches << " worst element " << formatIndex(c.shape, c.cmp.worstIndex);
  out << line.str() << "\n";
}

std::string describeUnwritten(const UnwrittenOutput& u) {
  return std::to_string(u.unwritten.count) + " of " + std::to_string(u.numel) + " element" +
         (u.numel == 1 ? "" : "s") + " of " + u.output + (u.unwritten.count == 1 ? " was" : " were") +
         " never stored (first at " + formatIndex(u.shape, u.unwritten.first) + ")";
}

// The reference kernel must describe the same problem: the same buffers (name, dtype, shape) and,
// for scalars both kernels take, the same values. Throws with the first difference.
static void checkSameProblem(const CompiledKernel& k, const CompiledKernel& ref) {
  const std::string who = "--reference " + ref.path;
  for (const BufferSpec& rb : ref.launch.buffers) {
    const BufferSpec* kb = k.launch.buffer(rb.param);
    if (!kb)
      throw std::runtime_error(who + ": the reference takes a buffer '" + rb.param + "' that " + k.path +
                               " does not have");
    if (rb.dtype != kb->dtype || rb.shape != kb->shape)
      throw std::runtime_error(who + ": buffer '" + rb.param + "' is " + shapeStr(rb.shape) + " " +
                               dtypeName(rb.dtype) + " there but " + shapeStr(kb->shape) + " " + dtypeName(kb->dtype) +
                               " here; give both the same sizes (--set)");
    if (rb.output != kb->output)
      throw std::runtime_error(who + ": buffer '" + rb.param + "' is an output in one kernel and not the other");
  }
  for (const BufferSpec& kb : k.launch.buffers)
    if (kb.output && !ref.launch.buffer(kb.param))
      throw std::runtime_error(who + ": the reference has no output '" + kb.param + "' to compare with");
  for (const auto& [name, v] : ref.launch.scalars) {
    auto it = k.launch.scalars.find(name);
    if (it == k.launch.scalars.end()) continue;
    bool same = isInt(v.dtype) == isInt(it->second.dtype) && (isInt(v.dtype) ? v.i == it->second.i : v.f == it->second.f);
    if (!same)
      throw std::runtime_error(who + ": scalar '" + name + "' differs between the kernels (" +
                               (isInt(v.dtype) ? std::to_string(v.i) : std::to_string(v.f)) + " there, " +
                               (isInt(it->second.dtype) ? std::to_string(it->second.i) : std::to_string(it->second.f)) +
                               " here); give both the same value (--set)");
  }
}

CheckReport runChecks(const CompiledKernel& k, const Memory& got, const IntentOptions& intent,
                         const std::vector<LaunchOverride>& overrides, const Engine& referenceEngine,
                         const Engine* stage, const Function* stageIR, std::ostream& out) {
  CheckReport report;
  for (const std::string& e : intent.expects) {
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == e.size())
      throw std::runtime_error("--expect expects PARAM=FILE.npy, got '" + e + "'");
    std::string param = e.substr(0, eq), file = e.substr(eq + 1);
    const Buffer* g = got.find(param);
    if (!g || !g->output)
      throw std::runtime_error("--expect " + e + ": '" + param + "' is not an output of " + k.path);
    Buffer expected = readNpy(file);
    expected.name = param;
    report.outputs.push_back(compareOutput(expected, got, param, CheckAgainst::Expected,
                                           "expected " + fs::path(file).filename().string(), intent.tolerance));
    report.intentChecked = true;
  }
  if (!intent.reference.empty()) {
    std::ostringstream err;
    auto ref = compileKernelFile(intent.reference, overrides, err);
    if (!ref) throw std::runtime_error("--reference " + intent.reference + " does not compile:\n" + err.str());
    checkSameProblem(k, *ref);
    Memory refMemory = Memory::fromLaunch(k.launch);  // the stage's inputs, byte for byte
    referenceEngine.run(*ref->ir, ref->launch, refMemory);
    std::vector<CheckedOutput> cs =
        compareAllOutputs(refMemory, got, CheckAgainst::Reference,
                          "reference " + fs::path(intent.reference).filename().string() + " (" + referenceEngine.name + ")",
                          intent.tolerance);
    report.outputs.insert(report.outputs.end(), cs.begin(), cs.end());
    report.intentChecked = true;
  }
  if (stage) {
    Memory refMemory = Memory::fromLaunch(k.launch);
    stage->run(stageIR ? *stageIR : *k.ir, k.launch, refMemory);
    std::vector<CheckedOutput> cs =
        compareAllOutputs(refMemory, got, CheckAgainst::Stage, stage->name + " (stage agreement)", intent.tolerance);
    report.outputs.insert(report.outputs.end(), cs.begin(), cs.end());
  }
  for (const auto& c : report.outputs) printCheck(c, out);
  report.unwritten = findUnwritten(got);
  for (const auto& u : report.unwritten) out << "  warning: " << describeUnwritten(u) << "\n";
  return report;
}

}  // namespace tl
