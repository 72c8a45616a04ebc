// Oracles: double-precision references for kernels/*.tl, written from the math (Oracles.h).
//
// Every oracle has the same shape: read sizes and strides from the launch, wrap the input
// buffers in bounds-checked readers, start each output from its initial contents, and fill in
// the elements the kernel is meant to write. The formulas below are deliberately the textbook
// ones (tanh-form GELU, biased variance, max-subtracted softmax), not transcriptions of the
// kernels, so that a wrong kernel or a wrong stage shows up as a mismatch.
#include "Oracles.h"

#include "OracleSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tl::e2e {
namespace {

// ---------------------------------------------------------------------------------------------
// Reading the launch.

// An integer launch parameter: a runtime int scalar or a constexpr.
int64_t intArg(const LaunchConfig& launch, const std::string& name) {
  if (auto it = launch.scalars.find(name); it != launch.scalars.end()) {
    if (!isInt(it->second.dtype))
      throw std::runtime_error("oracle: parameter '" + name + "' is not an integer");
    return it->second.i;
  }
  if (auto it = launch.constexprs.find(name); it != launch.constexprs.end()) return it->second;
  throw std::runtime_error("oracle: the launch binds no integer parameter '" + name + "'");
}

// A float launch parameter (an int scalar is accepted and converted).
double floatArg(const LaunchConfig& launch, const std::string& name) {
  auto it = launch.scalars.find(name);
  if (it == launch.scalars.end())
    throw std::runtime_error("oracle: the launch binds no scalar parameter '" + name + "'");
  return isFloat(it->second.dtype) ? it->second.f : static_cast<double>(it->second.i);
}

// Size of dimension `dim` of a buffer's shape.
int64_t dimOf(const Buffer& b, size_t dim) {
  if (dim >= b.shape.size())
    throw std::runtime_error("oracle: buffer '" + b.name + "' has no dimension " +
                             std::to_string(dim));
  return b.shape[dim];
}

// Inputs and outputs, bounds-checked (OracleSupport.h).
using Input = In;
using Output = Out;

// ---------------------------------------------------------------------------------------------
// The math shared by several oracles.

// softmax(v)_c = exp(v_c - max v) / sum_k exp(v_k - max v)
std::vector<double> softmaxOf(const std::vector<double>& v) {
  double mx = -std::numeric_limits<double>::infinity();
  for (double e : v) mx = std::max(mx, e);
  std::vector<double> out(v.size());
  double total = 0;
  for (size_t c = 0; c < v.size(); ++c) total += (out[c] = std::exp(v[c] - mx));
  for (double& e : out) e /= total;
  return out;
}

// Row-wise softmax of x ([rows, N] at `stride` elements per row) into out (same layout).
OracleResult rowSoftmax(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr");
  Output out(mem, "out_ptr");
  const int64_t rows = dimOf(bufferNamed(mem, "x_ptr"), 0);
  const int64_t n = intArg(launch, "N"), stride = intArg(launch, "stride");
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) v[static_cast<size_t>(c)] = x[r * stride + c];
    std::vector<double> s = softmaxOf(v);
    for (int64_t c = 0; c < n; ++c) out[r * stride + c] = s[static_cast<size_t>(c)];
  }
  OracleResult result;
  out.into(result);
  return result;
}

// GELU, tanh approximation (Hendrycks & Gimpel): 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
double geluTanh(double v) {
  const double kPi = 3.14159265358979323846;
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (v + 0.044715 * v * v * v)));
}

// ---------------------------------------------------------------------------------------------
// One oracle per kernel.

// out[i] = x[i] + y[i] for i < N.
OracleResult vectorAdd(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr"), y(mem, "y_ptr");
  Output out(mem, "out_ptr");
  const int64_t n = intArg(launch, "N");
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
  OracleResult result;
  out.into(result);
  return result;
}

// Y = (X - mean) / sqrt(var + eps) * W + B per row (biased variance); Mean and Rstd per row.
OracleResult layerNorm(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "X"), w(mem, "W"), b(mem, "B");
  Output y(mem, "Y"), meanOut(mem, "Mean"), rstdOut(mem, "Rstd");
  const int64_t rows = dimOf(bufferNamed(mem, "X"), 0);
  const int64_t n = intArg(launch, "N"), stride = intArg(launch, "stride");
  const double eps = floatArg(launch, "eps");
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (int64_t c = 0; c < n; ++c) mean += x[r * stride + c];
    mean /= static_cast<double>(n);
    double var = 0;
    for (int64_t c = 0; c < n; ++c) {
      const double d = x[r * stride + c] - mean;
      var += d * d;
    }
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t c = 0; c < n; ++c) y[r * stride + c] = (x[r * stride + c] - mean) * rstd * w[c] + b[c];
    meanOut[r] = mean;
    rstdOut[r] = rstd;
  }
  OracleResult result;
  y.into(result);
  meanOut.into(result);
  rstdOut.into(result);
  return result;
}

// out[r, c] = gelu(x[r, c] + bias[c]) on [M, N].
OracleResult biasGelu(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr"), bias(mem, "bias_ptr");
  Output out(mem, "out_ptr");
  const int64_t m = intArg(launch, "M"), n = intArg(launch, "N"), stride = intArg(launch, "stride");
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) out[r * stride + c] = geluTanh(x[r * stride + c] + bias[c]);
  OracleResult result;
  out.into(result);
  return result;
}

// out[r] = sum over c < N of x[r, c].
OracleResult rowSum(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr");
  Output out(mem, "out_ptr");
  const int64_t rows = dimOf(bufferNamed(mem, "x_ptr"), 0);
  const int64_t n = intArg(launch, "N"), stride = intArg(launch, "stride");
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t c = 0; c < n; ++c) total += x[r * stride + c];
    out[r] = total;
  }
  OracleResult result;
  out.into(result);
  return result;
}

// out[j, i] = in[i, j] for i < M, j < N, both addressed through their strides.
OracleResult transpose(const Memory& mem, const LaunchConfig& launch) {
  Input in(mem, "in_ptr");
  Output out(mem, "out_ptr");
  const int64_t m = intArg(launch, "M"), n = intArg(launch, "N");
  const int64_t sim = intArg(launch, "stride_im"), sin = intArg(launch, "stride_in");
  const int64_t som = intArg(launch, "stride_om"), son = intArg(launch, "stride_on");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) out[j * som + i * son] = in[i * sim + j * sin];
  OracleResult result;
  out.into(result);
  return result;
}

// out[i] = x[i * stride] for i < N.
OracleResult stridedCopy(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr");
  Output out(mem, "out_ptr");
  const int64_t n = intArg(launch, "N"), stride = intArg(launch, "stride");
  for (int64_t i = 0; i < n; ++i) out[i] = x[i * stride];
  OracleResult result;
  out.into(result);
  return result;
}

// C[m, n] = sum over k < K of A[m, k] * B[k, n], every matrix addressed through its strides.
OracleResult matmul(const Memory& mem, const LaunchConfig& launch) {
  Input a(mem, "a_ptr"), b(mem, "b_ptr");
  Output c(mem, "c_ptr");
  const int64_t m = intArg(launch, "M"), n = intArg(launch, "N"), k = intArg(launch, "K");
  const int64_t sam = intArg(launch, "stride_am"), sak = intArg(launch, "stride_ak");
  const int64_t sbk = intArg(launch, "stride_bk"), sbn = intArg(launch, "stride_bn");
  const int64_t scm = intArg(launch, "stride_cm"), scn = intArg(launch, "stride_cn");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double total = 0;
      for (int64_t p = 0; p < k; ++p) total += a[i * sam + p * sak] * b[p * sbk + j * sbn];
      c[i * scm + j * scn] = total;
    }
  OracleResult result;
  c.into(result);
  return result;
}

// C = A @ B for row-major A[M, K], B[K, N] (matmul_tc: any input dtype; the inputs as stored,
// so f16 / bf16 / fp8 products are exact; f32 inputs meet Triton's default tf32 dot, which the
// comparison's tf32 tolerance covers).
OracleResult matmulRowMajor(const Memory& mem, const LaunchConfig& launch) {
  Input a(mem, "a_ptr"), b(mem, "b_ptr");
  Output c(mem, "c_ptr");
  const int64_t m = intArg(launch, "M"), n = intArg(launch, "N"), k = intArg(launch, "K");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double total = 0;
      for (int64_t p = 0; p < k; ++p) total += a[i * k + p] * b[p * n + j];
      c[i * n + j] = total;
    }
  OracleResult result;
  c.into(result);
  return result;
}

// y[r, c] = x[r, c] / sqrt(mean over c' < N of x[r, c']^2 + eps) * w[c].
OracleResult rmsNorm(const Memory& mem, const LaunchConfig& launch) {
  Input x(mem, "x_ptr"), w(mem, "w_ptr");
  Output y(mem, "y_ptr");
  const int64_t rows = dimOf(bufferNamed(mem, "x_ptr"), 0);
  const int64_t n = intArg(launch, "N"), stride = intArg(launch, "stride");
  const double eps = floatArg(launch, "eps");
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t c = 0; c < n; ++c) sq += x[r * stride + c] * x[r * stride + c];
    const double scale = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (int64_t c = 0; c < n; ++c) y[r * stride + c] = x[r * stride + c] * scale * w[c];
  }
  OracleResult result;
  y.into(result);
  return result;
}

}  // namespace

const std::vector<Oracle>& allOracles() {
  static const std::vector<Oracle> oracles = {
      {"vector_add", "out = x + y", vectorAdd},
      {"softmax", "out[r,:] = softmax(x[r,:])", rowSoftmax},
      {"softmax_online", "out[r,:] = softmax(x[r,:]) (rows longer than a block)", rowSoftmax},
      {"layernorm", "Y = (X - mean) * rstd * W + B; Mean, Rstd per row", layerNorm},
      {"layernorm_row", "Y = (X - mean) * rstd * W + B; Mean, Rstd per row (one pass)", layerNorm},
      {"softmax_rows", "out[r,:] = softmax(x[r,:]) (BLOCK_M rows per program)", rowSoftmax},
      {"bias_gelu", "out = gelu_tanh(x + bias[col])", biasGelu},
      {"row_sum", "out[r] = sum(x[r,:])", rowSum},
      {"transpose", "out[j,i] = in[i,j]", transpose},
      {"transpose_tiled", "out[j,i] = in[i,j] (trans of the tile, rows stored)", transpose},
      {"strided_copy", "out[i] = x[i*stride]", stridedCopy},
      {"matmul", "C = A @ B", matmul},
      {"matmul_tc", "C = A @ B on tensor cores", matmulRowMajor},
      {"rmsnorm", "y = x * rsqrt(mean(x^2) + eps) * w", rmsNorm},
  };
  return oracles;
}

const Oracle* findOracle(const std::string& stem) {
  for (const Oracle& o : allOracles())
    if (o.kernel == stem) return &o;
  return nullptr;
}

}  // namespace tl::e2e
