// Lab 4's one-pass variant (issue 12, section 7): labs/04-reduction/wrong/one_pass_load_store.tl
// adds every program's partial into out_ptr[0] with a plain load and store. It must fail the lab's
// race-free check, with the race shown at its lines, both programs named, while the solution and
// a correct one-pass sum with atomic_add (written here) pass it. The grader reads the executor's
// located error; it computes nothing about races itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "grader/Grader.h"

namespace tl::grade {
namespace {

namespace fs = std::filesystem;

const fs::path kLab = fs::path(TL_SOURCE_DIR) / "labs" / "04-reduction";

const CheckOutcome& check(const GradeResult& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return c;
  static CheckOutcome none;
  ADD_FAILURE() << "no check '" << id << "'";
  return none;
}

TEST(Lab4Races, OnePassLoadStoreFailsRaceFreeAtItsLines) {
  LabSpec spec = loadLabSpec(kLab);
  ReferenceRuns ref = runReference(spec, 4242);
  const std::string wrong = (kLab / "wrong" / "one_pass_load_store.tl").string();
  GradeResult g = gradeSubmission(spec, wrong, ref);
  const CheckOutcome& race = check(g, "race-free");
  EXPECT_FALSE(race.pass) << formatResult(g, spec);
  EXPECT_NE(race.detail.find("one_pass_load_store.tl:19:13: error: global-memory race between programs"), std::string::npos)
      << race.detail;
  EXPECT_NE(race.detail.find("program 0 (block (0, 0, 0))"), std::string::npos) << race.detail;
  EXPECT_NE(race.detail.find("wrote it at 20:5"), std::string::npos) << race.detail;
  EXPECT_NE(race.detail.find("program 1 (block (1, 0, 0))"), std::string::npos) << race.detail;
  EXPECT_NE(race.detail.find("(out_ptr[0])"), std::string::npos) << race.detail;
  EXPECT_EQ(expectedFailures(wrong), std::vector<std::string>{"race-free"});

  GradeResult sol = gradeSubmission(spec, spec.reference.string(), ref);
  EXPECT_TRUE(check(sol, "race-free").pass) << formatResult(sol, spec);
}

TEST(Lab4Races, OnePassWithAtomicAddIsRaceFree) {
  // The same one-pass sum with atomic_add: no race (atomics never race with atomics). It still
  // leaves out_ptr[1..P-1] unwritten, which is the `written` check's business.
  LabSpec spec = loadLabSpec(kLab);
  ReferenceRuns ref = runReference(spec, 77);
  std::ifstream in(kLab / "wrong" / "one_pass_load_store.tl");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string from = "    total = load(out_ptr)\n    store(out_ptr, total + sum(acc, axis=0))\n";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "    atomic_add(out_ptr, sum(acc, axis=0))\n");
  const fs::path path = fs::path(testing::TempDir()) / "lab4_one_pass_atomic.tl";
  std::ofstream(path) << text;
  GradeResult g = gradeSubmission(spec, path.string(), ref);
  EXPECT_TRUE(check(g, "race-free").pass) << formatResult(g, spec);
  EXPECT_FALSE(check(g, "written").pass) << formatResult(g, spec);
}

}  // namespace
}  // namespace tl::grade
