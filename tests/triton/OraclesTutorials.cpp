// Oracles for the kernels after Triton's tutorials, kernels/triton/t*.tl (TritonOracles.h):
// the math each tutorial computes, in double, from its definition.
#include <algorithm>
#include <cmath>
#include <array>
#include <cstdint>

#include "TritonOracles.h"

namespace tl::triton_tests {
namespace {

// 01: output = x + y.
OracleResult vectorAdd(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), y(mem, "y_ptr");
  Out out(mem, "output_ptr");
  for (int64_t i = 0; i < l.i("n_elements"); ++i) out[i] = x[i] + y[i];
  OracleResult r;
  out.into(r);
  return r;
}

// 02: row-wise softmax of [n_rows, n_cols] with row strides.
OracleResult fusedSoftmax(const Memory& mem, const Launch& l) {
  In x(mem, "input_ptr");
  Out out(mem, "output_ptr");
  const int64_t rows = l.i("n_rows"), cols = l.i("n_cols");
  const int64_t sin = l.i("input_row_stride"), sout = l.i("output_row_stride");
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> v(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c) v[static_cast<size_t>(c)] = x[r * sin + c];
    softmaxInPlace(v);
    for (int64_t c = 0; c < cols; ++c) out[r * sout + c] = v[static_cast<size_t>(c)];
  }
  OracleResult res;
  out.into(res);
  return res;
}

// C = A @ B through strides (tutorial 03, 09, the block-pointer matmul), then `act`.
template <typename Act>
OracleResult stridedMatmul(const Memory& mem, const Launch& l, Act act) {
  In a(mem, "a_ptr"), b(mem, "b_ptr");
  Out c(mem, "c_ptr");
  const int64_t m = l.i("M"), n = l.i("N"), k = l.i("K");
  const int64_t sam = l.i("stride_am"), sak = l.i("stride_ak"), sbk = l.i("stride_bk"),
                sbn = l.i("stride_bn"), scm = l.i("stride_cm"), scn = l.i("stride_cn");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * sam + p * sak] * b[p * sbk + j * sbn];
      c[i * scm + j * scn] = act(s);
    }
  OracleResult res;
  c.into(res);
  return res;
}
// 03: leaky_relu(A @ B), slope 0.01 below 0.
OracleResult matmulLeakyRelu(const Memory& mem, const Launch& l) {
  return stridedMatmul(mem, l, [](double v) { return v >= 0 ? v : 0.01 * v; });
}
OracleResult matmulPlain(const Memory& mem, const Launch& l) {
  return stridedMatmul(mem, l, [](double v) { return v; });
}
// 09, descriptors: C = A @ B^T with A [M, K] and B stored [N, K], contiguous.
OracleResult matmulBTransposed(const Memory& mem, const Launch& l) {
  In a(mem, "a_ptr"), b(mem, "b_ptr");
  Out c(mem, "c_ptr");
  const int64_t m = l.i("M"), n = l.i("N"), k = l.i("K");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
      c[i * n + j] = s;
    }
  OracleResult res;
  c.into(res);
  return res;
}

// 09, fp8: C = e4m3(A) @ e4m3(B), both operands rounded to fp8 first; contiguous buffers.
OracleResult matmulFp8(const Memory& mem, const Launch& l) {
  In a(mem, "a_ptr"), b(mem, "b_ptr");
  Out c(mem, "c_ptr");
  const int64_t m = l.i("M"), n = l.i("N"), k = l.i("K");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += roundToE4M3(a[i * k + p]) * roundToE4M3(b[p * n + j]);
      c[i * n + j] = s;
    }
  OracleResult res;
  c.into(res);
  return res;
}

// 04: inverted dropout, out = x / (1 - p) where kept, else 0.
OracleResult dropoutWithMask(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), keep(mem, "x_keep_ptr");
  Out out(mem, "output_ptr");
  const double p = l.f("p");
  for (int64_t i = 0; i < l.i("n_elements"); ++i)
    out[i] = keep.integer(i) != 0 ? x[i] / (1 - p) : 0.0;
  OracleResult r;
  out.into(r);
  return r;
}

}  // namespace

std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  constexpr uint32_t kRoundA = 0xD2511F53u, kRoundB = 0xCD9E8D57u;  // the multipliers
  constexpr uint32_t kKeyA = 0x9E3779B9u, kKeyB = 0xBB67AE85u;      // the Weyl key increments
  for (int round = 0; round < 10; ++round) {
    const uint64_t pa = static_cast<uint64_t>(kRoundA) * c[0];
    const uint64_t pb = static_cast<uint64_t>(kRoundB) * c[2];
    c = {static_cast<uint32_t>(pb >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(pb),
         static_cast<uint32_t>(pa >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(pa)};
    key[0] += kKeyA;
    key[1] += kKeyB;
  }
  return c;
}

double tritonRand(uint64_t seed, uint32_t offset) {
  const std::array<uint32_t, 4> out = philox4x32x10(
      {offset, 0, 0, 0}, {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  int64_t x = static_cast<int32_t>(out[0]);
  if (x < 0) x = -x - 1;
  return static_cast<double>(static_cast<float>(x) * 4.6566127342e-10f);  // f32, as on the GPU
}

double roundToE4M3(double v) {
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return std::copysign(448.0, v);  // satfinite: no infinities in e4m3
  const double mag = std::fabs(v);
  if (mag == 0) return v;
  const int e = std::max(std::ilogb(mag), -6);      // subnormals share the exponent of 2^-6
  const double quantum = std::ldexp(1.0, e - 3);    // 3 mantissa bits below the leading one
  const double r = std::nearbyint(mag / quantum) * quantum;  // the default mode: ties to even
  return std::copysign(std::min(r, 448.0), v);
}

namespace {

// 04, seeded: out = x / (1 - p) where tl.rand(seed, i) > p, else 0.
OracleResult seededDropout(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr");
  Out out(mem, "output_ptr");
  const double p = l.f("p");
  const uint64_t seed = static_cast<uint64_t>(l.i("seed"));
  for (int64_t i = 0; i < l.i("n_elements"); ++i)
    out[i] = tritonRand(seed, static_cast<uint32_t>(i)) > p ? x[i] / (1 - p) : 0.0;
  OracleResult r;
  out.into(r);
  return r;
}

// 05 forward: Y = (X - mean) * rstd * W + B per row, biased variance; Mean, Rstd per row.
OracleResult layerNormForward(const Memory& mem, const Launch& l) {
  In x(mem, "X"), w(mem, "W"), b(mem, "B");
  Out y(mem, "Y"), meanOut(mem, "Mean"), rstdOut(mem, "Rstd");
  const int64_t rows = bufferNamed(mem, "X").shape.at(0), n = l.i("N"), stride = l.i("stride");
  const double eps = l.f("eps");
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < n; ++c) mean += x[r * stride + c];
    mean /= static_cast<double>(n);
    for (int64_t c = 0; c < n; ++c) var += (x[r * stride + c] - mean) * (x[r * stride + c] - mean);
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < n; ++c) y[r * stride + c] = (x[r * stride + c] - mean) * rstd * w[c] + b[c];
    meanOut[r] = mean;
    rstdOut[r] = rstd;
  }
  OracleResult res;
  y.into(res);
  meanOut.into(res);
  rstdOut.into(res);
  return res;
}

// 05 backward, dX and the group partials. With xhat = (x - mean) rstd and g = W dY, the
// gradient of y = xhat W + B through xhat's dependence on the whole row is
//   dX = rstd (g - mean_c(g) - xhat mean_c(g xhat)),
// dW = sum_rows dY xhat and dB = sum_rows dY, here summed per group r % GROUP_SIZE_M. The locks
// end released (0) and each group's counter is 1 once one of its rows has been added.
OracleResult layerNormBackwardDx(const Memory& mem, const Launch& l) {
  In x(mem, "X"), dy(mem, "DY"), w(mem, "W"), mean(mem, "Mean"), rstd(mem, "Rstd");
  Out dx(mem, "DX"), dw(mem, "DW"), db(mem, "DB"), lock(mem, "Lock");
  const int64_t rows = bufferNamed(mem, "X").shape.at(0), n = l.i("N"), stride = l.i("stride");
  const int64_t groups = l.i("GROUP_SIZE_M");
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) dw[g * n + c] = db[g * n + c] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> xhat(static_cast<size_t>(n)), g(static_cast<size_t>(n));
    double meanG = 0, meanGX = 0;
    for (int64_t c = 0; c < n; ++c) {
      xhat[static_cast<size_t>(c)] = (x[r * stride + c] - mean[r]) * rstd[r];
      g[static_cast<size_t>(c)] = w[c] * dy[r * stride + c];
      meanG += g[static_cast<size_t>(c)];
      meanGX += g[static_cast<size_t>(c)] * xhat[static_cast<size_t>(c)];
    }
    meanG /= static_cast<double>(n);
    meanGX /= static_cast<double>(n);
    const int64_t grp = r % groups;
    for (int64_t c = 0; c < n; ++c) {
      const size_t k = static_cast<size_t>(c);
      dx[r * stride + c] = rstd[r] * (g[k] - meanG - xhat[k] * meanGX);
      dw[grp * n + c] += dy[r * stride + c] * xhat[k];
      db[grp * n + c] += dy[r * stride + c];
    }
    lock[groups + grp] = 1;
  }
  for (int64_t g = 0; g < groups; ++g) lock[g] = 0;
  OracleResult res;
  dx.into(res);
  dw.into(res);
  db.into(res);
  lock.into(res);
  return res;
}

// 05 backward, the final sums: FINAL_DW[c] = sum_m DW[m, c], FINAL_DB likewise.
OracleResult layerNormBackwardDwDb(const Memory& mem, const Launch& l) {
  In dw(mem, "DW"), db(mem, "DB");
  Out fdw(mem, "FINAL_DW"), fdb(mem, "FINAL_DB");
  const int64_t m = l.i("M"), n = l.i("N");
  for (int64_t c = 0; c < n; ++c) {
    double sw = 0, sb = 0;
    for (int64_t r = 0; r < m; ++r) {
      sw += dw[r * n + c];
      sb += db[r * n + c];
    }
    fdw[c] = sw;
    fdb[c] = sb;
  }
  OracleResult res;
  fdw.into(res);
  fdb.into(res);
  return res;
}

// 06: attention over [Z, H, N_CTX, HEAD_DIM] contiguous tensors. s_ij = sm_scale q_i . k_j over
// the visible keys (causal: j <= i), Out_i = sum_j softmax_j(s_i) v_j, and M = the log-sum-exp
// of s_i in base 2 (log2(e) times the natural one).
OracleResult attention(const Memory& mem, const Launch& l, bool causal) {
  In q(mem, "Q"), k(mem, "K"), v(mem, "V");
  Out out(mem, "Out"), lse(mem, "M");
  const int64_t heads = l.i("Z") * l.i("H"), ctx = l.i("N_CTX"), d = l.i("HEAD_DIM");
  const double scale = l.f("sm_scale");
  const double log2e = 1.0 / std::log(2.0);
  for (int64_t zh = 0; zh < heads; ++zh) {
    const int64_t base = zh * ctx * d;
    for (int64_t i = 0; i < ctx; ++i) {
      const int64_t visible = causal ? i + 1 : ctx;
      std::vector<double> s(static_cast<size_t>(visible));
      for (int64_t j = 0; j < visible; ++j) {
        double dotp = 0;
        for (int64_t e = 0; e < d; ++e) dotp += q[base + i * d + e] * k[base + j * d + e];
        s[static_cast<size_t>(j)] = scale * dotp;
      }
      double logSumExp = 0;
      softmaxInPlace(s, &logSumExp);
      for (int64_t e = 0; e < d; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < visible; ++j) acc += s[static_cast<size_t>(j)] * v[base + j * d + e];
        out[base + i * d + e] = acc;
      }
      lse[zh * ctx + i] = logSumExp * log2e;
    }
  }
  OracleResult res;
  out.into(res);
  lse.into(res);
  return res;
}
// STAGE 3 is causal, STAGE 1 is not (tutorial 06's convention).
OracleResult attentionStaged(const Memory& mem, const Launch& l) {
  return attention(mem, l, l.i("STAGE") == 3);
}
OracleResult attentionFull(const Memory& mem, const Launch& l) { return attention(mem, l, false); }

// 06 backward preprocess: Delta[zh, i] = sum_d O[zh, i, d] * dO[zh, i, d].
OracleResult attentionBwdPreprocess(const Memory& mem, const Launch& l) {
  In o(mem, "O"), dout(mem, "DO");
  Out delta(mem, "Delta");
  const int64_t heads = bufferNamed(mem, "O").shape.at(0), ctx = l.i("N_CTX"), d = l.i("HEAD_DIM");
  for (int64_t zh = 0; zh < heads; ++zh)
    for (int64_t i = 0; i < ctx; ++i) {
      double s = 0;
      for (int64_t e = 0; e < d; ++e) s += o[(zh * ctx + i) * d + e] * dout[(zh * ctx + i) * d + e];
      delta[zh * ctx + i] = s;
    }
  OracleResult res;
  delta.into(res);
  return res;
}

// 06 backward: with P_ij = exp2(log2(e) sm_scale q_i . k_j - M_i) (0 where j > i if CAUSAL),
// dV = P^T dO, dP = dO V^T, dS = P * (dP - Delta[:, None]), dK = sm_scale dS^T Q,
// dQ = sm_scale dS K; M and Delta are taken as given.
OracleResult attentionBackward(const Memory& mem, const Launch& l) {
  In q(mem, "Q"), k(mem, "K"), v(mem, "V"), dout(mem, "DO"), lse(mem, "M"), delta(mem, "D");
  Out dq(mem, "DQ"), dk(mem, "DK"), dv(mem, "DV");
  const int64_t heads = bufferNamed(mem, "Q").shape.at(0), n = l.i("N_CTX"), d = l.i("HEAD_DIM");
  const bool causal = l.i("CAUSAL") != 0;
  const double scale = l.f("sm_scale"), log2e = 1.0 / std::log(2.0);
  for (int64_t zh = 0; zh < heads; ++zh) {
    const int64_t base = zh * n * d;
    auto at = [&](int64_t row, int64_t e) { return base + row * d + e; };
    std::vector<double> p(static_cast<size_t>(n * n)), ds(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, dp = 0;
        for (int64_t e = 0; e < d; ++e) {
          s += q[at(i, e)] * k[at(j, e)];
          dp += dout[at(i, e)] * v[at(j, e)];
        }
        const double pij = causal && j > i ? 0.0 : std::exp2(log2e * scale * s - lse[zh * n + i]);
        p[static_cast<size_t>(i * n + j)] = pij;
        ds[static_cast<size_t>(i * n + j)] = pij * (dp - delta[zh * n + i]);
      }
    for (int64_t r = 0; r < n; ++r)
      for (int64_t e = 0; e < d; ++e) {
        double sv = 0, sk = 0, sq = 0;
        for (int64_t o = 0; o < n; ++o) {
          sv += p[static_cast<size_t>(o * n + r)] * dout[at(o, e)];   // dV_r = sum_i P_ir dO_i
          sk += ds[static_cast<size_t>(o * n + r)] * q[at(o, e)];     // dK_r = sum_i dS_ir q_i
          sq += ds[static_cast<size_t>(r * n + o)] * k[at(o, e)];     // dQ_r = sum_j dS_rj k_j
        }
        dv[at(r, e)] = sv;
        dk[at(r, e)] = scale * sk;
        dq[at(r, e)] = scale * sq;
      }
  }
  OracleResult res;
  dq.into(res);
  dk.into(res);
  dv.into(res);
  return res;
}

// 07, libdevice: asin, erf, tanh of x.
OracleResult libdeviceCalls(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr");
  Out y(mem, "y_ptr"), yErf(mem, "y_erf_ptr"), yTanh(mem, "y_tanh_ptr");
  for (int64_t i = 0; i < l.i("n_elements"); ++i) {
    y[i] = std::asin(x[i]);
    yErf[i] = std::erf(x[i]);
    yTanh[i] = std::tanh(x[i]);
  }
  OracleResult r;
  y.into(r);
  yErf.into(r);
  yTanh.into(r);
  return r;
}

// 07, built-in math: log2(x), sin(y) cos(y), floor(y) + ceil(y), erf(y), x y + 1,
// clamp(y, -1, 1).
OracleResult builtinMath(const Memory& mem, const Launch& l) {
  In x(mem, "x_ptr"), y(mem, "y_ptr");
  Out lg(mem, "out_log2"), trig(mem, "out_trig"), rnd(mem, "out_round"), erf(mem, "out_erf");
  Out fma(mem, "out_fma"), clamp(mem, "out_clamp");
  for (int64_t i = 0; i < l.i("n_elements"); ++i) {
    lg[i] = std::log2(x[i]);
    trig[i] = std::sin(y[i]) * std::cos(y[i]);
    rnd[i] = std::floor(y[i]) + std::ceil(y[i]);
    erf[i] = std::erf(y[i]);
    fma[i] = x[i] * y[i] + 1.0;
    clamp[i] = std::min(std::max(y[i], -1.0), 1.0);
  }
  OracleResult r;
  for (Out* o : {&lg, &trig, &rnd, &erf, &fma, &clamp}) o->into(r);
  return r;
}

// 08: C_g = A_g @ B_g for each problem g, sizes (M, N, K) and leading dimensions (lda, ldb,
// ldc) from group_gemm_sizes and g_lds; the buffers are named A<g>, B<g>, C<g>.
OracleResult groupedGemm(const Memory& mem, const Launch& l) {
  In sizes(mem, "group_gemm_sizes"), lds(mem, "g_lds");
  OracleResult res;
  for (int64_t g = 0; g < l.i("group_size"); ++g) {
    const std::string id = std::to_string(g);
    In a(mem, "A" + id), b(mem, "B" + id);
    Out c(mem, "C" + id);
    matmulInto(a, lds.integer(3 * g), b, lds.integer(3 * g + 1), c, lds.integer(3 * g + 2),
               sizes.integer(3 * g), sizes.integer(3 * g + 1), sizes.integer(3 * g + 2));
    c.into(res);
  }
  return res;
}

}  // namespace

const std::vector<TritonOracle>& tutorialOracles() {
  static const std::vector<TritonOracle> table = {
      {"t01_vector_add", "output = x + y", vectorAdd},
      {"t02_fused_softmax", "softmax of each row", fusedSoftmax},
      {"t03_matmul", "C = leaky_relu(A @ B)", matmulLeakyRelu},
      {"t04_dropout", "x / (1 - p) where x_keep, else 0", dropoutWithMask},
      {"t04_seeded_dropout", "x / (1 - p) where philox_rand(seed, i) > p, else 0", seededDropout},
      {"t05_layer_norm_fwd", "(x - mean) * rstd * W + B; Mean, Rstd", layerNormForward},
      {"t05_layer_norm_bwd_dx", "dX = rstd (W dY - mean(W dY) - xhat mean(W dY xhat)); group dW, dB",
       layerNormBackwardDx},
      {"t05_layer_norm_bwd_dwdb", "column sums of DW and DB", layerNormBackwardDwDb},
      {"t06_attention_fwd", "softmax(sm_scale Q K^T, causal if STAGE 3) V; log2-sum-exp",
       attentionStaged},
      {"t06_attention_bwd", "dQ, dK, dV of softmax attention given M and Delta", attentionBackward},
      {"t06_attention_bwd_preprocess", "Delta = rowsum(O * dO)", attentionBwdPreprocess},
      {"t06_attention_descriptor", "softmax(sm_scale Q K^T) V; log2-sum-exp", attentionFull},
      {"t07_libdevice", "asin(x), erf(x), tanh(x)", libdeviceCalls},
      {"t07_math", "log2, sin cos, floor + ceil, erf, fma, clamp", builtinMath},
      {"t08_grouped_gemm", "C_g = A_g @ B_g for each problem", groupedGemm},
      {"t09_persistent_matmul", "C = A @ B", matmulPlain},
      {"t09_matmul_fp8", "C = fp8_e4m3(A) @ fp8_e4m3(B)", matmulFp8},
      {"t09_matmul_descriptor", "C = A @ B^T (B stored [N, K])", matmulBTransposed},
      {"t09_block_ptr_matmul", "C = A @ B", matmulPlain},
  };
  return table;
}

}  // namespace tl::triton_tests
