// Thread IR ops that compute in registers -> LLVM IR: constants, register moves, elementwise
// math, conversions, warp shuffles.
//
// Expects: verified thread IR; operands already emitted (KernelEmitter::get).
// Guarantees: each op computes what the warp-level executor computes (sim/ElementOps.cpp),
// register by register:
//   - integers wrap (plain add/sub/mul); division and remainder are C's (sdiv/srem) with
//     INT_MIN / -1 = INT_MIN and x % -1 = 0 made explicit (LLVM would call them undefined);
//     a division by zero, which the executor reports, gives x / 0 = x and x % 0 = 0 here
//     (the GPU reports nothing: see docs/gpu.md); i1 arithmetic is modulo 2 on 0/1;
//   - f16/bf16 compute in f32 and round to nearest even after every op, as the executor does;
//   - fp8 registers are i8 bit patterns, converted with sm_89+ cvt instructions (CodegenFp8.cpp);
//   - maximum/minimum propagate NaN and order -0 < +0 (llvm.maximum -> max.NaN.f32);
//   - float -> int conversion truncates and saturates, NaN -> 0 (llvm.fptosi.sat);
//   - exp/exp2/log/rsqrt use the GPU's approximate instructions (ex2.approx, lg2.approx,
//     rsqrt.approx; with .ftz when PtxOptions::fastMath) — the only results that differ from
//     the executor's, by a few ulp (docs/gpu.md), with f32 division: `/` is Triton's div.full.f32
//     (at most 2 ulp), div_rn (attr rounding = "rn") IEEE div.rn; sqrt is IEEE (sqrt.rn);
//   - log2 is lg2.approx; sin/cos are sin.approx/cos.approx after a reduction of x to
//     [-pi, pi] (two fmas with a split 2*pi), so they stay ~2^-21 off for |x| up to ~1e4 and
//     lose accuracy beyond; erf is a polynomial (Taylor below 0.5, Abramowitz-Stegun 7.1.26
//     with this file's e^x above), |error| < 4e-7; floor/ceil are exact (cvt.rmi / cvt.rpi);
//   - the libdevice / tl.math functions (asin ... hypot) are inline formulas over the same
//     approximate instructions, each with its accuracy stated (MathFormulas below); trunc,
//     round, rint and rcp are exact;
//   - shl/shr/umulhi: an amount outside [0, bits) gives 0 (shl) or the sign fill (shr), made
//     explicit with selects (LLVM calls such shifts poison); umulhi is the high half of the
//     widened unsigned product (mul.hi.u32 / mul.hi.u64);
//   - no a*b + c is contracted into an fma: only the `fma` op fuses.
#include <cmath>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "ptx/CodegenInternal.h"
#include "runtime/Fp8.h"

namespace tl::ptx {

using llvm::Intrinsic::ID;
namespace Intr = llvm::Intrinsic;

// ---------------------------------------------------------------------------------------------
// Constants and registers

llvm::Value* KernelEmitter::emitConstant(const Op& op) {
  const Type& t = op.result()->type;
  if (t.isPtr) fail(op, "pointer constants are not supported");
  const Attr* value = op.attr("value");
  if (!value) fail(op, "missing attribute 'value'");
  llvm::Constant* c = nullptr;
  if (isInt(t.dtype)) {
    const int64_t* v = std::get_if<int64_t>(value);
    if (!v) fail(op, "an integer constant needs an integer value");
    // Wrapped to the dtype, as the executor's constantSlot does.
    const uint64_t bits = t.dtype == DType::I1    ? static_cast<uint64_t>(*v & 1)
                          : t.dtype == DType::I32 ? static_cast<uint64_t>(static_cast<uint32_t>(*v))
                                                  : static_cast<uint64_t>(*v);
    c = llvm::ConstantInt::get(dtypeType(t.dtype), bits);
  } else if (isFp8(t.dtype)) {
    // The bit pattern of the value rounded to f32, then to fp8 (as the executor does).
    c = llvm::ConstantInt::get(b_.getInt8Ty(), floatToFp8(t.dtype, static_cast<float>(op.floatAttr("value"))));
  } else {
    // The value rounds to f32 first, then to f16/bf16 (double rounding, as the executor does).
    const float f = static_cast<float>(op.floatAttr("value"));
    llvm::APFloat ap(f);
    bool lost = false;
    if (t.dtype == DType::F16) ap.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
    if (t.dtype == DType::BF16) ap.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &lost);
    c = llvm::ConstantFP::get(ctx_, ap);
  }
  return t.isTile() ? llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(numRegs(t)), c) : c;
}

llvm::Value* KernelEmitter::emitRegisterOp(const Op& op) {
  const Type& rt = op.result()->type;
  switch (op.kind) {
    case OpKind::RegIndex: {  // [0, 1, ..., N-1]
      std::vector<llvm::Value*> rs;
      for (unsigned i = 0; i < numRegs(rt); ++i) rs.push_back(b_.getInt32(i));
      return join(rs, rt);
    }
    case OpKind::Extract: {
      std::vector<llvm::Value*> rs = regs(get(op.operand(0)));
      const int64_t i = op.intAttr("index");
      if (i < 0 || i >= static_cast<int64_t>(rs.size())) fail(op, "register index out of range");
      return rs[static_cast<size_t>(i)];
    }
    case OpKind::Pack: {
      std::vector<llvm::Value*> rs;
      for (const Value* v : op.operands) rs.push_back(get(v));
      return join(rs, rt);
    }
    case OpKind::Permute: {  // result[i] = v[indices[i]]: a shufflevector
      llvm::Value* v = get(op.operand(0));
      const std::vector<int64_t>& idx = op.intsAttr("indices");
      const size_t n = regs(v).size();
      std::vector<int> mask;
      for (int64_t i : idx) {
        if (i < 0 || i >= static_cast<int64_t>(n)) fail(op, "permute index out of range");
        mask.push_back(static_cast<int>(i));
      }
      if (v->getType()->isVectorTy() && rt.isTile()) return b_.CreateShuffleVector(v, mask);
      std::vector<llvm::Value*> in = regs(v), out;
      for (int i : mask) out.push_back(in[static_cast<size_t>(i)]);
      return join(out, rt);
    }
    case OpKind::RegReduce: {  // each `group` consecutive registers, combined in order
      const std::string& kind = op.strAttr("kind");
      const OpKind combine = kind == "sum" ? OpKind::Add : kind == "max" ? OpKind::Maximum : OpKind::Minimum;
      if (kind != "sum" && kind != "max" && kind != "min") fail(op, "unknown reduction kind '" + kind + "'");
      std::vector<llvm::Value*> in = regs(get(op.operand(0))), out;
      const int64_t group = op.intAttr("group");
      if (group <= 0 || in.size() % static_cast<size_t>(group) != 0) fail(op, "group must divide the register count");
      const DType d = op.operand(0)->type.dtype;
      for (size_t j = 0; j < in.size(); j += static_cast<size_t>(group)) {
        llvm::Value* acc = in[j];
        for (size_t k = 1; k < static_cast<size_t>(group); ++k) acc = binary(op, combine, d, acc, in[j + k]);
        out.push_back(acc);
      }
      return join(out, rt);
    }
    default: fail(op, "not a register op");
  }
}

// ---------------------------------------------------------------------------------------------
// Floats: widen f16/bf16 to f32, compute, round back

llvm::Value* KernelEmitter::toF32(llvm::Value* x) {
  llvm::Type* t = x->getType();
  if (t->getScalarType()->isFloatTy()) return x;
  llvm::Type* f32 = b_.getFloatTy();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) f32 = llvm::FixedVectorType::get(f32, vt->getNumElements());
  return b_.CreateFPExt(x, f32);
}

llvm::Value* KernelEmitter::fromF32(llvm::Value* x, DType d) {
  if (d == DType::F32) return x;
  llvm::Type* t = dtypeType(d);
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vt && vt->getNumElements() % 2 == 0 && (d == DType::F16 || d == DType::BF16)) {
    // Pairs as cvt.rn.{bf16x2,f16x2}.f32 d, hi, lo (one instruction per two registers, as ptxas
    // wants after wgmmas: scalar cvts of accumulators there make it serialize them, C7514).
    const auto id = d == DType::BF16 ? Intr::nvvm_ff2bf16x2_rn : Intr::nvvm_ff2f16x2_rn;
    std::vector<llvm::Value*> in = regs(x), out;
    for (size_t i = 0; i < in.size(); i += 2) {
      llvm::Value* pair = b_.CreateIntrinsic(id, {}, {in[i + 1], in[i]});
      for (unsigned k = 0; k < 2; ++k) out.push_back(b_.CreateExtractElement(pair, b_.getInt32(k)));
    }
    return join(out, t, true);
  }
  if (vt) t = llvm::FixedVectorType::get(t, vt->getNumElements());
  return b_.CreateFPTrunc(x, t);  // round to nearest even (cvt.rn.f16.f32 / cvt.rn.bf16.f32)
}

llvm::Value* KernelEmitter::perRegister(llvm::Value* x, const std::function<llvm::Value*(llvm::Value*)>& fn) {
  std::vector<llvm::Value*> rs = regs(x);
  for (llvm::Value*& r : rs) r = fn(r);
  return join(rs, rs[0]->getType(), x->getType()->isVectorTy());
}

static constexpr double kLog2E = 1.4426950408889634;  // log2(e)
static constexpr double kLn2 = 0.6931471805599453;    // ln(2)

llvm::Value* KernelEmitter::exp2(llvm::Value* x) {
  return b_.CreateIntrinsic(opts_.fastMath ? Intr::nvvm_ex2_approx_ftz_f : Intr::nvvm_ex2_approx_f, {}, {x});
}

// e^x. Fast (Triton's): ex2.approx.ftz(x * log2 e) — the rounding of x * log2 e costs up to
// |x| * 2^-24 of relative error (about 2^-17 at |x| = 80). Otherwise a range reduction first,
// x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, two fmas), so the error stays ~2 ulp everywhere:
// e^x = 2^k * ex2.approx(r * log2 e), 2^k applied as two exact power-of-two factors.
llvm::Value* KernelEmitter::exp(llvm::Value* x) {
  llvm::Type* f = b_.getFloatTy();
  if (opts_.fastMath) return exp2(b_.CreateFMul(x, llvm::ConstantFP::get(f, kLog2E)));
  llvm::Value* xc = b_.CreateBinaryIntrinsic(Intr::maximum, b_.CreateBinaryIntrinsic(Intr::minimum, x, llvm::ConstantFP::get(f, 200.0)),
                                             llvm::ConstantFP::get(f, -200.0));  // NaN stays NaN
  llvm::Value* k = b_.CreateUnaryIntrinsic(Intr::rint, b_.CreateFMul(xc, llvm::ConstantFP::get(f, kLog2E)));
  auto fma = [&](llvm::Value* a, double c, llvm::Value* acc) {
    return b_.CreateIntrinsic(Intr::fma, {f}, {a, llvm::ConstantFP::get(f, c), acc});
  };
  llvm::Value* r = fma(k, -0.693359375, xc);  // ln2 = 0.693359375 - 2.12194440e-4 (exact high part)
  r = fma(k, 2.12194440e-4, r);
  llvm::Value* p = exp2(b_.CreateFMul(r, llvm::ConstantFP::get(f, kLog2E)));
  llvm::Value* ki = b_.CreateIntrinsic(Intr::fptosi_sat, {b_.getInt32Ty(), f}, {k});
  ki = b_.CreateBinaryIntrinsic(Intr::smax, b_.CreateBinaryIntrinsic(Intr::smin, ki, b_.getInt32(254)), b_.getInt32(-252));
  llvm::Value* h1 = b_.CreateAShr(ki, 1);
  llvm::Value* h2 = b_.CreateSub(ki, h1);
  auto pow2 = [&](llvm::Value* e) { return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, b_.getInt32(127)), 23), f); };
  return b_.CreateFMul(b_.CreateFMul(p, pow2(h1)), pow2(h2));
}

static constexpr double kTwoPiHi = 6.28125;                 // 201/32: k * kTwoPiHi is exact for |k| < 2^16
static constexpr double kTwoPiLo = 1.9353071795864769253e-3;  // 2*pi - kTwoPiHi

// sin or cos: r = x - k*2pi with k = rint(x / 2pi) (Cody-Waite, two fmas), then the MUFU's
// sin.approx / cos.approx, accurate to ~2^-21 on [-pi, pi].
llvm::Value* KernelEmitter::sinCos(llvm::Value* x, bool cosine) {
  llvm::Type* f = b_.getFloatTy();
  llvm::Value* k = b_.CreateUnaryIntrinsic(Intr::rint, b_.CreateFMul(x, llvm::ConstantFP::get(f, 1.0 / (2 * M_PI))));
  llvm::Value* r = b_.CreateIntrinsic(Intr::fma, {f}, {k, llvm::ConstantFP::get(f, -kTwoPiHi), x});
  r = b_.CreateIntrinsic(Intr::fma, {f}, {k, llvm::ConstantFP::get(f, -kTwoPiLo), r});
  ID id = cosine ? (opts_.fastMath ? Intr::nvvm_cos_approx_ftz_f : Intr::nvvm_cos_approx_f)
                 : (opts_.fastMath ? Intr::nvvm_sin_approx_ftz_f : Intr::nvvm_sin_approx_f);
  return b_.CreateIntrinsic(id, {}, {r});
}

// erf(x): below |x| = 0.5 the Taylor series 2/sqrt(pi) * (x - x^3/3 + x^5/10 - ... + x^13/9360)
// (truncation < 2e-8); above, Abramowitz & Stegun 7.1.26: 1 - (a1 t + ... + a5 t^5) e^-x^2 with
// t = 1 / (1 + p|x|), |error| <= 1.5e-7, with x's sign. In f32 the whole stays under 4e-7 (checked
// against the double erf over [-6, 6]); NaN stays NaN.
llvm::Value* KernelEmitter::erf(llvm::Value* x) {
  llvm::Type* f = b_.getFloatTy();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* acc) { return b_.CreateIntrinsic(Intr::fma, {f}, {a, m, acc}); };
  const double k = 2.0 / std::sqrt(M_PI);
  const double taylor[] = {1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360};
  llvm::Value* x2 = b_.CreateFMul(x, x);
  llvm::Value* p = c(taylor[6] * k);
  for (int i = 5; i >= 0; --i) p = fma(p, x2, c(taylor[i] * k));
  llvm::Value* small = b_.CreateFMul(p, x);
  llvm::Value* a = b_.CreateUnaryIntrinsic(Intr::fabs, x);
  llvm::Value* t = b_.CreateFDiv(c(1.0), fma(c(0.3275911), a, c(1.0)));
  const double as[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  llvm::Value* q = c(as[4]);
  for (int i = 3; i >= 0; --i) q = fma(q, t, c(as[i]));
  q = b_.CreateFMul(q, t);
  llvm::Value* large = b_.CreateFSub(c(1.0), b_.CreateFMul(q, exp(b_.CreateFNeg(b_.CreateFMul(a, a)))));
  large = b_.CreateBinaryIntrinsic(Intr::copysign, large, x);
  return b_.CreateSelect(b_.CreateFCmpOLT(a, c(0.5)), small, large);
}

// ---------------------------------------------------------------------------------------------
// libdevice / tl.math formulas (asin ... hypot): NVPTX has no lowering for these (Triton links
// libdevice; tilelab does not), so each is built here from the GPU's ex2.approx / lg2.approx (as
// KernelEmitter::exp, exp2 and log use them), IEEE division and square root, and fmas, on one
// scalar f32 register. Each formula's own error against the double-precision function (worst
// case measured over its range by tests/ptx/libdevice_formulas_test.cpp, which transcribes the
// formulas with exact exp2/log2; the MUFU's ex2/lg2.approx add about 2 ulp on the GPU, where
// `tl-ptx tests/thread/kernels/libdevice_ops.tl` compares every output with tl-scalar's libm):
//   atan        Cephes atanf: reduction by tan(pi/8) / tan(3pi/8), degree-4 odd polynomial: 1.7 ulp
//   atan2       atan of min/max over [0, 1], then the quadrant: 3 ulp; C's special cases
//               (signed zeros, infinities: atan2(inf, inf) = pi/4) selected explicitly
//   asin, acos  atan2(x, sqrt((1-x)(1+x))) and atan2(sqrt(...), x): 3.3 ulp
//   tan         Cephes tanf's polynomial (degree 6, -1/y on odd octants) after a reduction by
//               pi/4 in f64 (two fmas, pi/4 = hi + lo): 2.6 ulp for |x| < 1e5
//   expm1       Taylor to x^9 for |x| < 0.5 (truncation < 3e-10), else exp(x) - 1: 1.4 ulp
//   sinh        |x| < 1: (e + e/(e+1))/2, e = expm1|x|; else h - 0.25/h, h = (e^(x/2)/2) e^(x/2)
//               (no overflow below 89.4): 2.9 ulp
//   cosh        h + 0.25/h as sinh's: 2.6 ulp
//   tanh        e/(e+2), e = expm1(2|x|), |x| clamped to 10 (tanh = 1 in f32 beyond): 2.5 ulp
//   log10       lg2.approx(x) * log10(2): as log (lg2.approx's absolute error ~2^-22 near x = 1)
//   log1p       |x| < 0.5: 2 atanh(x/(2+x)) by its series to s^15 (truncation < 2e-9); else
//               ln 2 lg2(1 + x): 2.3 ulp
//   exp10       Cody-Waite: x = k log10(2) + r (two fmas), 2^k ex2(r log2(10)): 0.9 ulp
//   cbrt        ex2(lg2|x| / 3) and one Newton step: 0.7 ulp
//   pow         log2|x| in f64 (frexp by bits, 2 atanh series to s^13: ~1e-16), y log2|x| in
//               f64, 2^frac by ex2.approx, 2^int by bits, rounded once to f32: 0.8 ulp at every
//               magnitude; C's special cases (y = 0, x = 1, x < 0 with integer or other y, zeros,
//               infinities, NaN) selected explicitly
//   hypot       max * sqrt(1 + (min/max)^2): 1.8 ulp; hypot(inf, NaN) = inf, as C
//   rcp         1/x, div.rn (exact)
//   trunc, round, rint   llvm.trunc (cvt.rzi), llvm.round (NVPTX's own expansion), llvm.rint
//               (cvt.rni): exact
namespace {

constexpr double kPi = 3.14159265358979323846;

struct MathFormulas {
  llvm::IRBuilder<>& b;
  std::function<llvm::Value*(llvm::Value*)> exp;  // e^x (KernelEmitter::exp)
  std::function<llvm::Value*(llvm::Value*)> ex2;  // ex2.approx
  std::function<llvm::Value*(llvm::Value*)> lg2;  // lg2.approx

  llvm::Type* f() { return b.getFloatTy(); }
  llvm::Value* c(double v) { return llvm::ConstantFP::get(f(), v); }
  llvm::Value* cd(double v) { return llvm::ConstantFP::get(b.getDoubleTy(), v); }
  llvm::Value* fma(llvm::Value* a, llvm::Value* m, llvm::Value* acc) {
    return b.CreateIntrinsic(Intr::fma, {a->getType()}, {a, m, acc});
  }
  // Horner: coeffs[0] x^n + ... + coeffs[n] (same type as x).
  llvm::Value* poly(llvm::Value* x, std::initializer_list<double> coeffs) {
    const bool dbl = x->getType()->isDoubleTy();
    llvm::Value* p = nullptr;
    for (double k : coeffs) {
      llvm::Value* kc = dbl ? cd(k) : c(k);
      p = p ? fma(p, x, kc) : kc;
    }
    return p;
  }
  llvm::Value* fabs(llvm::Value* x) { return b.CreateUnaryIntrinsic(Intr::fabs, x); }
  llvm::Value* copysign(llvm::Value* mag, llvm::Value* sign) { return b.CreateBinaryIntrinsic(Intr::copysign, mag, sign); }
  llvm::Value* sel(llvm::Value* cond, llvm::Value* a, llvm::Value* o) { return b.CreateSelect(cond, a, o); }
  llvm::Value* isNan(llvm::Value* x) { return b.CreateFCmpUNO(x, x); }
  llvm::Value* isInf(llvm::Value* x) { return b.CreateFCmpOEQ(fabs(x), c(INFINITY)); }
  llvm::Value* signbit(llvm::Value* x) { return b.CreateICmpSLT(b.CreateBitCast(x, b.getInt32Ty()), b.getInt32(0)); }
  llvm::Value* div(llvm::Value* a, llvm::Value* d) { return b.CreateFDiv(a, d); }
  llvm::Value* sqrt(llvm::Value* x) { return b.CreateUnaryIntrinsic(Intr::sqrt, x); }

  // atan(a) for a >= 0 (or NaN), Cephes atanf.
  llvm::Value* atanNonNeg(llvm::Value* a) {
    llvm::Value* big = b.CreateFCmpOGT(a, c(2.414213562373095));
    llvm::Value* mid = b.CreateFCmpOGT(a, c(0.4142135623730950));
    llvm::Value* x = sel(big, div(c(-1.0), a), sel(mid, div(b.CreateFSub(a, c(1.0)), b.CreateFAdd(a, c(1.0))), a));
    llvm::Value* base = sel(big, c(kPi / 2), sel(mid, c(kPi / 4), c(0.0)));
    llvm::Value* z = b.CreateFMul(x, x);
    llvm::Value* p = poly(z, {8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1});
    return b.CreateFAdd(base, fma(b.CreateFMul(p, z), x, x));
  }
  llvm::Value* atan(llvm::Value* x) { return copysign(atanNonNeg(fabs(x)), x); }

  llvm::Value* atan2(llvm::Value* y, llvm::Value* x) {
    llvm::Value *ax = fabs(x), *ay = fabs(y);
    llvm::Value* mx = b.CreateBinaryIntrinsic(Intr::maxnum, ax, ay);
    llvm::Value* mn = b.CreateBinaryIntrinsic(Intr::minnum, ax, ay);
    llvm::Value* t = div(mn, mx);
    t = sel(b.CreateFCmpOEQ(mx, c(0.0)), c(0.0), t);                        // atan2(+-0, +-0)
    t = sel(b.CreateAnd(isInf(x), isInf(y)), c(1.0), t);                     // atan2(+-inf, +-inf)
    llvm::Value* r = atanNonNeg(t);
    r = sel(b.CreateFCmpOGT(ay, ax), b.CreateFSub(c(kPi / 2), r), r);
    r = sel(signbit(x), b.CreateFSub(c(kPi), r), r);
    r = copysign(r, y);
    return sel(b.CreateOr(isNan(x), isNan(y)), b.CreateFAdd(x, y), r);
  }
  llvm::Value* sqrt1mx2(llvm::Value* x) {
    return sqrt(b.CreateFMul(b.CreateFSub(c(1.0), x), b.CreateFAdd(c(1.0), x)));
  }
  llvm::Value* asin(llvm::Value* x) { return atan2(x, sqrt1mx2(x)); }
  llvm::Value* acos(llvm::Value* x) { return atan2(sqrt1mx2(x), x); }

  // Cephes tanf.
  llvm::Value* tan(llvm::Value* x) {
    llvm::Value* ax = fabs(x);
    llvm::Value* q = b.CreateUnaryIntrinsic(Intr::floor, b.CreateFMul(ax, c(4.0 / kPi)));
    llvm::Value* y = b.CreateFMul(c(2.0), b.CreateUnaryIntrinsic(Intr::floor, b.CreateFMul(b.CreateFAdd(q, c(1.0)), c(0.5))));
    // z = |x| - y pi/4 in f64 with pi/4 as hi + lo: exact enough near tan's zeros and poles,
    // where an f32 reduction (Cephes' three constants) loses hundreds of ulps at |x| ~ 2000.
    llvm::Type* dt = b.getDoubleTy();
    llvm::Value* yd = b.CreateFPExt(y, dt);
    llvm::Value* zd = fma(yd, cd(-0.78539816339744830962), b.CreateFPExt(ax, dt));
    zd = fma(yd, cd(-3.0616169978683830179e-17), zd);
    llvm::Value* z = b.CreateFPTrunc(zd, f());
    llvm::Value* zz = b.CreateFMul(z, z);
    llvm::Value* p = poly(zz, {9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2,
                               1.33387994085e-1, 3.33331568548e-1});
    llvm::Value* t = fma(b.CreateFMul(p, zz), z, z);
    llvm::Value* j = b.CreateIntrinsic(Intr::fptosi_sat, {b.getInt32Ty(), f()}, {y});
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(j, b.getInt32(2)), b.getInt32(0));
    t = sel(odd, div(c(-1.0), t), t);
    return sel(signbit(x), b.CreateFNeg(t), t);  // tan(-x) = -tan(x) (t may be negative: not copysign)
  }

  llvm::Value* expm1(llvm::Value* x) {
    llvm::Value* p = poly(x, {1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0});
    llvm::Value* small = b.CreateFMul(p, x);
    llvm::Value* large = b.CreateFSub(exp(x), c(1.0));
    return sel(b.CreateFCmpOLT(fabs(x), c(0.5)), small, large);
  }
  // e^(a/2) / 2 * e^(a/2) = e^a / 2 without overflowing below a = 89.4.
  llvm::Value* halfExp(llvm::Value* a) {
    llvm::Value* e = exp(b.CreateFMul(a, c(0.5)));
    return b.CreateFMul(b.CreateFMul(e, c(0.5)), e);
  }
  llvm::Value* sinh(llvm::Value* x) {
    llvm::Value* a = fabs(x);
    llvm::Value* e = expm1(a);
    llvm::Value* small = b.CreateFMul(c(0.5), b.CreateFAdd(e, div(e, b.CreateFAdd(e, c(1.0)))));
    llvm::Value* h = halfExp(a);
    llvm::Value* large = b.CreateFSub(h, div(c(0.25), h));
    return copysign(sel(b.CreateFCmpOLT(a, c(1.0)), small, large), x);
  }
  llvm::Value* cosh(llvm::Value* x) {
    llvm::Value* h = halfExp(fabs(x));
    return b.CreateFAdd(h, div(c(0.25), h));
  }
  llvm::Value* tanh(llvm::Value* x) {
    llvm::Value* a = b.CreateBinaryIntrinsic(Intr::minimum, fabs(x), c(10.0));  // NaN stays NaN
    llvm::Value* e = expm1(b.CreateFMul(a, c(2.0)));
    return copysign(div(e, b.CreateFAdd(e, c(2.0))), x);
  }

  llvm::Value* log10(llvm::Value* x) { return b.CreateFMul(lg2(x), c(0.30102999566398120)); }
  llvm::Value* log1p(llvm::Value* x) {
    llvm::Value* s = div(x, b.CreateFAdd(c(2.0), x));
    llvm::Value* s2 = b.CreateFMul(s, s);
    llvm::Value* p = poly(s2, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
    llvm::Value* small = b.CreateFMul(b.CreateFMul(c(2.0), s), p);
    llvm::Value* large = b.CreateFMul(lg2(b.CreateFAdd(c(1.0), x)), c(kLn2));
    return sel(b.CreateFCmpOLT(fabs(x), c(0.5)), small, large);
  }
  // 2^k for an i32 k in [-252, 254], as two exact power-of-two factors (KernelEmitter::exp's).
  llvm::Value* scale2k(llvm::Value* p, llvm::Value* k) {
    k = b.CreateBinaryIntrinsic(Intr::smax, b.CreateBinaryIntrinsic(Intr::smin, k, b.getInt32(254)), b.getInt32(-252));
    llvm::Value* h1 = b.CreateAShr(k, 1);
    llvm::Value* h2 = b.CreateSub(k, h1);
    auto pow2 = [&](llvm::Value* e) { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, b.getInt32(127)), 23), f()); };
    return b.CreateFMul(b.CreateFMul(p, pow2(h1)), pow2(h2));
  }
  llvm::Value* exp10(llvm::Value* x) {
    constexpr double kLog2_10 = 3.3219280948873623;
    llvm::Value* xc = b.CreateBinaryIntrinsic(Intr::maximum, b.CreateBinaryIntrinsic(Intr::minimum, x, c(60.0)), c(-60.0));
    llvm::Value* k = b.CreateUnaryIntrinsic(Intr::rint, b.CreateFMul(xc, c(kLog2_10)));
    llvm::Value* r = fma(k, c(-0.301025390625), xc);  // log10(2) = 1233/4096 + 4.605038981195e-6
    r = fma(k, c(-4.6050389811952113e-6), r);
    llvm::Value* p = ex2(b.CreateFMul(r, c(kLog2_10)));
    return scale2k(p, b.CreateIntrinsic(Intr::fptosi_sat, {b.getInt32Ty(), f()}, {k}));
  }
  llvm::Value* cbrt(llvm::Value* x) {
    llvm::Value* a = fabs(x);
    llvm::Value* r = ex2(b.CreateFMul(lg2(a), c(1.0 / 3)));
    r = b.CreateFSub(r, b.CreateFMul(b.CreateFSub(r, div(a, b.CreateFMul(r, r))), c(1.0 / 3)));  // Newton
    r = sel(b.CreateOr(b.CreateFCmpOEQ(a, c(0.0)), isInf(a)), a, r);
    return copysign(r, x);
  }
  llvm::Value* hypot(llvm::Value* x, llvm::Value* y) {
    llvm::Value *ax = fabs(x), *ay = fabs(y);
    llvm::Value* mx = b.CreateBinaryIntrinsic(Intr::maxnum, ax, ay);
    llvm::Value* mn = b.CreateBinaryIntrinsic(Intr::minnum, ax, ay);
    llvm::Value* r = div(mn, mx);
    llvm::Value* h = b.CreateFMul(mx, sqrt(fma(r, r, c(1.0))));
    h = sel(b.CreateFCmpOEQ(mx, c(0.0)), c(0.0), h);
    h = sel(b.CreateOr(isNan(x), isNan(y)), b.CreateFAdd(x, y), h);
    return sel(b.CreateOr(isInf(x), isInf(y)), c(INFINITY), h);
  }

  // log2(d) for a positive, finite, normal double d: e + (2 / ln 2) atanh((m-1)/(m+1)), m in
  // [sqrt(1/2), sqrt(2)), the series to s^13 (|s| <= 0.1716: truncation ~1e-12 relative... of
  // the atanh term, far below f32's 6e-8).
  llvm::Value* log2Double(llvm::Value* d) {
    llvm::Type* i64 = b.getInt64Ty();
    llvm::Value* bits = b.CreateBitCast(d, i64);
    llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 52), llvm::ConstantInt::get(i64, 0x7ff)),
                                 llvm::ConstantInt::get(i64, 1023));
    llvm::Value* mBits = b.CreateOr(b.CreateAnd(bits, llvm::ConstantInt::get(i64, (uint64_t(1) << 52) - 1)),
                                    llvm::ConstantInt::get(i64, uint64_t(1023) << 52));
    llvm::Value* m = b.CreateBitCast(mBits, b.getDoubleTy());
    llvm::Value* big = b.CreateFCmpOGT(m, cd(1.4142135623730951));
    m = sel(big, b.CreateFMul(m, cd(0.5)), m);
    e = b.CreateAdd(e, b.CreateZExt(big, i64));
    llvm::Value* s = div(b.CreateFSub(m, cd(1.0)), b.CreateFAdd(m, cd(1.0)));
    llvm::Value* s2 = b.CreateFMul(s, s);
    llvm::Value* p = poly(s2, {1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
    llvm::Value* at = b.CreateFMul(s, p);  // atanh(s)
    return fma(at, cd(2.0 / kLn2), b.CreateSIToFP(e, b.getDoubleTy()));
  }
  llvm::Value* pow(llvm::Value* x, llvm::Value* y) {
    llvm::Type* dt = b.getDoubleTy();
    llvm::Value* ax = fabs(x);
    llvm::Value* yd = b.CreateFPExt(y, dt);
    // t = y log2|x|, with |x| = 0, 1, inf given their limits (no log of them).
    llvm::Value* zero = b.CreateFCmpOEQ(ax, c(0.0));
    llvm::Value* inf = isInf(ax);
    llvm::Value* one = b.CreateFCmpOEQ(ax, c(1.0));
    llvm::Value* safe = sel(b.CreateOr(b.CreateOr(zero, inf), one), c(2.0), ax);
    llvm::Value* t = b.CreateFMul(yd, log2Double(b.CreateFPExt(safe, dt)));
    llvm::Value* yPos = b.CreateFCmpOGT(y, c(0.0));
    llvm::Value* infT = sel(b.CreateXor(zero, yPos), cd(INFINITY), cd(-INFINITY));  // 0^+ = 0, 0^- = inf, inf^+ = inf
    t = sel(b.CreateOr(zero, inf), infT, t);
    t = sel(one, cd(0.0), t);
    // 2^t = 2^k 2^f, k = rint(t), |f| <= 1/2; t clamped to +-400 (0 or inf in f32 beyond).
    t = sel(b.CreateFCmpOGT(t, cd(400.0)), cd(400.0), t);
    t = sel(b.CreateFCmpOLT(t, cd(-400.0)), cd(-400.0), t);
    llvm::Value* k = b.CreateUnaryIntrinsic(Intr::rint, t);
    llvm::Value* frac = b.CreateFPTrunc(b.CreateFSub(t, k), f());
    llvm::Value* p = b.CreateFPExt(ex2(frac), dt);
    llvm::Value* ki = b.CreateIntrinsic(Intr::fptosi_sat, {b.getInt64Ty(), dt}, {k});
    llvm::Value* scale = b.CreateBitCast(b.CreateShl(b.CreateAdd(ki, b.getInt64(1023)), 52), dt);
    llvm::Value* r = b.CreateFPTrunc(b.CreateFMul(p, scale), f());
    // x < 0 (or -0): an integer y gives the sign of x^y by its parity, any other y NaN.
    llvm::Value* yInt = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(Intr::floor, y), y);
    llvm::Value* yHalf = b.CreateFMul(y, c(0.5));
    llvm::Value* yOdd = b.CreateAnd(yInt, b.CreateFCmpONE(b.CreateUnaryIntrinsic(Intr::floor, yHalf), yHalf));
    llvm::Value* neg = signbit(x);
    r = sel(b.CreateAnd(neg, yOdd), b.CreateFNeg(r), r);
    r = sel(b.CreateAnd(b.CreateAnd(neg, b.CreateNot(yInt)), b.CreateNot(b.CreateOr(zero, inf))), c(NAN), r);
    r = sel(b.CreateOr(isNan(x), isNan(y)), b.CreateFAdd(x, y), r);
    r = sel(b.CreateFCmpOEQ(x, c(1.0)), c(1.0), r);       // 1^y = 1, NaN included
    return sel(b.CreateFCmpOEQ(y, c(0.0)), c(1.0), r);    // x^0 = 1, NaN included
  }
};

}  // namespace

llvm::Value* KernelEmitter::floatUnary(const Op& at, OpKind kind, llvm::Value* x) {
  llvm::Type* t = x->getType();
  auto one = [&] { return llvm::ConstantFP::get(t, 1.0); };
  switch (kind) {
    case OpKind::Neg: return b_.CreateFNeg(x);
    case OpKind::Abs: return b_.CreateUnaryIntrinsic(Intr::fabs, x);
    case OpKind::Sqrt: return b_.CreateUnaryIntrinsic(Intr::sqrt, x);  // sqrt.rn.f32: IEEE
    case OpKind::Exp: return perRegister(x, [&](llvm::Value* r) { return exp(r); });
    case OpKind::Exp2: return perRegister(x, [&](llvm::Value* r) { return exp2(r); });
    case OpKind::Log:  // ln x = lg2.approx(x) * ln 2
      return perRegister(x, [&](llvm::Value* r) {
        llvm::Value* l2 = b_.CreateIntrinsic(opts_.fastMath ? Intr::nvvm_lg2_approx_ftz_f : Intr::nvvm_lg2_approx_f, {}, {r});
        return b_.CreateFMul(l2, llvm::ConstantFP::get(b_.getFloatTy(), kLn2));
      });
    case OpKind::Rsqrt:
      if (!opts_.fastMath) return b_.CreateFDiv(one(), b_.CreateUnaryIntrinsic(Intr::sqrt, x));  // exactly the executor's
      return perRegister(x, [&](llvm::Value* r) { return b_.CreateIntrinsic(Intr::nvvm_rsqrt_approx_ftz_f, {}, {r}); });
    case OpKind::Log2:
      return perRegister(x, [&](llvm::Value* r) {
        return b_.CreateIntrinsic(opts_.fastMath ? Intr::nvvm_lg2_approx_ftz_f : Intr::nvvm_lg2_approx_f, {}, {r});
      });
    case OpKind::Cos: return perRegister(x, [&](llvm::Value* r) { return sinCos(r, true); });
    case OpKind::Sin: return perRegister(x, [&](llvm::Value* r) { return sinCos(r, false); });
    case OpKind::Floor: return b_.CreateUnaryIntrinsic(Intr::floor, x);  // cvt.rmi.f32.f32
    case OpKind::Ceil: return b_.CreateUnaryIntrinsic(Intr::ceil, x);    // cvt.rpi.f32.f32
    case OpKind::Erf: return perRegister(x, [&](llvm::Value* r) { return erf(r); });
    case OpKind::Trunc: return b_.CreateUnaryIntrinsic(Intr::trunc, x);  // cvt.rzi.f32.f32
    case OpKind::Round: return b_.CreateUnaryIntrinsic(Intr::round, x);  // halves away from zero
    case OpKind::Rint: return b_.CreateUnaryIntrinsic(Intr::rint, x);    // cvt.rni.f32.f32: halves to even
    case OpKind::Rcp: return b_.CreateFDiv(one(), x);                    // div.rn.f32
    case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
    case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
    case OpKind::Cbrt: {
      MathFormulas m{b_, [&](llvm::Value* v) { return exp(v); }, [&](llvm::Value* v) { return exp2(v); },
                     [&](llvm::Value* v) {
                       return b_.CreateIntrinsic(opts_.fastMath ? Intr::nvvm_lg2_approx_ftz_f : Intr::nvvm_lg2_approx_f, {}, {v});
                     }};
      return perRegister(x, [&](llvm::Value* r) -> llvm::Value* {
        switch (kind) {
          case OpKind::Asin: return m.asin(r);
          case OpKind::Acos: return m.acos(r);
          case OpKind::Atan: return m.atan(r);
          case OpKind::Tan: return m.tan(r);
          case OpKind::Sinh: return m.sinh(r);
          case OpKind::Cosh: return m.cosh(r);
          case OpKind::Tanh: return m.tanh(r);
          case OpKind::Log10: return m.log10(r);
          case OpKind::Log1p: return m.log1p(r);
          case OpKind::Expm1: return m.expm1(r);
          case OpKind::Exp10: return m.exp10(r);
          default: return m.cbrt(r);
        }
      });
    }
    case OpKind::Sigmoid: {  // 1 / (1 + e^-x), the division IEEE
      llvm::Value* e = perRegister(b_.CreateFNeg(x), [&](llvm::Value* r) { return exp(r); });
      return b_.CreateFDiv(one(), b_.CreateFAdd(one(), e));
    }
    default: fail(at, "not a float unary op");
  }
}

llvm::Value* KernelEmitter::emitUnary(const Op& op) {
  const DType d = op.result()->type.dtype;
  llvm::Value* x = get(op.operand(0));
  if (isFloat(d)) return fromF32(floatUnary(op, op.kind, toF32(x)), d);
  switch (op.kind) {
    case OpKind::Neg: return b_.CreateNeg(x);  // wraps (i1: -x = x modulo 2)
    case OpKind::Not: return b_.CreateNot(x);
    case OpKind::Abs:  // |INT_MIN| = INT_MIN, as the executor wraps; an i1 is never negative
      return d == DType::I1 ? x : b_.CreateBinaryIntrinsic(Intr::abs, x, b_.getFalse());
    default: fail(op, std::string("'") + mnemonic(op.kind) + "' needs a float operand");
  }
}

// ---------------------------------------------------------------------------------------------
// Binary ops

llvm::Value* KernelEmitter::intBinary(const Op& at, OpKind kind, DType d, llvm::Value* a, llvm::Value* b) {
  if (d == DType::I1) {  // 0/1 values modulo 2; max/min compare 0 < 1
    switch (kind) {
      case OpKind::Add: case OpKind::Sub: case OpKind::Xor: return b_.CreateXor(a, b);
      case OpKind::Mul: case OpKind::And: case OpKind::Minimum: return b_.CreateAnd(a, b);
      case OpKind::Or: case OpKind::Maximum: return b_.CreateOr(a, b);
      case OpKind::Div: return a;                                 // x / 1 (x / 0: the executor reports it)
      case OpKind::Rem: return llvm::Constant::getNullValue(a->getType());  // x % 1
      default: break;
    }
  }
  llvm::Type* t = a->getType();
  switch (kind) {
    case OpKind::Add: return b_.CreateAdd(a, b);
    case OpKind::Sub: return b_.CreateSub(a, b);
    case OpKind::Mul: return b_.CreateMul(a, b);
    case OpKind::Div:
    case OpKind::Rem: {
      // C semantics without LLVM's undefined cases: divide by 1 where b is -1 or 0, then
      // MIN / -1 = -MIN (wraps to MIN), x % -1 = 0. Constant divisors fold all of this away.
      llvm::Value* minusOne = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(t));
      llvm::Value* zero = b_.CreateICmpEQ(b, llvm::Constant::getNullValue(t));
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(minusOne, zero), llvm::ConstantInt::get(t, 1), b);
      if (kind == OpKind::Div) return b_.CreateSelect(minusOne, b_.CreateNeg(a), b_.CreateSDiv(a, safe));
      return b_.CreateSelect(b_.CreateOr(minusOne, zero), llvm::Constant::getNullValue(t), b_.CreateSRem(a, safe));
    }
    case OpKind::Maximum: return b_.CreateBinaryIntrinsic(Intr::smax, a, b);
    case OpKind::Minimum: return b_.CreateBinaryIntrinsic(Intr::smin, a, b);
    case OpKind::And: return b_.CreateAnd(a, b);
    case OpKind::Or: return b_.CreateOr(a, b);
    case OpKind::Xor: return b_.CreateXor(a, b);
    case OpKind::Shl:
    case OpKind::Shr: {
      // The amount as unsigned: a negative one is out of range too.
      const unsigned bits = t->getScalarSizeInBits();
      llvm::Value* inRange = b_.CreateICmpULT(b, llvm::ConstantInt::get(t, bits));
      if (kind == OpKind::Shr)  // shifting by bits - 1 gives the sign fill
        return b_.CreateAShr(a, b_.CreateSelect(inRange, b, llvm::ConstantInt::get(t, bits - 1)));
      llvm::Value* safe = b_.CreateAnd(b, llvm::ConstantInt::get(t, bits - 1));
      return b_.CreateSelect(inRange, b_.CreateShl(a, safe), llvm::Constant::getNullValue(t));
    }
    case OpKind::Umulhi: {
      const unsigned bits = t->getScalarSizeInBits();
      llvm::Type* wide = b_.getIntNTy(2 * bits);
      if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) wide = llvm::FixedVectorType::get(wide, vt->getNumElements());
      llvm::Value* p = b_.CreateMul(b_.CreateZExt(a, wide), b_.CreateZExt(b, wide));
      return b_.CreateTrunc(b_.CreateLShr(p, llvm::ConstantInt::get(wide, bits)), t);
    }
    default: fail(at, std::string("'") + mnemonic(kind) + "' needs integer operands");
  }
}

llvm::Value* KernelEmitter::binary(const Op& at, OpKind kind, DType d, llvm::Value* a, llvm::Value* b) {
  if (!isFloat(d)) return intBinary(at, kind, d, a, b);
  llvm::Value* x = toF32(a);
  llvm::Value* y = toF32(b);
  llvm::Value* r = nullptr;
  switch (kind) {
    case OpKind::Add: r = b_.CreateFAdd(x, y); break;
    case OpKind::Sub: r = b_.CreateFSub(x, y); break;
    case OpKind::Mul: r = b_.CreateFMul(x, y); break;
    case OpKind::Div: {
      // As Triton: `/` is div.full.f32 (full range, at most 2 ulp from the quotient, whatever
      // fastMath says); a div with rounding = "rn" (div_rn, fdiv(ieee_rounding=True)) is IEEE.
      if (const std::string* rounding = at.strAttrIf("rounding"); rounding && *rounding == "rn") {
        r = b_.CreateFDiv(x, y);  // div.rn.f32
        break;
      }
      llvm::Type* f = b_.getFloatTy();
      auto* full = llvm::InlineAsm::get(llvm::FunctionType::get(f, {f, f}, false), "div.full.f32 $0, $1, $2;", "=f,f,f",
                                        /*sideEffects=*/false);
      std::vector<llvm::Value*> ys = regs(y);
      size_t i = 0;
      r = perRegister(x, [&](llvm::Value* xr) { return b_.CreateCall(full, {xr, ys[i++]}); });
      break;
    }
    case OpKind::Rem: r = b_.CreateFRem(x, y); break;  // NVPTX: x - trunc(x / y) * y (docs/gpu.md)
    case OpKind::Maximum: r = b_.CreateBinaryIntrinsic(Intr::maximum, x, y); break;  // max.NaN.f32
    case OpKind::Minimum: r = b_.CreateBinaryIntrinsic(Intr::minimum, x, y); break;  // min.NaN.f32
    case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot: {  // the formulas above floatUnary
      MathFormulas m{b_, [&](llvm::Value* v) { return exp(v); }, [&](llvm::Value* v) { return exp2(v); },
                     [&](llvm::Value* v) {
                       return b_.CreateIntrinsic(opts_.fastMath ? Intr::nvvm_lg2_approx_ftz_f : Intr::nvvm_lg2_approx_f, {}, {v});
                     }};
      std::vector<llvm::Value*> ys = regs(y);
      size_t i = 0;
      r = perRegister(x, [&](llvm::Value* xr) {
        llvm::Value* yr = ys[i++];
        return kind == OpKind::Atan2 ? m.atan2(xr, yr) : kind == OpKind::Pow ? m.pow(xr, yr) : m.hypot(xr, yr);
      });
      break;
    }
    default: fail(at, std::string("'") + mnemonic(kind) + "' needs integer operands");
  }
  return fromF32(r, d);
}

llvm::Value* KernelEmitter::emitBinary(const Op& op) {
  const DType d = op.operand(0)->type.dtype;
  if (op.kind == OpKind::Fma) {  // a*b + c with one rounding (fma.rn.f32), then rounded to d
    if (!isFloat(d)) fail(op, "fma needs float operands");
    llvm::Value* a = toF32(get(op.operand(0)));
    llvm::Value* r = b_.CreateIntrinsic(Intr::fma, {a->getType()}, {a, toF32(get(op.operand(1))), toF32(get(op.operand(2)))});
    return fromF32(r, d);
  }
  return binary(op, op.kind, d, get(op.operand(0)), get(op.operand(1)));
}

llvm::Value* KernelEmitter::emitCmp(const Op& op) {
  using P = llvm::CmpInst::Predicate;
  const std::string& pred = op.strAttr("pred");
  static const char* names[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  // Ordered float compares (false on NaN) except `ne` (true on NaN), as C's operators.
  static const P fp[] = {P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE, P::FCMP_OEQ, P::FCMP_UNE};
  static const P si[] = {P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE, P::ICMP_EQ, P::ICMP_NE};
  static const P ui[] = {P::ICMP_ULT, P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE, P::ICMP_EQ, P::ICMP_NE};
  int k = -1;
  for (int i = 0; i < 6; ++i)
    if (pred == names[i]) k = i;
  if (k < 0) fail(op, "unknown predicate '" + pred + "'");
  const Type& t = op.operand(0)->type;
  llvm::Value* a = get(op.operand(0));
  llvm::Value* b = get(op.operand(1));
  if (t.isPtr) {  // addresses compare as the executor's signed 64-bit slots
    llvm::Type* i64 = b_.getInt64Ty();
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType())) i64 = llvm::FixedVectorType::get(i64, vt->getNumElements());
    return b_.CreateICmp(si[k], b_.CreatePtrToInt(a, i64), b_.CreatePtrToInt(b, i64));
  }
  if (isFloat(t.dtype)) return b_.CreateFCmp(fp[k], a, b);
  return b_.CreateICmp(t.dtype == DType::I1 ? ui[k] : si[k], a, b);  // i1 holds 0 or 1, not -1
}

llvm::Value* KernelEmitter::emitConvert(const Op& op) {
  const Type& from = op.operand(0)->type;
  const Type& to = op.result()->type;
  if (from.isPtr || to.isPtr) fail(op, "pointer conversions are not supported");
  llvm::Value* x = get(op.operand(0));
  llvm::Type* dst = llvmType(to);
  if (from.dtype == to.dtype) return x;
  if (isFp8(from.dtype) || isFp8(to.dtype)) return convertFp8(op, x);
  if (to.dtype == DType::I1)  // x != 0 (a NaN converts to true)
    return isFloat(from.dtype) ? b_.CreateFCmpUNE(x, llvm::Constant::getNullValue(x->getType()))
                               : b_.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
  llvm::Type* f32 = llvm::isa<llvm::VectorType>(dst) ? llvm::VectorType::get(b_.getFloatTy(), llvm::cast<llvm::VectorType>(dst))
                                                     : static_cast<llvm::Type*>(b_.getFloatTy());
  if (isInt(to.dtype)) {
    if (from.dtype == DType::I1) return b_.CreateZExt(x, dst);
    if (isInt(from.dtype)) return b_.CreateSExtOrTrunc(x, dst);
    // truncate toward zero, saturate, NaN -> 0 (cvt.rzi with clamps)
    llvm::Value* f = toF32(x);
    return b_.CreateIntrinsic(Intr::fptosi_sat, {dst, f->getType()}, {f});
  }
  // to a float: integers go through f32 (then round to f16/bf16, as the executor does)
  if (from.dtype == DType::I1) return fromF32(b_.CreateUIToFP(x, f32), to.dtype);
  if (isInt(from.dtype)) return fromF32(b_.CreateSIToFP(x, f32), to.dtype);
  return fromF32(toF32(x), to.dtype);
}

// ---------------------------------------------------------------------------------------------
// Warp shuffles: 32-bit pieces through shfl.sync.{bfly,idx}.b32 with the full mask; c = 0x1f
// (one segment of 32 lanes, source lane = operand & 31 for idx, lane ^ offset for bfly).

llvm::Value* KernelEmitter::shuffleScalar(llvm::Value* x, llvm::Value* sel, bool xorMode) {
  llvm::Type* t = x->getType();
  llvm::Type* i32 = b_.getInt32Ty();
  auto shfl32 = [&](llvm::Value* v) {
    return b_.CreateIntrinsic(xorMode ? Intr::nvvm_shfl_sync_bfly_i32 : Intr::nvvm_shfl_sync_idx_i32, {},
                              {b_.getInt32(0xffffffffu), v, sel, b_.getInt32(0x1f)});
  };
  if (t->isIntegerTy(32)) return shfl32(x);
  if (t->isFloatTy()) return b_.CreateBitCast(shfl32(b_.CreateBitCast(x, i32)), t);
  if (t->isIntegerTy(1) || t->isIntegerTy(8)) return b_.CreateTrunc(shfl32(b_.CreateZExt(x, i32)), t);  // i8: fp8 bits
  if (t->isHalfTy() || t->isBFloatTy()) {
    llvm::Value* bits = b_.CreateZExt(b_.CreateBitCast(x, b_.getInt16Ty()), i32);
    return b_.CreateBitCast(b_.CreateTrunc(shfl32(bits), b_.getInt16Ty()), t);
  }
  // 64 bits (i64, pointers): two 32-bit halves
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Value* v = t->isPointerTy() ? b_.CreatePtrToInt(x, i64) : x;
  llvm::Value* lo = b_.CreateZExt(shfl32(b_.CreateTrunc(v, i32)), i64);
  llvm::Value* hi = b_.CreateZExt(shfl32(b_.CreateTrunc(b_.CreateLShr(v, 32), i32)), i64);
  llvm::Value* r = b_.CreateOr(lo, b_.CreateShl(hi, 32));
  return t->isPointerTy() ? b_.CreateIntToPtr(r, t) : r;
}

llvm::Value* KernelEmitter::emitShuffle(const Op& op) {
  const bool xorMode = op.kind == OpKind::ShflXor;
  llvm::Value* sel = nullptr;
  if (xorMode) {
    const int64_t offset = op.intAttr("offset");
    if (offset < 1 || offset > 31) fail(op, "offset must be in 1..31");
    sel = b_.getInt32(static_cast<uint32_t>(offset));
  } else {
    sel = get(op.operand(1));
    if (!sel->getType()->isIntegerTy(32)) fail(op, "the source lane must be an i32 scalar");
  }
  return perRegister(get(op.operand(0)), [&](llvm::Value* r) { return shuffleScalar(r, sel, xorMode); });
}

}  // namespace tl::ptx
