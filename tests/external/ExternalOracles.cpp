// The oracles of tests/external (ExternalOracles.h), one per kernel, in the README's order.
#include "ExternalOracles.h"

#include "../e2e/OracleSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tl::external {

namespace {

// A number the launch binds: a runtime scalar or a constexpr, integer or float (True = 1).
double num(const LaunchConfig& l, const std::string& name) {
  if (auto it = l.scalars.find(name); it != l.scalars.end())
    return isFloat(it->second.dtype) ? it->second.f : static_cast<double>(it->second.i);
  if (auto it = l.constexprs.find(name); it != l.constexprs.end()) return static_cast<double>(it->second);
  if (auto it = l.floatConstexprs.find(name); it != l.floatConstexprs.end()) return it->second;
  throw std::runtime_error("oracle: the launch binds no number to '" + name + "'");
}
int64_t inum(const LaunchConfig& l, const std::string& name) { return static_cast<int64_t>(num(l, name)); }

using e2e::In;
using e2e::Out;
const Buffer& buf(const Memory& m, const std::string& name) { return e2e::bufferNamed(m, name); }

double f16(double v) { return roundToDType(v, DType::F16); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Triton tutorial 01: output = x + y.
OracleResult vectorAdd(const Memory& m, const LaunchConfig& l) {
  In x(m, "x_ptr"), y(m, "y_ptr");
  Out out(m, "output_ptr");
  for (int64_t i = 0; i < inum(l, "n_elements"); ++i) out[i] = x[i] + y[i];
  OracleResult r;
  out.into(r);
  return r;
}

// Row-wise softmax of a [rows, cols] matrix: exp(x - max) / sum.
OracleResult rowSoftmax(const Memory& m, const LaunchConfig& l) {
  In x(m, "input_ptr");
  Out y(m, "output_ptr");
  const int64_t rows = inum(l, "n_rows"), cols = inum(l, "n_cols");
  const int64_t is = inum(l, "input_row_stride"), os = inum(l, "output_row_stride");
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, x[r * is + c]);
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(x[r * is + c] - mx);
    for (int64_t c = 0; c < cols; ++c) y[r * os + c] = std::exp(x[r * is + c] - mx) / sum;
  }
  OracleResult res;
  y.into(res);
  return res;
}

// C = act(A @ B) with the tutorials' stride parameters; leaky_relu when ACTIVATION says so.
OracleResult matmul(const Memory& m, const LaunchConfig& l) {
  In a(m, "a_ptr"), b(m, "b_ptr");
  Out c(m, "c_ptr");
  const int64_t M = inum(l, "M"), N = inum(l, "N"), K = inum(l, "K");
  bool leaky = false;
  if (auto it = l.stringConstexprs.find("ACTIVATION"); it != l.stringConstexprs.end()) leaky = it->second == "leaky_relu";
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += a[i * inum(l, "stride_am") + k * inum(l, "stride_ak")] * b[k * inum(l, "stride_bk") + j * inum(l, "stride_bn")];
      if (leaky && acc < 0) acc *= 0.01;
      c[i * inum(l, "stride_cm") + j * inum(l, "stride_cn")] = acc;
    }
  OracleResult r;
  c.into(r);
  return r;
}

// Tutorial 04, dropout with a given keep mask: keep ? x / (1 - p) : 0.
OracleResult dropout(const Memory& m, const LaunchConfig& l) {
  In x(m, "x_ptr"), keep(m, "x_keep_ptr");
  Out out(m, "output_ptr");
  const double p = num(l, "p");
  for (int64_t i = 0; i < inum(l, "n_elements"); ++i) out[i] = keep.integer(i) != 0 ? x[i] / (1 - p) : 0.0;
  OracleResult r;
  out.into(r);
  return r;
}

// Tutorial 04, seeded dropout: the keep mask is tl.rand(seed, offset) > p.
OracleResult seededDropout(const Memory& m, const LaunchConfig& l) {
  In x(m, "x_ptr");
  Out out(m, "output_ptr");
  const double p = num(l, "p");
  const auto seed = static_cast<uint64_t>(inum(l, "seed"));
  for (int64_t i = 0; i < inum(l, "n_elements"); ++i)
    out[i] = tritonRand(seed, static_cast<uint32_t>(i)) > static_cast<float>(p) ? x[i] / (1 - p) : 0.0;
  OracleResult r;
  out.into(r);
  return r;
}

// Tutorial 05 forward: per row mean, biased variance, rstd; Y = (x - mean) * rstd * w + b.
OracleResult layerNormFwd(const Memory& m, const LaunchConfig& l) {
  In x(m, "X"), w(m, "W"), b(m, "B");
  Out y(m, "Y"), mean(m, "Mean"), rstd(m, "Rstd");
  const int64_t M = static_cast<int64_t>(l.grid[0]), N = inum(l, "N"), s = inum(l, "stride");
  for (int64_t r = 0; r < M; ++r) {
    double mu = 0, var = 0;
    for (int64_t c = 0; c < N; ++c) mu += x[r * s + c];
    mu /= N;
    for (int64_t c = 0; c < N; ++c) var += (x[r * s + c] - mu) * (x[r * s + c] - mu);
    var /= N;
    const double rs = 1 / std::sqrt(var + num(l, "eps"));
    mean[r] = mu;
    rstd[r] = rs;
    for (int64_t c = 0; c < N; ++c) y[r * s + c] = (x[r * s + c] - mu) * rs * w[c] + b[c];
  }
  OracleResult res;
  y.into(res), mean.into(res), rstd.into(res);
  return res;
}

// Tutorial 05 backward dX with the given Mean / Rstd, and the per-group partial sums of
// dW = dy * xhat and dB = dy over the rows r with r % GROUP_SIZE_M == g; the locks end released
// (0) and each used group's count at 1.
OracleResult layerNormBwdDx(const Memory& m, const LaunchConfig& l) {
  In x(m, "X"), dy(m, "DY"), w(m, "W"), mean(m, "Mean"), rstd(m, "Rstd");
  Out dx(m, "DX"), dw(m, "DW"), db(m, "DB"), lock(m, "Lock");
  const int64_t rows = l.grid[0], N = inum(l, "N"), s = inum(l, "stride"), G = inum(l, "GROUP_SIZE_M");
  for (int64_t g = 0; g < G; ++g) lock[g] = 0, lock[G + g] = 0;
  for (int64_t g = 0; g < G; ++g)
    for (int64_t c = 0; c < N; ++c) dw[g * N + c] = 0, db[g * N + c] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> xhat(N), wdy(N);
    double c1 = 0, c2 = 0;
    for (int64_t c = 0; c < N; ++c) {
      xhat[c] = (x[r * s + c] - mean[r]) * rstd[r];
      wdy[c] = w[c] * dy[r * s + c];
      c1 += xhat[c] * wdy[c];
      c2 += wdy[c];
    }
    c1 /= N, c2 /= N;
    const int64_t g = r % G;
    lock[G + g] = 1;
    for (int64_t c = 0; c < N; ++c) {
      dx[r * s + c] = (wdy[c] - (xhat[c] * c1 + c2)) * rstd[r];
      dw[g * N + c] += dy[r * s + c] * xhat[c];
      db[g * N + c] += dy[r * s + c];
    }
  }
  OracleResult res;
  dx.into(res), dw.into(res), db.into(res), lock.into(res);
  return res;
}

// Tutorial 05, the final dW / dB: column sums of the [M, N] partial sums.
OracleResult layerNormBwdDwdb(const Memory& m, const LaunchConfig& l) {
  In dw(m, "DW"), db(m, "DB");
  Out fdw(m, "FINAL_DW"), fdb(m, "FINAL_DB");
  const int64_t M = inum(l, "M"), N = inum(l, "N");
  for (int64_t c = 0; c < N; ++c) {
    double a = 0, b = 0;
    for (int64_t r = 0; r < M; ++r) a += dw[r * N + c], b += db[r * N + c];
    fdw[c] = a, fdb[c] = b;
  }
  OracleResult res;
  fdw.into(res), fdb.into(res);
  return res;
}

// Tutorial 06 backward (causal): with P[m, n] = exp2(q_m . k_n - M[m]) for n <= m (K is the
// pre-scaled one, M the forward's base-2 log-sum-exp) and dS = P * (dO_m . v_n - D[m]):
// dV[n] = sum_m f16(P) dO_m, dK[n] = sm_scale * sum_m f16(dS) q_m, dQ[m] = ln2 * sum_n f16(dS) k_n.
OracleResult attentionBwd(const Memory& mem, const LaunchConfig& l) {
  In q(mem, "Q"), k(mem, "K"), v(mem, "V"), dO(mem, "DO"), M(mem, "M"), D(mem, "D");
  Out dq(mem, "DQ"), dk(mem, "DK"), dv(mem, "DV");
  const int64_t T = inum(l, "N_CTX"), H = inum(l, "H"), hd = inum(l, "HEAD_DIM"), heads = l.grid[2];
  const int64_t sh = inum(l, "stride_h"), sz = inum(l, "stride_z"), st = inum(l, "stride_tok"), sd = inum(l, "stride_d");
  const double scale = num(l, "sm_scale"), ln2 = 0.6931471824645996;
  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t base = sh * (bh % H) + sz * (bh / H), row = bh * T;
    auto at = [&](int64_t t, int64_t d) { return base + t * st + d * sd; };
    std::vector<double> p(static_cast<size_t>(T * T), 0), ds(static_cast<size_t>(T * T), 0);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        double qk = 0, dp = 0;
        for (int64_t d = 0; d < hd; ++d) qk += q[at(i, d)] * k[at(j, d)], dp += dO[at(i, d)] * v[at(j, d)];
        const double pij = std::exp2(qk - M[row + i]);
        p[i * T + j] = f16(pij);
        ds[i * T + j] = f16(pij * (dp - D[row + i]));
      }
    for (int64_t t = 0; t < T; ++t)
      for (int64_t d = 0; d < hd; ++d) {
        double sv = 0, sk = 0, sq = 0;
        for (int64_t i = t; i < T; ++i) sv += p[i * T + t] * dO[at(i, d)], sk += ds[i * T + t] * q[at(i, d)];
        for (int64_t j = 0; j <= t; ++j) sq += ds[t * T + j] * k[at(j, d)];
        dv[at(t, d)] = sv, dk[at(t, d)] = scale * sk, dq[at(t, d)] = ln2 * sq;
      }
  }
  OracleResult res;
  dq.into(res), dk.into(res), dv.into(res);
  return res;
}

// Tutorial 06 forward: with s[m, n] = q_m . k_n * sm_scale * log2(e) over n <= m when causal
// (STAGE 3) or every n: M[m] = log2(sum_n exp2(s)) and Out[m] = sum_n f16(p) v_n / sum_n p,
// p = exp2(s - max_n s) (the kernel rounds p to f16 before its dot with V).
OracleResult attentionFwd(const Memory& mem, const LaunchConfig& l) {
  In q(mem, "Q"), k(mem, "K"), v(mem, "V");
  Out o(mem, "Out"), M(mem, "M");
  const int64_t T = inum(l, "N_CTX"), H = inum(l, "H"), hd = inum(l, "HEAD_DIM"), heads = l.grid[1];
  const bool causal = inum(l, "STAGE") == 3;
  const double qkScale = num(l, "sm_scale") * 1.44269504;
  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t base = (bh / H) * inum(l, "stride_qz") + (bh % H) * inum(l, "stride_qh");
    const int64_t qm = inum(l, "stride_qm"), kn = inum(l, "stride_kn"), vk = inum(l, "stride_vk"), om = inum(l, "stride_om");
    for (int64_t i = 0; i < T; ++i) {
      const int64_t last = causal ? i : T - 1;
      std::vector<double> sc(static_cast<size_t>(last + 1));
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j <= last; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < hd; ++d) dot += q[base + i * qm + d] * k[base + j * kn + d];
        sc[j] = dot * qkScale;
        mx = std::max(mx, sc[j]);
      }
      for (int64_t j = 0; j <= last; ++j) sum += std::exp2(sc[j] - mx);
      M[bh * T + i] = mx + std::log2(sum);
      for (int64_t d = 0; d < hd; ++d) {
        double acc = 0;
        for (int64_t j = 0; j <= last; ++j) acc += f16(std::exp2(sc[j] - mx)) * v[base + j * vk + d];
        o[base + i * om + d] = acc / sum;
      }
    }
  }
  OracleResult res;
  o.into(res), M.into(res);
  return res;
}

// Tutorial 07: y = asin(x).
OracleResult asinKernel(const Memory& m, const LaunchConfig& l) {
  In x(m, "x_ptr");
  Out y(m, "y_ptr");
  for (int64_t i = 0; i < inum(l, "n_elements"); ++i) y[i] = std::asin(x[i]);
  OracleResult r;
  y.into(r);
  return r;
}

// Tutorial 08: C_g = A_g @ B_g for g < group_size, the sizes (M, N, K) and leading dimensions
// (lda, ldb, ldc) of problem g from group_gemm_sizes and g_lds; the buffers the address tables
// name are A<g>, B<g>, C<g>.
OracleResult groupedGemm(const Memory& m, const LaunchConfig& l) {
  In sizes(m, "group_gemm_sizes"), lds(m, "g_lds");
  OracleResult r;
  for (int64_t g = 0; g < inum(l, "group_size"); ++g) {
    const std::string id = std::to_string(g);
    In a(m, "A" + id), b(m, "B" + id);
    Out c(m, "C" + id);
    const int64_t M = sizes.integer(3 * g), N = sizes.integer(3 * g + 1), K = sizes.integer(3 * g + 2);
    const int64_t lda = lds.integer(3 * g), ldb = lds.integer(3 * g + 1), ldc = lds.integer(3 * g + 2);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a[i * lda + k] * b[k * ldb + j];
        c[i * ldc + j] = acc;
      }
    c.into(r);
  }
  return r;
}

// RMSNorm, the row-wise parts shared by Liger's and unsloth's forwards.
struct RmsNames {
  const char *x, *w, *y, *r, *xs, *ys;
};
OracleResult rmsNorm(const Memory& m, const LaunchConfig& l, const RmsNames& nm, double offset, bool roundNormed) {
  In x(m, nm.x), w(m, nm.w);
  Out y(m, nm.y), r(m, nm.r);
  const int64_t rows = l.grid[0], N = inum(l, "n_cols"), xs = inum(l, nm.xs), ys = inum(l, nm.ys);
  for (int64_t i = 0; i < rows; ++i) {
    double ms = 0;
    for (int64_t c = 0; c < N; ++c) ms += x[i * xs + c] * x[i * xs + c];
    const double inv = 1 / std::sqrt(ms / N + num(l, "eps"));
    r[i] = inv;
    for (int64_t c = 0; c < N; ++c) {
      double normed = x[i * xs + c] * inv;
      if (roundNormed) normed = roundToDType(normed, buf(m, nm.w).dtype);  // normed.to(W_row.dtype)
      y[i * ys + c] = normed * (offset + w[c]);
    }
  }
  OracleResult res;
  y.into(res), r.into(res);
  return res;
}

// Liger SwiGLU forward: c = silu(a) * b.
OracleResult swiglu(const Memory& m, const LaunchConfig& l) {
  In a(m, "a_ptr"), b(m, "b_ptr");
  Out c(m, "c_ptr");
  const int64_t rows = l.grid[0], N = inum(l, "n_cols"), s = inum(l, "stride");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < N; ++j) c[r * s + j] = a[r * s + j] * sigmoid(a[r * s + j]) * b[r * s + j];
  OracleResult res;
  c.into(res);
  return res;
}

// Liger cross entropy (hard labels, label smoothing, z-loss): the logits become their gradient
// (softmax - eps, scaled by 1 + 2 * lse_square_scale * lse, over n_non_ignore; minus
// (1 - smoothing) / n_non_ignore at the target), loss = (lse - x_y)(1 - ls) + ls * lse -
// eps * sum(x) + z, z = lse_square_scale * lse^2; ignored rows become 0.
OracleResult ligerCrossEntropy(const Memory& m, const LaunchConfig& l) {
  In x(m, "X_ptr"), y(m, "Y_ptr");
  Out gx(m, "X_ptr"), loss(m, "loss_ptr"), zl(m, "z_loss_ptr");
  const int64_t rows = l.grid[0], V = inum(l, "n_cols"), xs = inum(l, "X_stride");
  const double ls = num(l, "label_smoothing"), lss = num(l, "lse_square_scale"), n = num(l, "n_non_ignore");
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = y.integer(r);
    if (t == inum(l, "ignore_index")) {
      for (int64_t c = 0; c < V; ++c) gx[r * xs + c] = 0;
      continue;
    }
    double mx = -std::numeric_limits<double>::infinity(), d = 0, sx = 0;
    for (int64_t c = 0; c < V; ++c) mx = std::max(mx, x[r * xs + c]), sx += x[r * xs + c];
    for (int64_t c = 0; c < V; ++c) d += std::exp(x[r * xs + c] - mx);
    const double lse = mx + std::log(d), eps = ls / V;
    for (int64_t c = 0; c < V; ++c) {
      double g = std::exp(x[r * xs + c] - mx) / d - eps;
      if (lss > 0) g += 2 * lss * lse * g;
      gx[r * xs + c] = g / n;
    }
    gx[r * xs + t] += -(1 - ls) / n;
    double lo = lse - x[r * xs + t];
    if (ls > 0) lo = lo * (1 - ls) + (-eps * sx + ls * lse);
    const double z = lss * lse * lse;
    loss[r] = lo + z;
    if (inum(l, "RETURN_Z_LOSS") == 1) zl[r] = z;
  }
  OracleResult res;
  gx.into(res), loss.into(res), zl.into(res);
  return res;
}

// unsloth GEGLU (exact): h = f16(0.5 e (1 + erf(e / sqrt 2))) * g, rounded to g's dtype.
OracleResult geglu(const Memory& m, const LaunchConfig& l) {
  In e(m, "e"), g(m, "g");
  Out h(m, "h");
  const DType dt = buf(m, "g").dtype;
  for (int64_t i = 0; i < inum(l, "n_elements"); ++i) {
    const double f = roundToDType(0.5 * e[i] * (std::erf(e[i] / std::sqrt(2.0)) + 1.0), dt);
    h[i] = f * g[i];
  }
  OracleResult r;
  h.into(r);
  return r;
}

// attorch softmax forward over [batch_dim, feat_dim] (log-softmax when `log`).
OracleResult attorchSoftmax(const Memory& m, const LaunchConfig& l) {
  In x(m, "input_pointer");
  Out y(m, "output_pointer");
  const int64_t B = inum(l, "batch_dim"), F = inum(l, "feat_dim");
  const int64_t bs = inum(l, "input_batch_stride"), fs = inum(l, "input_feat_stride");
  const bool lg = inum(l, "log") != 0;
  for (int64_t r = 0; r < B; ++r) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t c = 0; c < F; ++c) mx = std::max(mx, x[r * bs + c * fs]);
    for (int64_t c = 0; c < F; ++c) sum += std::exp(x[r * bs + c * fs] - mx);
    for (int64_t c = 0; c < F; ++c)
      y[r * F + c] = lg ? x[r * bs + c * fs] - mx - std::log(sum) : std::exp(x[r * bs + c * fs] - mx) / sum;
  }
  OracleResult res;
  y.into(res);
  return res;
}

// FlagGems layer norm (contiguous rows of N): out = (x - mean) * rstd * w + b, mean, rstd.
OracleResult flagGemsLayerNorm(const Memory& m, const LaunchConfig& l) {
  In x(m, "in_ptr"), w(m, "weight_ptr"), b(m, "bias_ptr");
  Out y(m, "out_ptr"), mean(m, "out_mean_ptr"), rstd(m, "out_rstd_ptr");
  const int64_t M = inum(l, "M"), N = inum(l, "N");
  for (int64_t r = 0; r < M; ++r) {
    double mu = 0, var = 0;
    for (int64_t c = 0; c < N; ++c) mu += x[r * N + c];
    mu /= N;
    for (int64_t c = 0; c < N; ++c) var += (x[r * N + c] - mu) * (x[r * N + c] - mu);
    const double rs = 1 / std::sqrt(var / N + num(l, "eps"));
    mean[r] = mu, rstd[r] = rs;
    for (int64_t c = 0; c < N; ++c) y[r * N + c] = (x[r * N + c] - mu) * rs * w[c] + b[c];
  }
  OracleResult res;
  y.into(res), mean.into(res), rstd.into(res);
  return res;
}

}  // namespace

std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    k[0] += 0x9E3779B9u;
    k[1] += 0xBB67AE85u;
  }
  return c;
}

float tritonRand(uint64_t seed, uint32_t offset) {
  const uint32_t word = philox4x32x10({offset, 0, 0, 0}, {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)})[0];
  int32_t x = static_cast<int32_t>(word);
  if (x < 0) x = -x - 1;
  return static_cast<float>(x) * 4.6566127342e-10f;
}

const std::vector<ExternalOracle>& oracles() {
  static const RmsNames liger{"X_ptr", "W_ptr", "Y_ptr", "r_ptr", "X_row_stride", "Y_row_stride"};
  static const RmsNames unsloth{"X", "W", "Y", "r", "X_row_stride", "Y_row_stride"};
  static const std::vector<ExternalOracle> all = {
      {"triton__01-vector-add__add_kernel", "x + y", vectorAdd},
      {"triton__02-fused-softmax__softmax_kernel", "row softmax", rowSoftmax},
      {"triton__03-matrix-multiplication__matmul_kernel", "leaky_relu(A @ B) in f16", matmul},
      {"triton__04-low-memory-dropout___dropout", "keep ? x / (1 - p) : 0", dropout},
      {"triton__04-low-memory-dropout___seeded_dropout", "rand(seed, i) > p ? x / (1 - p) : 0 (Philox)", seededDropout},
      {"triton__05-layer-norm___layer_norm_fwd_fused", "layer norm, mean and rstd", layerNormFwd},
      {"triton__05-layer-norm___layer_norm_bwd_dx_fused", "layer norm dX and grouped partial dW, dB", layerNormBwdDx},
      {"triton__05-layer-norm___layer_norm_bwd_dwdb", "column sums of the partial dW, dB", layerNormBwdDwdb},
      {"triton__06-fused-attention___attn_fwd", "attention (causal or not), log2-sum-exp M", attentionFwd},
      {"triton__06-fused-attention___attn_bwd", "causal attention dQ, dK, dV", attentionBwd},
      {"triton__07-extern-functions__asin_kernel", "asin(x)", asinKernel},
      {"triton__08-grouped-gemm__grouped_matmul_kernel", "C_g = A_g @ B_g for each problem, in f16", groupedGemm},
      {"triton__09-persistent-matmul__matmul_kernel_persistent", "A @ B in f16", matmul},
      {"liger__rms_norm___rms_norm_forward", "x / rms(x) * (offset + w)",
       [](const Memory& m, const LaunchConfig& l) { return rmsNorm(m, l, liger, num(l, "offset"), false); }},
      {"liger__swiglu___swiglu_forward_kernel", "silu(a) * b", swiglu},
      {"liger__cross_entropy__liger_cross_entropy_kernel", "cross entropy loss, z-loss and gradient", ligerCrossEntropy},
      {"unsloth__rms_layernorm___rms_layernorm_forward", "f16(x / rms(x)) * w",
       [](const Memory& m, const LaunchConfig& l) { return rmsNorm(m, l, unsloth, 0.0, true); }},
      {"unsloth__geglu___exact_forward_kernel", "f16(gelu(e)) * g", geglu},
      {"attorch__softmax_kernels__softmax_forward_kernel", "row softmax", attorchSoftmax},
      {"flaggems__layernorm__layer_norm_loop_kernel", "layer norm, mean and rstd", flagGemsLayerNorm},
  };
  return all;
}

const ExternalOracle* findOracle(const std::string& stem) {
  for (const ExternalOracle& o : oracles())
    if (o.stem == stem) return &o;
  return nullptr;
}

}  // namespace tl::external
