// The mask probe (viz/model/MaskProbe.cpp) marks a masked load inside a while loop as in a loop
// (`inLoop`: what is shown is the last iteration's mask), as it does inside a for.
#include <gtest/gtest.h>

#include "viz/model/MaskProbe.h"
#include "viz/model/Session.h"

namespace tl::viz {
namespace {

TEST(MaskProbe, AMaskedLoadInAWhileIsInALoop) {
  SessionInputs in;
  in.path = "while_mask.tl";
  in.source =
      "@launch(N=100, BLOCK=64, grid=(2,), x_ptr=uniform(N, seed=1), y_ptr=zeros(N, output=True))\n"
      "@jit\n"
      "def while_mask(x_ptr, y_ptr, N, BLOCK: constexpr):\n"
      "    offs = program_id(0) * BLOCK + arange(0, BLOCK)\n"
      "    m = offs < N\n"
      "    acc = zeros((BLOCK,), dtype=f32)\n"
      "    i = 0\n"
      "    while i < 3:\n"
      "        acc += load(x_ptr + offs, mask=m, other=0.0)\n"
      "        i += 1\n"
      "    store(y_ptr + offs, acc, mask=m)\n";
  in.predictTimings = false;
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty());
  ASSERT_FALSE(d->masks.empty()) << d->masksNote;
  int loads = 0;
  for (const ValueMask& m : d->masks) {
    EXPECT_EQ(m.inLoop, !m.store) << m.value;  // the load is in the while, the store after it
    if (m.store) continue;
    ++loads;
    EXPECT_EQ(m.liveCount(0), 64);
    EXPECT_EQ(m.liveCount(1), 36);  // N = 100: the second block's last 28 lanes are off
  }
  EXPECT_EQ(loads, 1);
}

}  // namespace
}  // namespace tl::viz
