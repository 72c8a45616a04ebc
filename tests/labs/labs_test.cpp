// Every lab in labs/ graded by tl-grade's engine, as CI must see it: the reference solution
// passes every check, the starter fails the checks its first line names, and every wrong
// solution in wrong/ fails the check(s) its first line names (`# expect-fail: id[, id...]`); the
// starter fails at least one check (and those its first line names, when it names any).
// Also the spec reader's errors and the metric evaluation, on specs written here.
#include <gtest/gtest.h>

#include <filesystem>
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

// The ids after "# expect-fail:" on a kernel's first line (empty when there is none).
std::set<std::string> expectedFailures(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::set<std::string> ids;
  const std::string tag = "# expect-fail:";
  if (line.rfind(tag, 0) != 0) return ids;
  std::stringstream ss(line.substr(tag.size()));
  for (std::string id; std::getline(ss, id, ',');) {
    id.erase(0, id.find_first_not_of(' '));
    id.erase(id.find_last_not_of(' ') + 1);
    if (!id.empty()) ids.insert(id);
  }
  return ids;
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
  EXPECT_TRUE(sol.allPass()) << formatResult(sol, spec);
  if (spec.performance.enabled) EXPECT_DOUBLE_EQ(sol.performance.earned, spec.performance.points);

  std::vector<fs::path> graded;
  if (!spec.starter.empty()) graded.push_back(spec.starter);
  ASSERT_TRUE(fs::is_directory(GetParam() / "wrong")) << "a lab has wrong solutions";
  for (const auto& e : fs::directory_iterator(GetParam() / "wrong"))
    if (e.path().extension() == ".tl") graded.push_back(e.path());
  EXPECT_GE(graded.size(), 5u) << "a starter and at least 4 wrong solutions";
  for (const fs::path& f : graded) {
    std::set<std::string> expect = expectedFailures(f);
    // A wrong solution names the checks it must fail; the starter may (it must fail something).
    if (f != spec.starter)
      ASSERT_FALSE(expect.empty()) << f << ": the first line must name the checks it fails (# expect-fail: id)";
    GradeResult r = gradeSubmission(spec, f.string(), ref);
    EXPECT_TRUE(r.infrastructureError.empty()) << f << ": " << r.infrastructureError;
    EXPECT_FALSE(r.allPass()) << f << "\n" << formatResult(r, spec);
    for (const std::string& id : expect) {
      const CheckOutcome* c = find(r, id);
      ASSERT_TRUE(c) << f << ": no check '" << id << "' in " << GetParam();
      EXPECT_FALSE(c->pass) << f << " must fail '" << id << "'\n" << formatResult(r, spec);
    }
  }
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

  // JSON and JUnit carry every check.
  nlohmann::ordered_json j = toJson(g);
  EXPECT_EQ(j["checks"].size(), g.checks.size());
  std::string xml = toJUnit({g}, "t");
  EXPECT_NE(xml.find("<testsuite name=\"t\""), std::string::npos);
  EXPECT_NE(xml.find("<failure"), std::string::npos);
}

}  // namespace
}  // namespace tl::grade
