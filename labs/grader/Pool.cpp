// Grading many submissions (Grader.h, gradeClass): one child process per submission, `jobs` at
// a time, each with a wall-time and an address-space limit; checkLab, which grades a lab's own
// files against what they say they fail; and the JSON a child hands its result back in.
//
// Why processes: a submission is arbitrary code for the simulator. A kernel that loops for ever
// (a grid-stride loop that steps by num_programs(0) instead of num_programs(0) * BLOCK), one that
// needs more memory than the machine has, or a crash in the compiler on strange input must cost
// that submission only. A child is killed with its process group at the time limit; the parent
// never starts threads, so fork() is safe.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "grader/Grader.h"
#include "runtime/Sanitizers.h"  // kAddressSanitizer: no RLIMIT_AS under ASan

namespace tl::grade {

namespace fs = std::filesystem;

GradeResult resultFromJson(const nlohmann::json& j) {
  GradeResult r;
  r.submission = j.value("submission", "");
  r.sourceSha256 = j.value("source_sha256", "");
  r.seed = j.value("seed", uint64_t(0));
  r.score = j.value("score", 0.0);
  r.maxScore = j.value("max_score", 0.0);
  r.seconds = j.value("seconds", 0.0);
  r.infrastructureError = j.value("infrastructure_error", "");
  for (const auto& n : j.value("notes", nlohmann::json::array())) r.notes.push_back(n.get<std::string>());
  for (const auto& c : j.value("checks", nlohmann::json::array())) {
    CheckOutcome o;
    o.id = c.value("id", "");
    o.kind = c.value("kind", "");
    o.pass = c.value("pass", false);
    o.points = c.value("points", 0.0);
    o.detail = c.value("detail", "");
    o.hint = c.value("hint", "");
    if (c.contains("value") && c["value"].is_number()) o.value = c["value"].get<double>();
    r.checks.push_back(std::move(o));
  }
  auto perf = [&](const char* key, const char* submissionKey, const char* referenceKey, PerformanceOutcome& o) {
    if (!j.contains(key)) return;
    const auto& p = j[key];
    o.graded = p.value("graded", false);
    o.points = p.value("points", 0.0);
    o.earned = p.value("earned", 0.0);
    o.submission = p.value(submissionKey, 0.0);
    o.reference = p.value(referenceKey, 0.0);
    o.ratio = p.value("ratio", 0.0);
    o.detail = p.value("detail", "");
  };
  perf("performance", "predicted_us", "reference_us", r.performance);
  perf("cpu_performance", "measured_ms", "reference_ms", r.cpuPerformance);
  return r;
}

namespace {

// The result of a submission whose child did not hand one back.
GradeResult stopped(const LabSpec& spec, const std::string& file, uint64_t seed, const std::string& gate,
                    const std::string& why, bool graderFault) {
  GradeResult r;
  r.submission = file;
  r.seed = seed;
  if (graderFault) {
    r.infrastructureError = why;
    return r;
  }
  r.checks.push_back({gate, gate, false, 0, why,
                      "Look for a loop whose bound or step is not what you meant: tl-thread runs your kernel with "
                      "the same launch and shows how long it takes.",
                      std::nullopt});
  for (const LabCheck& c : spec.checks)
    r.checks.push_back({c.id, checkKindName(c.kind), false, c.points, "not graded: " + gate + " failed", "", {}});
  for (const auto& c : r.checks) r.maxScore += c.points;
  for (auto [pf, po] : {std::pair{&spec.performance, &r.performance}, std::pair{&spec.cpuPerformance, &r.cpuPerformance}})
    if (pf->enabled) {
      po->points = pf->points;
      po->detail = "not graded: " + gate + " failed";
      r.maxScore += pf->points;
    }
  return r;
}

struct Running {
  pid_t pid = -1;
  size_t index = 0;
  std::string out;  // where the child writes its result
  std::chrono::steady_clock::time_point start;
};

}  // namespace

std::vector<GradeResult> gradeClass(const LabSpec& spec, const std::vector<std::string>& files,
                                    const ReferenceRuns& reference, unsigned jobs, const GradeLimits& limits,
                                    const std::function<void(size_t, size_t)>& onDone) {
  std::vector<GradeResult> results(files.size());
  char tmpl[] = "/tmp/tl-grade-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("cannot make a temporary folder: ") + std::strerror(errno));
  const fs::path tmp(tmpl);
  std::vector<Running> running;
  size_t next = 0, done = 0;
  jobs = std::max(1u, jobs);

  auto start = [&](size_t i) {
    Running r;
    r.index = i;
    r.out = (tmp / (std::to_string(i) + ".json")).string();
    r.start = std::chrono::steady_clock::now();
    std::cout.flush();
    std::cerr.flush();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {  // the child: grade, write the JSON, leave without running the parent's atexit work
      setpgid(0, 0);
      if (limits.memoryBytes && !kAddressSanitizer) {
        rlimit rl{limits.memoryBytes, limits.memoryBytes};
        setrlimit(RLIMIT_AS, &rl);
      }
      GradeResult g = gradeSubmission(spec, files[i], reference);
      std::string text = toJson(g).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      std::ofstream(r.out) << text;
      _exit(0);
    }
    setpgid(pid, pid);
    r.pid = pid;
    running.push_back(r);
  };
  auto finish = [&](const Running& r, int status) {
    const std::string& file = files[r.index];
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      std::ifstream in(r.out);
      nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      results[r.index] = j.is_discarded()
                             ? stopped(spec, file, reference.seed, "grading", "the grading process wrote no result", true)
                             : resultFromJson(j);
    } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      results[r.index] = stopped(spec, file, reference.seed, "time-limit",
                                 "grading was stopped after " + std::to_string(int(limits.seconds)) +
                                     " s: the kernel runs far longer than the lab's reference on the simulator",
                                 false);
    } else {
      results[r.index] = stopped(spec, file, reference.seed, "grading",
                                 "the grading process died (" +
                                     (WIFSIGNALED(status) ? std::string(strsignal(WTERMSIG(status)))
                                                          : "exit " + std::to_string(WEXITSTATUS(status))) +
                                     "): a bug in tilelab, not in the submission",
                                 true);
    }
    fs::remove(r.out);
    ++done;
    if (onDone) onDone(done, files.size());
  };

  while (next < files.size() || !running.empty()) {
    while (running.size() < jobs && next < files.size()) start(next++);
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      auto it = std::find_if(running.begin(), running.end(), [&](const Running& r) { return r.pid == pid; });
      if (it != running.end()) {
        Running r = *it;
        running.erase(it);
        finish(r, status);
      }
      continue;
    }
    auto now = std::chrono::steady_clock::now();
    for (auto it = running.begin(); it != running.end();) {
      if (limits.seconds > 0 && std::chrono::duration<double>(now - it->start).count() > limits.seconds) {
        kill(-it->pid, SIGKILL);  // the child and its ptxas
        waitpid(it->pid, &status, 0);
        Running r = *it;
        it = running.erase(it);
        finish(r, status);
      } else {
        ++it;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return results;
}

std::vector<std::string> expectedFailures(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> ids;
  const std::string tag = "# expect-fail:";
  if (line.rfind(tag, 0) != 0) return ids;
  std::stringstream ss(line.substr(tag.size()));
  for (std::string id; std::getline(ss, id, ',');) {
    id.erase(0, id.find_first_not_of(" \t\r"));
    id.erase(id.find_last_not_of(" \t\r") + 1);
    if (!id.empty()) ids.push_back(id);
  }
  return ids;
}

std::vector<LabFileVerdict> checkLab(const LabSpec& spec, const ReferenceRuns& reference) {
  std::vector<LabFileVerdict> out;
  auto rel = [&](const fs::path& p) { return p.lexically_relative(spec.dir).generic_string(); };
  auto verdict = [&](const fs::path& f, bool mustPass) {
    GradeResult r = gradeSubmission(spec, f.string(), reference);
    LabFileVerdict v;
    v.file = f.string();
    std::vector<std::string> expect = expectedFailures(f.string());
    std::vector<std::string> failing;
    for (const auto& c : r.checks)
      if (!c.pass) failing.push_back(c.id);
    auto list = [](const std::vector<std::string>& xs) {
      std::string s;
      for (const auto& x : xs) s += (s.empty() ? "" : ", ") + x;
      return s.empty() ? std::string("nothing") : s;
    };
    if (!r.infrastructureError.empty()) {
      v.line = "ERROR " + rel(f) + ": " + r.infrastructureError;
    } else if (mustPass) {
      v.ok = r.allPass();
      v.line = (v.ok ? "ok    " : "FAIL  ") + rel(f) + (v.ok ? " passes every check" : " fails " + list(failing));
    } else {
      std::vector<std::string> missing;
      for (const auto& id : expect)
        if (std::find(failing.begin(), failing.end(), id) == failing.end()) missing.push_back(id);
      bool named = !expect.empty() || f == spec.starter;
      v.ok = named && missing.empty() && !r.allPass();
      v.line = std::string(v.ok ? "ok    " : "FAIL  ") + rel(f) + " fails " + list(failing);
      if (!named) v.line += " (its first line must name what it fails: # expect-fail: id)";
      if (!missing.empty()) v.line += "; expected to fail " + list(missing) + " too";
      if (r.allPass()) v.line += "; it passes every check";
    }
    out.push_back(std::move(v));
  };
  verdict(spec.reference, true);
  if (!spec.starter.empty()) verdict(spec.starter, false);
  std::vector<fs::path> wrong;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(spec.dir / "wrong", ec))
    if (e.path().extension() == ".tl") wrong.push_back(e.path());
  std::sort(wrong.begin(), wrong.end());
  for (const auto& f : wrong) verdict(f, false);
  return out;
}

}  // namespace tl::grade
