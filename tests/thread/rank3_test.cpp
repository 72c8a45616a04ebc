// Tiles of rank 3 on every CPU engine, each against results computed here in C++ from the
// run's own inputs, at two sizes per kernel (tests/thread/kernels/rank3_*.tl):
//   Elementwise   arange[:, None, None], broadcasting, masked loads and stores (ragged sizes at
//                 the second size), sum / max / argmax along each axis and to a scalar, cumsum
//                 along axis 1 and (reverse) axis 0;
//   Shape         tl.reshape / tl.view (row-major), tl.permute, tl.trans with dims, tl.join,
//                 tl.split (Triton tutorial 09's reshape-permute-split epilogue among them);
//   BatchedDot    tl.dot of [B, M, K] @ [B, K, N] + acc, f32 (tf32, Triton's default) and f16 operands;
//   Tutorial09Epilogue  kernels/triton/t09_matmul_descriptor.tl (reshape [BM, BN] to
//                 [BM, 2, BN/2], permute, split, two descriptor stores) against C = A @ B^T.
// The engines are separate tests: Rank3Scalar.* (tl-scalar), Rank3Block.* (tl-block) and
// Rank3Thread.* (the thread pipeline on the warp executor at num_warps 1, 2, 4, 8, with the
// automatic conversions and with --keep-layouts).
#include "rank3_util.h"
#include "runtime/FloatOps.h"

namespace tl::rank3 {
namespace {

using Sizes = std::vector<LaunchOverride>;

std::vector<double> values(const Memory& m, const std::string& name) {
  const Buffer* b = m.find(name);
  std::vector<double> v;
  if (!b) {
    ADD_FAILURE() << "no buffer " << name;
    return v;
  }
  for (int64_t i = 0; i < b->numel(); ++i) v.push_back(b->getF(i));
  return v;
}

// --- rank3_elementwise ------------------------------------------------------------------------

Outputs elementwiseRef(const Memory& in, const LaunchConfig& l) {
  const int64_t A = launchInt(l, "A"), B = launchInt(l, "B"), C = launchInt(l, "C");
  const auto x = values(in, "x_ptr"), v = values(in, "v_ptr");
  auto X = [&](int64_t a, int64_t b, int64_t c) { return x[static_cast<size_t>((a * B + b) * C + c)]; };
  Outputs o;
  auto& y = o["y_ptr"];
  auto& s0 = o["s0_ptr"];
  auto& s1 = o["s1_ptr"];
  auto& m2 = o["m2_ptr"];
  auto& i1 = o["i1_ptr"];
  double total = 0;
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) {
        y.push_back(X(a, b, c) * 2.0 + v[static_cast<size_t>(b)] - double(a) + 1.0);
        total += X(a, b, c);
      }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t a = 0; a < A; ++a) s += X(a, b, c);
      s0.push_back(s);
    }
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      int64_t best = 0;
      for (int64_t b = 0; b < B; ++b) {
        s += X(a, b, c);
        if (X(a, b, c) > X(a, best, c)) best = b;
      }
      s1.push_back(s);
      i1.push_back(double(best));
    }
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      double m = X(a, b, 0);
      for (int64_t c = 1; c < C; ++c) m = std::max(m, X(a, b, c));
      m2.push_back(m);
    }
  o["t_ptr"] = {total};
  auto& st = o["st_ptr"];  // 2 * s0 transposed
  for (int64_t c = 0; c < C; ++c)
    for (int64_t b = 0; b < B; ++b) st.push_back(2.0 * s0[static_cast<size_t>(b * C + c)]);
  auto& c1 = o["c1_ptr"];
  auto& c0 = o["c0_ptr"];
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) {
        double s = 0, r = 0;
        for (int64_t k = 0; k <= b; ++k) s += X(a, k, c);
        for (int64_t k = a; k < A; ++k) r += X(k, b, c);  // masked-off rows beyond A add 0
        c1.push_back(s);
        c0.push_back(r);
      }
  return o;
}

// Default: the block is the tile; second: ragged (masked-off elements along every axis), other
// block sizes.
const Sizes kElemAlt = {{"A", "3"}, {"B", "5"}, {"C", "27"}, {"BA", "4"}, {"BB", "8"}, {"BC", "32"}};

// --- rank3_shape --------------------------------------------------------------------------------

Outputs shapeRef(const Memory& in, const LaunchConfig& l) {
  const int64_t M = launchInt(l, "M"), N = launchInt(l, "N"), H = N / 2;
  const auto x = values(in, "x_ptr"), w = values(in, "w_ptr");
  auto X = [&](int64_t m, int64_t n) { return x[static_cast<size_t>(m * N + n)]; };
  Outputs o;
  auto& p = o["p_ptr"];
  auto& h0 = o["h0_ptr"];
  auto& h1 = o["h1_ptr"];
  auto& jn = o["j_ptr"];
  auto& t = o["t_ptr"];
  auto& q = o["q_ptr"];
  auto& ji = o["ji_ptr"];
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < H; ++j)
      for (int64_t k = 0; k < 2; ++k) p.push_back(X(m, k * H + j));  // p[m, j, k]
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < H; ++j) {
      h0.push_back(X(m, j));
      h1.push_back(X(m, H + j));
    }
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      jn.push_back(X(m, n));
      jn.push_back(w[static_cast<size_t>(m * N + n)]);
      ji.push_back(double(3 * (m * N + n)));
    }
  for (int64_t i = 0; i < H; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < 2; ++k) t.push_back(X(m, k * H + i));  // t[i, m, k]
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < M; ++j) q.push_back(double(float(x[static_cast<size_t>(i * M + j)]) + float(X(j, i))));  // an f32 add
  return o;
}

const Sizes kShapeAlt = {{"M", "16"}, {"N", "64"}};

// --- rank3_dot ----------------------------------------------------------------------------------

float toF16(double v) {  // round to the nearest f16 (ties to even) through the runtime's buffer
  Buffer b;
  b.dtype = DType::F16;
  b.shape = {1};
  b.bytes.resize(2);
  b.setF(0, v);
  return static_cast<float>(b.getF(0));
}

Outputs dotRef(const Memory& in, const LaunchConfig& l) {
  const int64_t BT = launchInt(l, "BT"), M = launchInt(l, "M"), N = launchInt(l, "N"), K = launchInt(l, "K");
  const auto a = values(in, "a_ptr"), b = values(in, "b_ptr"), c = values(in, "c_ptr");
  Outputs o;
  auto& out = o["out_ptr"];
  auto& h = o["h_ptr"];
  for (int64_t bi = 0; bi < BT; ++bi)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = c[static_cast<size_t>((bi * M + m) * N + n)], s16 = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double x = a[static_cast<size_t>((bi * M + m) * K + k)], y = b[static_cast<size_t>((bi * K + k) * N + n)];
          s += double(truncToTf32(float(x))) * double(truncToTf32(float(y)));  // f32 tl.dot: Triton's default tf32
          s16 += double(toF16(x)) * double(toF16(y));
        }
        out.push_back(s);
        h.push_back(s16);
      }
  return o;
}

const Sizes kDotAlt = {{"BT", "4"}, {"M", "8"}, {"N", "32"}, {"K", "16"}};

// --- Triton tutorial 09, the descriptor matmul with its EPILOGUE_SUBTILE epilogue --------------

Outputs t09Ref(const Memory& in, const LaunchConfig& l) {
  const int64_t M = launchInt(l, "M"), N = launchInt(l, "N"), K = launchInt(l, "K");
  const auto a = values(in, "a_ptr"), b = values(in, "b_ptr");
  Outputs o;
  auto& c = o["c_ptr"];
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += a[static_cast<size_t>(m * K + k)] * b[static_cast<size_t>(n * K + k)];
      c.push_back(toF16(s));
    }
  return o;
}

const std::string kT09 = "kernels/triton/t09_matmul_descriptor.tl";
const Sizes kT09Alt = {{"M", "33"}, {"N", "70"}, {"K", "47"}, {"BLOCK_SIZE_N", "64"}, {"NUM_SMS", "3"}};

// --- the cases ------------------------------------------------------------------------------------

struct Case {
  std::string name, stem;
  Sizes sizes;
  Reference ref;
  double atol, rtol;
};

std::vector<Case> cases() {
  return {
      {"Elementwise_default", "rank3_elementwise", {}, elementwiseRef, 1e-4, 1e-5},
      {"Elementwise_ragged", "rank3_elementwise", kElemAlt, elementwiseRef, 1e-4, 1e-5},
      {"Shape_default", "rank3_shape", {}, shapeRef, 0, 0},
      {"Shape_wide", "rank3_shape", kShapeAlt, shapeRef, 0, 0},
      {"BatchedDot_default", "rank3_dot", {}, dotRef, 1e-4, 1e-5},
      {"BatchedDot_other", "rank3_dot", kDotAlt, dotRef, 1e-4, 1e-5},
      {"Tutorial09Epilogue_default", kT09, {}, t09Ref, 2e-2, 2e-3},
      {"Tutorial09Epilogue_ragged", kT09, kT09Alt, t09Ref, 2e-2, 2e-3},
  };
}

class Rank3 : public testing::TestWithParam<Case> {};
std::string caseName(const testing::TestParamInfo<Case>& i) { return i.param.name; }

using Rank3Scalar = Rank3;
using Rank3Block = Rank3;
using Rank3Thread = Rank3;

TEST_P(Rank3Scalar, MatchesCpp) {
  const Case& c = GetParam();
  runOn(Engine::Scalar, c.stem, c.sizes, 0, false, c.ref, c.atol, c.rtol);
}

TEST_P(Rank3Block, MatchesCpp) {
  const Case& c = GetParam();
  runOn(Engine::Block, c.stem, c.sizes, 0, false, c.ref, c.atol, c.rtol);
}

TEST_P(Rank3Thread, MatchesCppAtEveryWarpCount) {
  const Case& c = GetParam();
  for (bool keep : {false, true})
    for (int nw : {1, 2, 4, 8}) runOn(Engine::Thread, c.stem, c.sizes, nw, keep, c.ref, c.atol, c.rtol);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Rank3Scalar, testing::ValuesIn(cases()), caseName);
INSTANTIATE_TEST_SUITE_P(Kernels, Rank3Block, testing::ValuesIn(cases()), caseName);
INSTANTIATE_TEST_SUITE_P(Kernels, Rank3Thread, testing::ValuesIn(cases()), caseName);

}  // namespace
}  // namespace tl::rank3
