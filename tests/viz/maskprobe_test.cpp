// The mask probe (viz/model/MaskProbe.h): which elements of a masked load/store are live per
// block, checked against what the launch implies (the softmax's row of N = 781 in 1024 lanes).
#include <gtest/gtest.h>

#include "viz/model/MaskProbe.h"
#include "viz/model/Session.h"

namespace tl::viz {
namespace {

std::shared_ptr<const SessionData> run(const std::string& kernel, std::vector<std::string> sets) {
  SessionInputs in;
  in.path = std::string(TL_SOURCE_DIR) + "/kernels/" + kernel + ".tl";
  in.sets = std::move(sets);
  in.predictTimings = false;
  return runSession(in);
}

TEST(MaskProbe, SoftmaxRowIsLiveUpToN) {
  for (int n : {781, 100}) {
    auto d = run("softmax", {"M=8", "N=" + std::to_string(n)});
    ASSERT_TRUE(d->errors.empty());
    ASSERT_FALSE(d->masks.empty()) << d->masksNote;
    const ValueMask* load = nullptr;
    for (const ValueMask& m : d->masks)
      if (!m.store) load = &m;
    ASSERT_NE(load, nullptr);
    EXPECT_EQ(load->value, "%x");
    EXPECT_GE(load->blocks, 1);
    for (int64_t b = 0; b < load->blocks; ++b) {
      EXPECT_EQ(load->liveCount(b), n);
      for (int64_t e = 0; e < load->numel; ++e) EXPECT_EQ(load->at(b, e), e < n ? 1 : 0) << "block " << b << " element " << e;
    }
    EXPECT_EQ(load->at(load->blocks, 0), -1);  // a block not probed
    // The store of `out` under the same mask.
    bool store = false;
    for (const ValueMask& m : d->masks)
      if (m.store) store = m.liveCount(0) == n;
    EXPECT_TRUE(store);
  }
}

TEST(MaskProbe, UnmaskedKernelHasNoMasks) {
  auto d = run("matmul", {"M=64", "N=64", "K=32"});
  ASSERT_TRUE(d->errors.empty());
  for (const ValueMask& m : d->masks) EXPECT_EQ(m.liveCount(0), m.numel) << m.value;  // whatever it masks is live
  EXPECT_TRUE(d->masksNote.empty()) << d->masksNote;
}

}  // namespace
}  // namespace tl::viz
