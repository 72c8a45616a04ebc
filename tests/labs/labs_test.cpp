// Every lab in labs/ graded by tl-grade's engine, as CI must see it: the reference solution
// passes every check, the starter fails the checks its first line names, and every wrong
// solution in wrong/ fails the check(s) its first line names (`# expect-fail: id[, id...]`); the
// starter fails at least one check (and those its first line names, when it names any).
// Also the spec reader's errors and the metric evaluation, on specs written here.
#include <gtest/gtest.h>

#include <filesystem>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "grader/Grader.h"

namespace tl::grade {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> labDirs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(TL_SOURCE_DIR) / "labs"))
    if (e.is_directory() && fs::exists(e.path() / "lab.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

const CheckOutcome* find(const GradeResult& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return &c;
  return nullptr;
}

class Lab : public ::testing::TestWithParam<fs::path> {};

TEST_P(Lab, SolutionPassesStarterAndWrongSolutionsFailTheirChecks) {
  LabSpec spec = loadLabSpec(GetParam());
  ReferenceRuns ref = runReference(spec, 12345);
  GradeResult sol = gradeSubmission(spec, spec.reference.string(), ref);
  if (spec.performance.enabled) {
    EXPECT_DOUBLE_EQ(sol.performance.earned, spec.performance.points);
  }
  // What `tl-grade LAB --check-lab` prints, one line per file.
  std::vector<LabFileVerdict> verdicts = checkLab(spec, ref);
  EXPECT_GE(verdicts.size(), 6u) << "the solution, a starter and at least 4 wrong solutions";
  for (const LabFileVerdict& v : verdicts) EXPECT_TRUE(v.ok) << v.line << "\n" << formatResult(gradeSubmission(spec, v.file, ref), spec);
}

// A fresh seed changes the inputs but never the verdict on the solution.
TEST_P(Lab, SolutionPassesAtAnotherSeed) {
  LabSpec spec = loadLabSpec(GetParam());
  ReferenceRuns ref = runReference(spec, 987654321);
  GradeResult sol = gradeSubmission(spec, spec.reference.string(), ref);
  EXPECT_TRUE(sol.allPass()) << formatResult(sol, spec);
}

INSTANTIATE_TEST_SUITE_P(Labs, Lab, ::testing::ValuesIn(labDirs()), [](const auto& info) {
  std::string n = info.param.filename().string();
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

// ----- the spec reader and the grader's own behaviour, on a lab written here

struct TempLab {
  fs::path dir;
  TempLab() {
    dir = fs::temp_directory_path() / ("tl-lab-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(dir);
  }
  ~TempLab() { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

const char* kScale = R"K(@launch(N=1000, BLOCK=256, grid=(cdiv(N, BLOCK),), x_ptr=randn(N, seed=1), out_ptr=zeros(N, output=True))
@jit
def scale(x_ptr, out_ptr, N, BLOCK: constexpr):
    offs = program_id(0) * BLOCK + arange(0, BLOCK)
    m = offs < N
    store(out_ptr + offs, load(x_ptr + offs, mask=m) * 2.0, mask=m)
)K";

std::string specText(const std::string& checks) {
  return R"J({"schema": 1, "title": "t", "kernel": {"params": ["x_ptr", "out_ptr", "N", "BLOCK: constexpr"]},
  "reference": "sol.tl", "problem": {"N": "1000", "x_ptr": "randn(N, seed=SEED)", "out_ptr": "zeros(N, output=True)"},
  "submission_chooses": ["BLOCK", "grid", "num_warps"],
  "launches": [{"name": "a"}, {"name": "b", "set": {"N": "777"}, "simulate": true}],
  "checks": )J" + checks + "}";
}

TEST(LabSpec, ErrorsNameTheJsonPath) {
  TempLab lab;
  lab.write("sol.tl", kScale);
  lab.write("lab.json", specText(R"J([{"id": "c", "kind": "corect"}])J"));
  try {
    loadLabSpec(lab.dir);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/checks/0/kind: unknown check kind 'corect'"), std::string::npos) << e.what();
  }
  lab.write("lab.json", specText(R"J([{"id": "m", "kind": "metric", "launch": "a", "field": "timing.time_us", "max": 1}])J"));
  try {
    loadLabSpec(lab.dir);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/checks/0/launch: launch 'a' is not simulated"), std::string::npos) << e.what();
  }
  lab.write("lab.json", specText(R"J([{"id": "c", "kind": "correct", "lanches": ["a"]}])J"));
  EXPECT_THROW(loadLabSpec(lab.dir), SpecError);  // a misspelt field is not ignored
}

TEST(LabSpec, SimulatedLaunchesMustBeCheckedForCorrectness) {
  // Otherwise a kernel that skips the work at exactly the simulated size earns its figures.
  TempLab lab;
  lab.write("sol.tl", kScale);
  lab.write("lab.json", specText(R"J([{"id": "c", "kind": "correct", "launches": ["a"]},
    {"id": "t", "kind": "metric", "launch": "b", "field": "timing.time_us", "max": 100}])J"));
  try {
    loadLabSpec(lab.dir);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("launch 'b' is graded on figures but no \"correct\" check covers it"), std::string::npos)
        << e.what();
  }
  // A metric path the reference's own report does not have is the lab's error (exit 2), not a
  // failure of every student.
  lab.write("lab.json", specText(R"J([{"id": "c", "kind": "correct"},
    {"id": "t", "kind": "metric", "launch": "b", "field": "timing.time_ms", "max": 100}])J"));
  LabSpec spec = loadLabSpec(lab.dir);
  try {
    runReference(spec, 1);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/checks/1 ('t'): on the reference solution's own report: the report has no "
                                         "number 'timing.time_ms'"),
              std::string::npos)
        << e.what();
  }
}

// A kernel that runs for ever costs its own submission only: the child is killed at the limit.
// A spec that runs launch "c" on tl-cpu: metrics on its tl-cpu report, points for measured time.
std::string cpuSpecText(const std::string& checks, const std::string& perfLaunch = "c") {
  std::string spec = specText(checks);
  spec.replace(spec.find("\"launches\": ["), std::string("\"launches\": [").size(),
               "\"cpu\": {\"threads\": 3, \"runs\": 4},\n  \"cpu_performance\": {\"launch\": \"" + perfLaunch +
                   "\", \"points\": 2},\n  \"launches\": [{\"name\": \"c\", \"set\": {\"N\": \"5000\"}, \"cpu\": true}, ");
  return spec;
}

TEST(LabSpec, CpuReportsAndTimesNeedCpuLaunches) {
  TempLab lab;
  lab.write("sol.tl", kScale);
  auto error = [&](const std::string& spec) {
    lab.write("lab.json", spec);
    try {
      loadLabSpec(lab.dir);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string correct = R"J({"id": "c", "kind": "correct"})J";
  EXPECT_NE(error(cpuSpecText("[" + correct + R"J(, {"id": "p", "kind": "metric", "launch": "b", "report": "cpu",
    "field": "programs", "min": 1}])J")).find("/checks/1/launch: launch 'b' does not run on tl-cpu"), std::string::npos);
  EXPECT_NE(error(cpuSpecText("[" + correct + R"J(, {"id": "p", "kind": "metric", "launch": "c", "report": "gpu",
    "field": "programs", "min": 1}])J")).find("/checks/1/report: expected \"sim\""), std::string::npos);
  EXPECT_NE(error(cpuSpecText("[" + correct + "]", "a")).find("/cpu_performance/launch: launch 'a' does not run on tl-cpu"),
            std::string::npos);
  std::string badThreads = cpuSpecText("[" + correct + "]");
  badThreads.replace(badThreads.find("\"threads\": 3"), std::string("\"threads\": 3").size(), "\"threads\": 1e30");
  EXPECT_NE(error(badThreads).find("/cpu/threads: expected a whole number from 1 to 1024"), std::string::npos)
      << error(badThreads);
  // A tl-cpu launch is graded on figures, so a correct check must cover it.
  EXPECT_NE(error(cpuSpecText(R"J([{"id": "c", "kind": "correct", "launches": ["a", "b"]}])J"))
                .find("launch 'c' is graded on figures"), std::string::npos);
}

#if TL_GRADE_HAVE_CPU
TEST(Grader, CpuLaunchesRunCompiledOnTheCpu) {
  TempLab lab;
  lab.write("sol.tl", kScale);
  lab.write("lab.json", cpuSpecText(R"J([{"id": "correct", "kind": "correct"}, {"id": "written", "kind": "written"},
    {"id": "in-bounds", "kind": "in_bounds"},
    {"id": "programs", "kind": "metric", "launch": "c", "report": "cpu", "field": "programs", "min": 10}])J"));
  LabSpec spec = loadLabSpec(lab.dir);
  ReferenceRuns ref = runReference(spec, 5);
  ASSERT_TRUE(ref.cpuReports.count("c"));
  EXPECT_EQ(ref.cpuReports.at("c")["programs"].get<int>(), 20);  // cdiv(5000, 256)
  EXPECT_EQ(ref.cpuReports.at("c")["cpu"]["threads"].get<int>(), 3);

  GradeResult sol = gradeSubmission(spec, spec.reference.string(), ref);
  EXPECT_TRUE(sol.allPass()) << formatResult(sol, spec);
  EXPECT_TRUE(sol.cpuPerformance.graded);
  EXPECT_GT(sol.cpuPerformance.submission, 0);
  EXPECT_GT(sol.cpuPerformance.reference, 0);
  GradeResult back = resultFromJson(nlohmann::json::parse(toJson(sol).dump()));
  EXPECT_DOUBLE_EQ(back.cpuPerformance.submission, sol.cpuPerformance.submission);
  EXPECT_DOUBLE_EQ(back.score, sol.score);

  // Larger blocks: 5 programs at N = 5000, under the metric's 10; still correct everywhere.
  std::string big = kScale;
  big.replace(big.find("BLOCK=256"), 9, "BLOCK=1024");
  lab.write("big.tl", big);
  GradeResult g = gradeSubmission(spec, (lab.dir / "big.tl").string(), ref);
  ASSERT_TRUE(find(g, "programs"));
  EXPECT_FALSE(find(g, "programs")->pass);
  EXPECT_NE(find(g, "programs")->detail.find("programs at launch 'c' = 5"), std::string::npos) << find(g, "programs")->detail;
  EXPECT_TRUE(find(g, "correct")->pass) << formatResult(g, spec);

  // A wrong value at the tl-cpu launch is caught there; an unmasked store runs past out on tl-cpu
  // and is reported at its line; an unwritten tail is found by tl-cpu's store tracking. Each is
  // kScale with one edit, failing `check` at launch 'c'.
  auto failsAtC = [&](const std::string& name, const std::string& from, const std::string& to, const std::string& check) {
    std::string text = kScale;
    text.replace(text.find(from), from.size(), to);
    lab.write(name, text);
    GradeResult r = gradeSubmission(spec, (lab.dir / name).string(), ref);
    const CheckOutcome* c = find(r, check);
    EXPECT_TRUE(c && !c->pass && c->detail.find("launch 'c'") != std::string::npos) << formatResult(r, spec);
    return r;
  };
  EXPECT_FALSE(failsAtC("wrong.tl", "* 2.0", "* 2.0 + (N > 4000)", "correct").cpuPerformance.graded);
  g = failsAtC("unmasked.tl", "* 2.0, mask=m)", "* 2.0)", "in-bounds");
  EXPECT_NE(find(g, "in-bounds")->detail.find("unmasked.tl:6:"), std::string::npos) << find(g, "in-bounds")->detail;
  failsAtC("tail.tl", "m = offs < N", "m = (offs < N) & (offs < 4096)", "written");
}
#endif

TEST(Grader, TimeLimitAndHiddenLaunches) {
  TempLab lab;
  lab.write("sol.tl", kScale);
  std::string spec = specText(R"J([{"id": "correct", "kind": "correct"}, {"id": "written", "kind": "written"},
    {"id": "in-bounds", "kind": "in_bounds"}])J");
  spec.replace(spec.find("{\"name\": \"b\", \"set\": {\"N\": \"777\"}, \"simulate\": true}"),
               std::string("{\"name\": \"b\", \"set\": {\"N\": \"777\"}, \"simulate\": true}").size(),
               "{\"name\": \"b\", \"set\": {\"N\": \"777\"}, \"hidden\": true}");
  lab.write("lab.json", spec);
  LabSpec s = loadLabSpec(lab.dir);
  ReferenceRuns ref = runReference(s, 3);
  std::string slow = kScale;
  slow.replace(slow.find("    offs = "), 0, "    s = 0\n    for i in range(0, 2000000000):\n        s = s + 1\n");
  slow.replace(slow.find("* 2.0"), 5, "* 2.0 + s * 0.0");
  lab.write("slow.tl", slow);
  GradeLimits limits;
  limits.seconds = 2;
  auto start = std::chrono::steady_clock::now();
  std::vector<GradeResult> rs = gradeClass(s, {(lab.dir / "slow.tl").string(), s.reference.string()}, ref, 2, limits);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_TRUE(find(rs[0], "time-limit")) << formatResult(rs[0], s);
  EXPECT_FALSE(find(rs[0], "time-limit")->pass);
  EXPECT_TRUE(rs[1].allPass()) << formatResult(rs[1], s);  // the class goes on

  // At a hidden launch (N = 777) a missing mask is reported at its line, without the sizes.
  std::string unmasked = kScale;
  unmasked.replace(unmasked.find("load(x_ptr + offs, mask=m)"), std::string("load(x_ptr + offs, mask=m)").size(),
                   "load(x_ptr + offs)");
  lab.write("unmasked.tl", unmasked);
  GradeResult g = gradeSubmission(s, (lab.dir / "unmasked.tl").string(), ref);
  const CheckOutcome* ib = find(g, "in-bounds");
  ASSERT_TRUE(ib);
  EXPECT_FALSE(ib->pass);
  EXPECT_NE(ib->detail.find("an unseen launch"), std::string::npos) << ib->detail;
  EXPECT_NE(ib->detail.find("unmasked.tl:6:"), std::string::npos) << ib->detail;
  EXPECT_EQ(ib->detail.find("777"), std::string::npos) << ib->detail;
  EXPECT_EQ(ib->detail.find("x 777"), std::string::npos) << ib->detail;

  // A child's result survives the trip through JSON.
  GradeResult back = resultFromJson(nlohmann::json::parse(toJson(g).dump()));
  EXPECT_EQ(back.checks.size(), g.checks.size());
  EXPECT_DOUBLE_EQ(back.score, g.score);
}

TEST(Grader, GatesAntiGamingAndMetrics) {
  TempLab lab;
  lab.write("sol.tl", kScale);
  lab.write("lab.json", specText(R"J([
    {"id": "correct", "kind": "correct"}, {"id": "written", "kind": "written"},
    {"id": "eff", "kind": "metric", "launch": "b", "value": "memory.instructions", "where": {"space": "global"},
     "field": "counters.efficiency", "aggregate": "min", "min": 0.5},
    {"id": "loads", "kind": "metric", "launch": "b", "value": "memory.instructions", "where": {"store": false, "space": "global"},
     "field": "counters.requests", "aggregate": "count", "min": 1, "max": 1}])J"));
  LabSpec spec = loadLabSpec(lab.dir);
  ReferenceRuns ref = runReference(spec, 3);

  // A submission that "passes" by setting its own problem: its N and its buffers are replaced.
  lab.write("game.tl", std::string(kScale).replace(std::string(kScale).find("N=1000"), 6, "N=10"));
  GradeResult g = gradeSubmission(spec, (lab.dir / "game.tl").string(), ref);
  EXPECT_TRUE(g.allPass()) << formatResult(g, spec);
  const CheckOutcome* eff = find(g, "eff");
  ASSERT_TRUE(eff && eff->value);
  EXPECT_GT(*eff->value, 0.5);

  // The wrong signature is a gate: nothing else is graded.
  lab.write("sig.tl", std::string(kScale).replace(std::string(kScale).find("def scale(x_ptr, out_ptr"), 24,
                                                  "def scale(out_ptr, x_ptr"));
  g = gradeSubmission(spec, (lab.dir / "sig.tl").string(), ref);
  ASSERT_TRUE(find(g, "signature") && find(g, "correct")) << formatResult(g, spec);
  EXPECT_FALSE(find(g, "signature")->pass);
  EXPECT_FALSE(find(g, "correct")->pass);
  EXPECT_NE(find(g, "signature")->detail.find("the lab requires: def <any name>(x_ptr, out_ptr, N, BLOCK: constexpr)"),
            std::string::npos)
      << find(g, "signature")->detail;

  // A compile error is shown at its line.
  lab.write("err.tl", std::string(kScale).replace(std::string(kScale).find("* 2.0"), 5, "* twoo"));
  g = gradeSubmission(spec, (lab.dir / "err.tl").string(), ref);
  ASSERT_TRUE(find(g, "compiles")) << formatResult(g, spec);
  EXPECT_FALSE(find(g, "compiles")->pass);
  EXPECT_NE(find(g, "compiles")->detail.find("err.tl:6:"), std::string::npos) << find(g, "compiles")->detail;

  // Two kernels in one file: the first is graded, and the report says so.
  lab.write("two.tl", std::string(kScale) + "\n@jit\ndef other(x_ptr, out_ptr, N, BLOCK: constexpr):\n"
                                            "    store(out_ptr + arange(0, BLOCK), load(x_ptr + arange(0, BLOCK)))\n");
  GradeResult two = gradeSubmission(spec, (lab.dir / "two.tl").string(), ref);
  EXPECT_TRUE(std::any_of(two.notes.begin(), two.notes.end(), [](const std::string& n) {
    return n.find("defines 2 @jit kernels; the first, 'scale', is the one graded") != std::string::npos;
  })) << formatResult(two, spec);

  // JSON and JUnit carry every check.
  nlohmann::ordered_json j = toJson(g);
  EXPECT_EQ(j["checks"].size(), g.checks.size());
  std::string xml = toJUnit({g}, "t");
  EXPECT_NE(xml.find("<testsuite name=\"t\""), std::string::npos);
  EXPECT_NE(xml.find("<failure"), std::string::npos);
}

}  // namespace
}  // namespace tl::grade
