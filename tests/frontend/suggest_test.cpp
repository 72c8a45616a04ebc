// "Did you mean" suggestions (frontend/Suggest.h) and the messages that use them: unknown names,
// functions, keyword arguments and @launch keywords (a typo in --set, a keyword that binds
// nothing), a @launch keyword used in the body, and printf() refused with print's alternative.
#include <gtest/gtest.h>

#include "FrontendTestUtil.h"
#include "frontend/Suggest.h"

namespace tl {
namespace {

using test::runFrontend;

TEST(Suggest, EditDistanceCountsASwapAsOneEdit) {
  EXPECT_EQ(editDistance("offest", "offset"), 1u);
  EXPECT_EQ(editDistance("load", "lod"), 1u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}

TEST(Suggest, ClosestNameOnlyWhenCloseEnough) {
  EXPECT_EQ(closestName("offest", {"mask", "offset", "x"}), "offset");
  EXPECT_EQ(closestName("n", {"x", "N"}), "N");          // case only: the best match
  EXPECT_EQ(closestName("x", {"y", "z"}), "");           // one letter for one letter helps nobody
  EXPECT_EQ(closestName("factor", {"offset", "N"}), "");
  EXPECT_EQ(closestName("num_warp", {"grid", "num_warps"}), "num_warps");
  EXPECT_EQ(closestName("BLCK", {"BLOCK_M", "BLOCK"}), "BLOCK");
  EXPECT_EQ(closestName("mask", {"mask"}), "");          // an exact match is no typo
  EXPECT_EQ(closestName("ab", {"ac", "ad"}), "ac");      // ties: the first listed
  EXPECT_EQ(didYouMean("maks", {"ptr", "mask", "other"}), "; did you mean 'mask'?");
  EXPECT_EQ(didYouMean("zzz", {"ptr", "mask", "other"}), "");
}

TEST(Suggest, OverrideTypoIsAnErrorWithTheParameter) {
  auto r = runFrontend(test::kSoftmax, {{"n", "30"}});
  ASSERT_EQ(r->phase, "launch") << r->errors();
  EXPECT_NE(r->errors().find("--set n binds no parameter of 'softmax_kernel' and no keyword uses it; did you mean 'N'?"),
            std::string::npos)
      << r->errors();
  // A new helper that a later keyword reads is fine, and one far from every name is allowed.
  EXPECT_EQ(runFrontend(test::kSoftmax, {{"rows", "8"}, {"M", "rows * 2"}})->phase, "");
  EXPECT_EQ(runFrontend(test::kSoftmax, {{"unused_helper", "8"}})->phase, "");
  // A helper the decorator's grid reads stays legal when --set replaces the grid, even when its
  // name is close to a parameter's.
  const std::string k = test::kernelWith("N=1000, BLOCK=128, grid=(cdiv(N, BLOCK),), x_ptr=zeros(N)",
                                         "x_ptr, N, BLOCK_N: constexpr", "    pass\n");
  EXPECT_EQ(runFrontend(k, {{"BLOCK_N", "128"}})->phase, "");
  EXPECT_EQ(runFrontend(k, {{"BLOCK_N", "128"}, {"grid", "(4,)"}})->phase, "") << runFrontend(k, {{"BLOCK_N", "128"}, {"grid", "(4,)"}})->errors();
}

TEST(Suggest, LaunchNameDefinedLaterSaysSo) {
  auto r = runFrontend(test::kernelWith("grid=(cdiv(N, 128),), N=1000, x_ptr=zeros(N)", "x_ptr, N", "    pass\n"));
  ASSERT_EQ(r->phase, "launch");
  EXPECT_NE(r->errors().find("test.tl:1:20: error: 'N' is used before it is given a value: @launch keywords are "
                             "evaluated left to right (move N=... in front of this keyword)"),
            std::string::npos)
      << r->errors();
}

TEST(Suggest, LaunchKeywordInBodyNamesTheParameterList) {
  auto r = runFrontend(test::kernelWith("M=4, N=128, grid=(M,), x_ptr=zeros((M, N))", "x_ptr, N",
                                        "    offs = arange(0, 128)\n    store(x_ptr + offs * M, 1.0)\n"));
  ASSERT_EQ(r->phase, "compile");
  EXPECT_NE(r->errors().find("test.tl:5:26: error: 'M' is a @launch keyword, not a parameter of 'k': to use it in the "
                             "kernel body, add it to the parameter list: def k(x_ptr, N, M)"),
            std::string::npos)
      << r->errors();
}

TEST(Suggest, PrintfIsRefusedWithADebuggingAlternative) {
  for (const char* call : {"printf(x)"}) {
    auto r = runFrontend(test::kernelWith("N=128, x_ptr=zeros(N)", "x_ptr, N",
                                          "    x = load(x_ptr + arange(0, 128))\n    " + std::string(call) + "\n"));
    ASSERT_EQ(r->phase, "compile") << call;
    EXPECT_NE(r->errors().find("is not supported in kernels: use print(\"x\", x) or tl.device_print(\"x\", x); or store "
                               "the value into an extra output buffer"),
              std::string::npos)
        << r->errors();
    EXPECT_NE(r->errors().find("--out-dir DIR"), std::string::npos) << r->errors();
    EXPECT_NE(r->errors().find("tl-thread --show-map"), std::string::npos) << r->errors();
  }
}

}  // namespace
}  // namespace tl
