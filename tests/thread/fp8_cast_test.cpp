// fp8 storage dtypes on every CPU engine (tl-scalar, tl-block, the thread executor at 1-8 warps):
// tests/thread/kernels/fp8_cast.tl converts chosen f32 values to f8e4m3 / f8e5m2 and back, and
// converts an fp8 input holding every one of the 256 codes to f16 and to the other format; each
// engine's bytes are compared with the independent model of tests/fp8_reference.h.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "../fp8_reference.h"
#include "new_ops_util.h"
#include "runtime/Memory.h"

namespace tl {
namespace {

// Values that tell the rounding and saturation rules apart (each also negated).
std::vector<float> edgeValues() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, 1.0f, 1.0625f, 1.1875f, 448.0f, 464.0f, 465.0f, 480.0f, 1e6f, 57344.0f, 61440.0f,
                          inf, 0x1p-9f, 0x1p-10f, 3 * 0x1p-10f, 0x1p-17f, 0x1.8p-17f, 0x1p-30f, 3.3f, 0.9375f,
                          std::numeric_limits<float>::quiet_NaN(), 100.3f, 7.77f, 0.0123f};
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

bool sameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(Fp8Cast, EveryEngineRoundsSaturatesAndDecodesAsTheFormatSays) {
  const std::vector<float> edges = edgeValues();
  auto prepare = [&](Memory& m) {
    Buffer& x = *m.find("x_ptr");
    for (int64_t i = 0; i < x.numel(); ++i)
      if (i < static_cast<int64_t>(edges.size()) * 4) x.setF(i, edges[static_cast<size_t>(i) % edges.size()]);
    Buffer& q = *m.find("q_ptr");
    for (int64_t i = 0; i < q.numel(); ++i) q.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 37 % 256);
  };
  int checked = 0;
  auto check = [&](const Memory& m, const std::string& engine) {
    const Buffer &x = *m.find("x_ptr"), &q = *m.find("q_ptr");
    const Buffer &e4 = *m.find("e4_ptr"), &e5 = *m.find("e5_ptr");
    const Buffer &b4 = *m.find("back4_ptr"), &b5 = *m.find("back5_ptr");
    const Buffer &qh = *m.find("qh_ptr"), &q5 = *m.find("q5_ptr");
    int bad = 0;
    for (int64_t i = 0; i < x.numel() && bad < 5; ++i) {
      const size_t k = static_cast<size_t>(i);
      const double xv = x.getF(i);
      const uint8_t w4 = fp8ref::encode(fp8ref::kE4M3, xv), w5 = fp8ref::encode(fp8ref::kE5M2, xv);
      if (e4.bytes[k] != w4 || e5.bytes[k] != w5) {
        ADD_FAILURE() << engine << ": x[" << i << "] = " << xv << " -> e4m3 " << int(e4.bytes[k]) << " (want " << int(w4)
                      << "), e5m2 " << int(e5.bytes[k]) << " (want " << int(w5) << ")";
        ++bad;
      }
      if (!sameValue(b4.getF(i), fp8ref::decode(fp8ref::kE4M3, w4)) || !sameValue(b5.getF(i), fp8ref::decode(fp8ref::kE5M2, w5))) {
        ADD_FAILURE() << engine << ": x[" << i << "] = " << xv << " decodes to " << b4.getF(i) << " / " << b5.getF(i);
        ++bad;
      }
      const double qv = fp8ref::decode(fp8ref::kE4M3, q.bytes[k]);
      if (!sameValue(qh.getF(i), qv) || q5.bytes[k] != fp8ref::encode(fp8ref::kE5M2, qv)) {
        ADD_FAILURE() << engine << ": q[" << i << "] = " << qv << " -> f16 " << qh.getF(i) << ", e5m2 " << int(q5.bytes[k]);
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << engine;
    ++checked;
  };
  EXPECT_TRUE(newops::forEachEngine("fp8_cast", {}, prepare, check));
  EXPECT_EQ(checked, 6);  // tl-scalar, tl-block, 4 warp counts
}

// The thread pipeline moves fp8 in vectors of up to 16 bytes: 16 elements per access where a
// thread holds 16 contiguous ones (the fp8 load of q, 2048 elements over 128 threads).
TEST(Fp8Cast, LoadsAndStoresAreUpToSixteenWide) {
  auto k = newops::compileNewOpsKernel("fp8_cast", {{"N", "4096"}, {"BLOCK", "2048"}});
  ASSERT_TRUE(k);
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
  bool sawFp8 = false, sawSixteen = false;
  std::function<void(const Region&)> walk = [&](const Region& r) {
    for (const auto& op : r.ops) {
      for (const auto& sub : op->regions) walk(*sub);
      const bool ld = op->kind == OpKind::LdGlobal, st = op->kind == OpKind::StGlobal;
      if (!ld && !st) continue;
      const Type& t = ld ? op->result()->type : op->operand(1)->type;
      if (!isFp8(t.dtype)) continue;
      sawFp8 = true;
      const int64_t vec = op->hasAttr("vec") ? op->intAttr("vec") : 1;
      EXPECT_LE(vec, 16) << mnemonic(op->kind) << " of " << t.str();
      sawSixteen |= ld && vec == 16;
    }
  };
  walk(tc.threadIR->body);
  EXPECT_TRUE(sawFp8);
  EXPECT_TRUE(sawSixteen);
}

}  // namespace
}  // namespace tl
