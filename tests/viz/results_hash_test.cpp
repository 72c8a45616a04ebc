// The results JSON's source hash (stages/ptx/Results.h, RunResults::sourceSha256), which the
// visualizer pairs measurements by: written when known, absent (and read as unknown) otherwise.
#include <gtest/gtest.h>

#if TL_VIZ_HAVE_PTX
#include "ptx/Results.h"
#include "runtime/Hash.h"

namespace tl {
namespace {

TEST(ResultsHash, WrittenAfterSourceWhenKnownAndRoundTrips) {
  RunResults r;
  r.kernel = "softmax_kernel";
  r.source = "kernels/softmax.tl";
  r.sourceSha256 = sha256Hex("def k(): pass\n");
  nlohmann::ordered_json j = resultsToJson(r);
  ASSERT_TRUE(j.contains("source_sha256"));
  EXPECT_EQ(j["source_sha256"], r.sourceSha256);
  // Right after "source", where a reader looks for what ran.
  auto it = j.find("source");
  ASSERT_NE(it, j.end());
  EXPECT_EQ(std::next(it).key(), "source_sha256");
  EXPECT_EQ(resultsFromJson(j), r);
}

TEST(ResultsHash, AbsentWhenUnknownAndOldFilesStillRead) {
  RunResults r;
  r.kernel = "k";
  nlohmann::ordered_json j = resultsToJson(r);
  EXPECT_FALSE(j.contains("source_sha256"));  // files measured before it existed look the same
  EXPECT_EQ(resultsFromJson(j).sourceSha256, "");
  j["source_sha256"] = 17;
  EXPECT_THROW(resultsFromJson(j), std::runtime_error);  // mistyped: named, not guessed
}

}  // namespace
}  // namespace tl
#endif
