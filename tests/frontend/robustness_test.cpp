// Robustness: 2000 random mutations of the softmax (characters deleted, inserted, replaced)
// run through parse -> evalLaunch -> compile; none may throw or crash, and every successful
// compile must verify. Seeded, so a failure reproduces. Then hostile sizes: sums, subscript
// chains, parentheses and blocks nested far past ast::kMaxNesting are one located error each.
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


// ---- depth and length (ast::kMaxNesting) -------------------------------------------------------
// Each input below crashed every stage tool with a stack overflow before the limit existed (a
// @launch sum of 3000 terms, a body sum of 50000, 10000 chained subscripts, 8000 nested ifs,
// 10000 nested fors). Now each is one located error, and inputs just inside the limit compile.

namespace {

const char* kHead = "@launch(N=128, grid=(1,), x_ptr=randn(N), out_ptr=zeros(N, output=True))\n@jit\ndef k(x_ptr, out_ptr, N):\n"
                    "    offs = arange(0, 128)\n    x = load(x_ptr + offs)\n";

std::string repeat(const std::string& s, int n, const std::string& sep = "") {
  std::string out;
  for (int k = 0; k < n; ++k) out += (k ? sep : "") + s;
  return out;
}

// `n` nested blocks, each header indented one space deeper than the last, around `inner`.
std::string nested(const std::string& header, int n, const std::string& inner) {
  std::string body;
  for (int k = 0; k < n; ++k) {
    std::string h = header;
    for (size_t p; (p = h.find('#')) != std::string::npos;) h.replace(p, 1, std::to_string(k));
    body += "    " + std::string(k, ' ') + h + "\n";
  }
  return body + "    " + std::string(n, ' ') + inner + "\n";
}

// Exactly one error of the front end, containing `text`, located on `line`.
void expectOneDepthError(const test::FrontendRun& r, const std::string& text, uint32_t line) {
  ASSERT_FALSE(r.phase.empty());
  std::vector<Diagnostic> errors;
  for (const auto& d : r.diag.diagnostics())
    if (d.severity == Severity::Error) errors.push_back(d);
  ASSERT_EQ(errors.size(), 1u) << r.errors().substr(0, 2000);
  EXPECT_NE(errors[0].message.find(text), std::string::npos) << errors[0].message;
  EXPECT_EQ(errors[0].loc.line, line);
  EXPECT_GT(errors[0].loc.col, 0u);
}

}  // namespace

TEST(Depth, LongLaunchSumIsALocatedError) {
  auto r = test::runFrontend("@launch(N=128, S=" + repeat("1", 3000, "+") +
                             ", x_ptr=zeros(N))\n@jit\ndef k(x_ptr, N):\n    pass\n");
  expectOneDepthError(*r, "expression too long or nested too deeply", 1);
}

TEST(Depth, LongOverrideSumIsALocatedError) {
  auto r = test::runFrontend(test::kSoftmax, {{"N", repeat("1", 3000, "+")}});
  ASSERT_EQ(r->phase, "launch");
  EXPECT_NE(r->errors().find("<command line>:1:"), std::string::npos) << r->errors().substr(0, 500);
  EXPECT_NE(r->errors().find("expression too long or nested too deeply"), std::string::npos);
  // Just inside the limit, the same sum is evaluated.
  auto ok = test::runFrontend(test::kSoftmax, {{"N", repeat("1", 200, "+")}});
  ASSERT_EQ(ok->phase, "") << ok->errors();
  EXPECT_EQ(ok->launch.scalars.at("N").i, 200);
}

TEST(Depth, LongBodySumAndChainedSubscripts) {
  expectOneDepthError(*test::runFrontend(std::string(kHead) + "    y = " + repeat("x", 50000, " + ") +
                                         "\n    store(out_ptr + offs, y)\n"),
                      "expression too long or nested too deeply", 6);
  expectOneDepthError(*test::runFrontend(std::string(kHead) + "    y = x" + repeat("[:]", 10000) +
                                         "\n    store(out_ptr + offs, y)\n"),
                      "expression too long or nested too deeply", 6);
  expectOneDepthError(*test::runFrontend(std::string(kHead) + "    y = " + repeat("(", 100000) + "x" +
                                         repeat(")", 100000) + "\n"),
                      "expression too long or nested too deeply", 6);
  expectOneDepthError(*test::runFrontend(std::string(kHead) + "    y = " + repeat("-", 100000, " ") + "x\n"),
                      "expression too long or nested too deeply", 6);
  // 200 terms, 200 subscripts and 200 nested calls are fine: the limit is on depth, not on taste.
  auto sum = test::runFrontend(std::string(kHead) + "    y = " + repeat("x", 200, " + ") + "\n    store(out_ptr + offs, y)\n");
  ASSERT_EQ(sum->phase, "") << sum->errors();
  EXPECT_EQ(test::countOps(*sum->fn, OpKind::Add), 199);
}

TEST(Depth, DeeplyNestedBlocksAreOneLocatedError) {
  auto ifs = test::runFrontend(std::string(kHead) + nested("if N > #:", 8000, "x = x + 1.0") + "    store(out_ptr + offs, x)\n");
  expectOneDepthError(*ifs, "blocks nested too deeply", 0 + 6 + 254);
  auto fors = test::runFrontend(std::string(kHead) + nested("for i# in range(2):", 10000, "x = x + 1.0") +
                                "    store(out_ptr + offs, x)\n");
  expectOneDepthError(*fors, "blocks nested too deeply", 0 + 6 + 254);
  // A long elif chain nests too (each elif is an if in the else branch): it stops with the
  // first clause past the limit, and the clauses after it raise nothing more.
  std::string elifs = std::string(kHead) + "    if N == 0:\n        x = x + 1.0\n";
  for (int k = 1; k <= 10000; ++k) elifs += "    elif N == " + std::to_string(k) + ":\n        x = x + 1.0\n";
  auto chain = test::runFrontend(elifs + "    store(out_ptr + offs, x)\n");
  ASSERT_EQ(chain->phase, "parse");
  EXPECT_LE(chain->diag.numErrors(), 2) << chain->errors().substr(0, 2000);
  EXPECT_NE(chain->errors().find("blocks nested too deeply"), std::string::npos);
}

TEST(Depth, NestingJustInsideTheLimitCompiles) {
  auto ifs = test::runFrontend(std::string(kHead) + nested("if N > #:", 200, "x = x + 1.0") + "    store(out_ptr + offs, x)\n");
  ASSERT_EQ(ifs->phase, "") << ifs->errors().substr(0, 2000);
  EXPECT_EQ(test::countOps(*ifs->fn, OpKind::If), 200);
  auto fors = test::runFrontend(std::string(kHead) + nested("for i# in range(2):", 200, "x = x + 1.0") +
                                "    store(out_ptr + offs, x)\n");
  ASSERT_EQ(fors->phase, "") << fors->errors().substr(0, 2000);
  EXPECT_EQ(test::countOps(*fors->fn, OpKind::For), 200);
  EXPECT_EQ(verifyFunction(*fors->fn), "");
}

}  // namespace
}  // namespace tl
