// Robustness: 2000 random mutations of the softmax (characters deleted, inserted, replaced)
// run through parse -> evalLaunch -> compile; none may throw or crash, and every successful
// compile must verify. Seeded, so a failure reproduces.
#include <gtest/gtest.h>

#include <random>

#include "FrontendTestUtil.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

TEST(Robustness, MutatedSoftmaxNeverCrashes) {
  const std::string base = test::kSoftmax;
  const std::string alphabet = "abcxyzN_0123456789 ()[],:.=+-*/%<>&|^~@#\n\t\"'";
  int compiled = 0, rejected = 0;
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    std::string s = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !s.empty(); ++k) {
      size_t pos = rng() % s.size();
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: s.erase(pos, 1 + rng() % 3); break;
        case 1: s.insert(pos, 1, c); break;
        default: s[pos] = c; break;
      }
    }
    std::unique_ptr<test::FrontendRun> r;
    ASSERT_NO_THROW(r = test::runFrontend(s)) << "seed " << seed << "\n" << s;
    if (r->phase.empty()) {
      ++compiled;
      ASSERT_EQ(verifyFunction(*r->fn), "") << "seed " << seed;
    } else {
      ++rejected;
      EXPECT_TRUE(r->diag.hasErrors()) << "seed " << seed;
      // Every error is either located or an override/internal message: rendering never fails.
      EXPECT_FALSE(r->errors().empty());
      EXPECT_EQ(r->errors().find("internal compiler error"), std::string::npos) << "seed " << seed << "\n" << s << "\n" << r->errors();
    }
  }
  EXPECT_GT(compiled, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace tl
