// tl-scalar's engine: block IR run one program instance at a time, and inside a program one op
// at a time, each op computing its result ONE ELEMENT AT A TIME over boxed scalars.
//
// This file is the definition of what block IR means at run time; every later stage (tl-block,
// the GPU simulator) is checked against it. It is written to be obviously right, not fast.
//
// Expects: block IR (with or without layouts: convert_layout is a copy) that passes the
// verifier (runScalar verifies it first and throws IRError if not); a Memory with one buffer per pointer parameter, named as the parameter, of the
// parameter's dtype; a LaunchConfig with a value for every runtime scalar parameter.
// Guarantees: the semantics below, outputs written to Memory, and a RuntimeError located at the
// op (with the program id and element index) for every run-time fault; nothing is read or
// written outside a buffer.
//
// Execution
//   - Programs run in grid order, x fastest: for z, for y, for x. Every program starts with a
//     fresh set of values; only Memory carries over.
//   - Parameters: a pointer parameter is the base address of the buffer named as it (missing:
//     std::runtime_error); a scalar parameter is LaunchConfig::scalars[name] converted to the
//     parameter's dtype with the `convert` rules.
//   - Tiles are stored row-major; element e of a <M x N> tile is [e / N, e % N].
//
// Element semantics
//   - i32 and i64 arithmetic wraps (two's complement). Integer div/rem truncate toward zero (C):
//     the remainder has the sign of the dividend; division by zero is a RuntimeError "integer
//     division by zero"; MIN / -1 wraps to MIN and MIN % -1 is 0. abs(MIN) and -MIN wrap to MIN.
//   - i1 holds 0 or 1; `not` flips it; and/or/xor are bitwise.
//   - f32 ops are computed in float (expf, exp2f, logf, sqrtf, fmodf; rsqrt = 1.0f / sqrtf(x);
//     sigmoid = 1.0f / (1.0f + expf(-x))). f16 and bf16 ops are computed in float on the
//     operands' exact values and the result is rounded to the dtype (nearest even) after each op.
//   - maximum/minimum on floats: NaN if either operand is NaN; for equal operands (+0 and -0)
//     maximum returns +0 and minimum returns -0; otherwise the larger/smaller.
//   - cmp: IEEE comparisons (any comparison with NaN is false, except `ne`).
//   - convert: float -> i32/i64 truncates toward zero and saturates (NaN -> 0); int -> float
//     rounds to f32 (nearest even), then to f16/bf16/fp8 if that is the target; float -> float
//     rounds to nearest even (to fp8 also saturating: runtime/Fp8.h, PTX's cvt.rn.satfinite;
//     fp8 values take part only in convert, load/store, select, data movement and dot, the
//     verifier's rule); int -> int wraps (sign-extends when widening; i1 gives 0 or 1);
//     anything -> i1 is `x != 0` (so NaN -> 1).
//   - constant: an integer value is converted like `convert` from i64; a float value is rounded
//     to the dtype (through f32).
//   - reduce along an axis: sequential in increasing index, starting from element 0:
//       sum: acc = x0; acc = acc + xk, in the element dtype (ints wrap; f32 in float), except
//            f16/bf16, which accumulate in f32 and round once at the end;
//       max/min: acc = maximum(acc, xk) / minimum(acc, xk) with the elementwise rules above.
//     argmax: the first index holding the maximum; a NaN counts as the maximum (the first NaN
//     wins); +0 and -0 are equal (the first wins).
//   - scan along an axis (inclusive): out[0] = x[0], out[k] = out[k-1] kind x[k] for k = 1, 2,
//     ... (reverse: out[n-1] = x[n-1], out[k] = out[k+1] kind x[k], k = n-2 .. 0), each step
//     the elementwise add / mul / maximum / minimum in the element dtype (ints wrap; f16/bf16
//     rounded after every step), so float sums are ((x0 + x1) + x2) + ... in that order.
//   - reshape: the same elements in row-major order; trans: out[i] = x[i permuted by `order`];
//     join: out[..., k] = (a, b)[k]; split: out = x[..., index]
//   - dot (batched: for each leading index separately):
//     out[m][n] = acc[m][n] + a[m][0]*b[0][n] + a[m][1]*b[1][n] + ... in increasing k, with
//     a and b converted to f32 and every product and every sum rounded to f32 (no fused
//     multiply-add); with precision "tf32" each input is first read as tf32 (truncToTf32: its low 13 mantissa bits dropped,
//     runtime/FloatOps.h), so the products are exact; an f16 accumulator (out_dtype=tl.float16)
//     is read as f32 and the sum rounded to f16 once, at the end (as Triton's interpreter does
//     per dot; tensor cores round it every 16 k, docs/language.md).
//   - addptr: pointer + offset * dtypeBytes(pointee) (offsets are element counts; i32 offsets
//     sign-extend; addresses wrap modulo 2^64).
//   - ptrcast: the element's 64-bit value, retyped (i64 <-> pointer); a pointer loaded from
//     memory is checked like any other when it is dereferenced.
//   - load: for each element, a false mask gives `other` (or 0); otherwise the address must lie
//     inside a buffer, or the run stops with "load out of bounds: address ... is N bytes past the
//     end of buffer 'x_ptr' (781 x f32) in program (3, 0, 0), element [12]".
//   - store: every unmasked address is checked first; if any is out of bounds the run stops and
//     nothing of that store is written. Two unmasked elements that write one address with
//     different values (bit for bit) are a write conflict (docs/language.md): a RuntimeError at
//     the store naming the first element writing that address and the first element (row-major)
//     that differs from it, and nothing is written. Equal values are fine. Then elements are
//     written in row-major order. Values are stored in the pointee dtype.
//   - for: lo, hi, step are read once; the body runs while (step > 0 ? iv < hi : iv > hi), then
//     iv += step (the loop ends if that would overflow i64; i32 ivs cannot overflow here since
//     iv never passes hi); step == 0 is a RuntimeError "range() step is zero". The body's
//     arguments are (iv, carried...), its yield gives the next carried values, and the for's
//     results are the carried values after the last iteration (the inits if it never ran).
//   - if: runs the taken region; its yield gives the results.
//   - while: v = inits; then repeatedly: the cond region runs on v, and if its `condition` is
//     false the loop ends, else the body runs on v and its yield gives the next v; the results
//     are the final v. Every op of both regions is charged to the work budget, so a loop that
//     never ends stops at --max-steps with the budget's error at the op it was running.
//   - shl / shr / umulhi: runtime/FloatOps.h (shifts by an amount outside [0, bits) give 0 or
//     the sign fill; shr is arithmetic; umulhi is the unsigned high half). log2, cos, sin,
//     floor, ceil, erf: log2f, cosf, sinf, floorf, ceilf, erff; fma: fmaf (one rounding; f16 and
//     bf16 rounded once more to the dtype).
//   - atomic_rmw / atomic_cas: for each element in row-major order, an unmasked one reads the
//     old value at its address (bounds checked like a load; a faulting element stops the run with the
//     elements before it applied), stores old+v / max / min / & / | /
//     ^ / v (xchg), or for cas v when old == cmp (else nothing), and gives the old value; a
//     masked-off element gives 0 and touches nothing. Programs run one at a time, so every
//     atomic is indivisible; sem and scope are only recorded. i32/i64 add wraps; f32 add is
//     rounded like `add`. debug_barrier does nothing (a program runs as one).
//   - device_print: one line per element of each operand, operand by operand, elements in
//     row-major order (a scalar: one line), in runtime/DevicePrint.h's format, to the run's
//     DeviceOutput (none: counted only). device_assert: the first element (row-major) that is 0
//     stops the run with "device assertion failed: msg (pid (x, y, z) idx (i, j))" at the op.
#include "scalar/ScalarInterpreter.h"

#include "runtime/Arguments.h"
#include "runtime/Budget.h"
#include "runtime/DevicePrint.h"
#include "runtime/FloatOps.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "ir/Builder.h"  // reducedShape (scan)
#include "ir/Verifier.h"

// dot's "every product and every sum rounded to f32" must not be contracted into an FMA.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "scalar/ScalarElements.h"  // the element rules (after the pragma: no contraction there either)

namespace tl {

namespace {

using namespace scalar;

// ---------------------------------------------------------------------------------------------
// The interpreter.

class ScalarInterpreter {
 public:
  ScalarInterpreter(const Function& fn, const LaunchConfig& launch, Memory& memory, DeviceOutput* print)
      : fn_(fn), launch_(launch), mem_(memory), print_(print) {}

  ScalarRunStats run() {
    if (fn_.level != IRLevel::Block)
      throw IRError(fn_.loc, "tl-scalar runs block IR; '" + fn_.name + "' is thread-level IR");
    std::string errors = verifyFunction(fn_);
    if (!errors.empty()) throw IRError(fn_.loc, "tl-scalar was given IR that fails verification:\n" + errors);
    std::vector<Tile> params = bindParams();
    for (int a = 0; a < 3; ++a)
      if (launch_.grid[a] < 1)
        throw std::runtime_error("grid dimension " + std::to_string(a) + " is " +
                                 std::to_string(launch_.grid[a]) + "; it must be at least 1");
    WorkMeter meter("tl-scalar", "program", launch_.grid[0] * launch_.grid[1] * launch_.grid[2], kScalarDefaultSteps,
                    "one element an op computes");
    meter_ = &meter;
    for (pid_[2] = 0; pid_[2] < launch_.grid[2]; ++pid_[2])
      for (pid_[1] = 0; pid_[1] < launch_.grid[1]; ++pid_[1])
        for (pid_[0] = 0; pid_[0] < launch_.grid[0]; ++pid_[0]) {
          meter.startUnit(stats_.programs);
          env_.clear();
          for (size_t k = 0; k < params.size(); ++k) env_[fn_.param(k)] = params[k];
          runRegion(fn_.body);
          ++stats_.programs;
        }
    return stats_;
  }

 private:
  const Function& fn_;
  const LaunchConfig& launch_;
  Memory& mem_;
  DeviceOutput* print_;
  std::array<int64_t, 3> pid_{0, 0, 0};
  WorkMeter* meter_ = nullptr;  // the run's budget (runtime/Budget.h)
  std::unordered_map<const Value*, Tile> env_;
  ScalarRunStats stats_;

  // Parameter values, the same for every program.
  std::vector<Tile> bindParams() {
    std::vector<Tile> out;
    for (const KernelArgument& a : bindArguments(fn_, launch_, mem_)) {
      const Type& t = *a.type;
      if (a.buffer) {
        out.push_back(Tile{t, {ptrScalar(t.dtype, a.buffer->base)}});
        continue;
      }
      const ScalarValue& v = a.value;
      Scalar s = isInt(v.dtype) ? intScalar(v.dtype, v.i) : floatScalar(v.dtype, v.f);
      out.push_back(Tile{t, {convertScalar(s, t.dtype)}});
    }
    return out;
  }

  // ----- values

  const Tile& get(const Op& op, size_t i) const {
    auto it = env_.find(op.operand(i));
    if (it == env_.end()) throw IRError(op.loc, std::string(mnemonic(op.kind)) + ": operand has no value");
    return it->second;
  }
  void set(const Value* v, Tile t) { env_[v] = std::move(t); }
  static Tile emptyLike(const Type& t) { return Tile{t, std::vector<Scalar>(static_cast<size_t>(t.numel()))}; }

  // ----- messages

  std::string where(const Shape& shape, int64_t e) const {
    std::string s = " in program (" + std::to_string(pid_[0]) + ", " + std::to_string(pid_[1]) + ", " +
                    std::to_string(pid_[2]) + ")";
    if (shape.empty()) return s;
    std::vector<int64_t> idx = unflatten(e, shape);
    s += ", element [";
    for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
    return s + "]";
  }


  // The buffer and element index of an access of `dtype` at `addr`, or throws RuntimeError.
  std::pair<Buffer*, int64_t> access(const Op& op, const char* what, uint64_t addr, DType dtype,
                                     const Shape& shape, int64_t e) {
    int size = dtypeBytes(dtype);
    Buffer* b = mem_.resolve(addr, static_cast<uint64_t>(size));
    if (!b) {
      const bool store = op.kind == OpKind::Store;
      const bool masked = op.numOperands() >= (store ? 3u : 2u);
      throw RuntimeError(op.loc, std::string(what) + " out of bounds: " + mem_.describeAddress(addr, static_cast<uint64_t>(size)) +
                                     where(shape, e) + outOfBoundsHint(store, masked, op.strAttrIf("unchecked")));
    }
    uint64_t off = addr - b->base;
    if (b->dtype != dtype || off % static_cast<uint64_t>(size) != 0)
      throw RuntimeError(op.loc, std::string(what) + " of " + dtypeName(dtype) + " at address " + hex(addr) +
                                     " is not aligned to an element of buffer '" + b->name + "' (" +
                                     b->describe() + ")" + where(shape, e));
    return {b, static_cast<int64_t>(off / static_cast<uint64_t>(size))};
  }

  // ----- regions

  // Runs the ops of `r` in order; returns the values its terminator yields (none for return).
  std::vector<Tile> runRegion(const Region& r) {
    for (const auto& opPtr : r.ops) {
      const Op& op = *opPtr;
      meter_->charge(elementSteps(op), op.loc);
      if (op.kind == OpKind::Yield) {
        std::vector<Tile> out;
        for (size_t i = 0; i < op.numOperands(); ++i) out.push_back(get(op, i));
        return out;
      }
      if (op.kind == OpKind::Return || op.kind == OpKind::Condition) return {};  // while reads the condition
      exec(op);
    }
    return {};
  }

  void exec(const Op& op) {
    switch (op.kind) {
      case OpKind::ProgramId: set(op.result(), Tile{op.result()->type, {intScalar(DType::I32, pid_[op.intAttr("axis")])}}); break;
      case OpKind::NumPrograms: set(op.result(), Tile{op.result()->type, {intScalar(DType::I32, launch_.grid[op.intAttr("axis")])}}); break;
      case OpKind::Constant: execConstant(op); break;
      case OpKind::Arange: execArange(op); break;
      case OpKind::Splat: execSplat(op); break;
      case OpKind::Broadcast: execBroadcast(op); break;
      case OpKind::ExpandDims: execExpandDims(op); break;
      case OpKind::Trans: execTrans(op); break;
      case OpKind::Reshape: execCopy(op); break;  // row-major order is kept: the same element vector
      case OpKind::Join: case OpKind::Split: execJoinSplit(op); break;
      case OpKind::Convert: execConvert(op); break;
      case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
      case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Sigmoid: case OpKind::Log2:
      case OpKind::Cos: case OpKind::Sin: case OpKind::Floor: case OpKind::Ceil: case OpKind::Erf:
      case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
      case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
      case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint:
        execUnary(op);
        break;
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::Maximum: case OpKind::Minimum: case OpKind::And: case OpKind::Or: case OpKind::Xor:
      case OpKind::Shl: case OpKind::Shr: case OpKind::Umulhi: case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot:
        execBinary(op);
        break;
      case OpKind::Fma: execFma(op); break;
      case OpKind::AtomicRMW: case OpKind::AtomicCAS: execAtomic(op); break;
      case OpKind::DebugBarrier: break;  // one program runs as one: nothing to wait for
      case OpKind::DevicePrint: execPrint(op); break;
      case OpKind::DeviceAssert: execAssert(op); break;
      case OpKind::While: execWhile(op); break;
      case OpKind::Cmp: execCmp(op); break;
      case OpKind::Select: execSelect(op); break;
      case OpKind::AddPtr: execAddPtr(op); break;
      case OpKind::PtrCast: execPtrCast(op); break;
      case OpKind::Load: execLoad(op); break;
      case OpKind::Store: execStore(op); break;
      case OpKind::Reduce: execReduce(op); break;
      case OpKind::Argmax: execArgmax(op); break;
      case OpKind::Scan: execScan(op); break;
      case OpKind::Dot: execDot(op); break;
      case OpKind::For: execFor(op); break;
      case OpKind::If: execIf(op); break;
      case OpKind::ConvertLayout: execCopy(op); break;  // a layout changes where, not what
      default:  // yield/return (handled by runRegion) and thread-level ops
        throw IRError(op.loc, std::string("tl-scalar: unexpected ") + mnemonic(op.kind) + " in block IR");
    }
  }

  // ----- debugging (runtime/DevicePrint.h)

  void execPrint(const Op& op) {
    const std::string& prefix = op.strAttr("prefix");
    const bool hex = op.intAttr("hex") != 0;
    if (op.numOperands() == 0) {
      if (print_) print_->line(printPid(pid_) + prefix);
      return;
    }
    for (size_t k = 0; k < op.numOperands(); ++k) {
      const Tile& t = get(op, k);
      const int operand = op.numOperands() > 1 ? static_cast<int>(k) : -1;
      for (size_t e = 0; e < t.elems.size(); ++e) {
        if (!print_) break;
        const Scalar& x = t.elems[e];
        std::string value = x.isPtr ? printPointer(uint64_t(x.i)) : isInt(x.dtype) ? printInt(x.dtype, x.i, hex)
                                                                                   : printFloat(x.dtype, x.f, hex);
        if (print_)
          print_->line(printLine(pid_, "", elementIndex(t.type.shape, int64_t(e)), t.type.shape, prefix, operand, value));
      }
      stats_.elementOps += static_cast<int64_t>(t.elems.size());
    }
  }

  void execAssert(const Op& op) {
    const Tile& c = get(op, 0);
    for (size_t e = 0; e < c.elems.size(); ++e)
      if (c.elems[e].i == 0)
        throw RuntimeError(op.loc, assertMessage(op.strAttr("msg"), pid_, "", elementIndex(c.type.shape, int64_t(e)),
                                                 c.type.shape));
    stats_.elementOps += static_cast<int64_t>(c.elems.size());
  }

  // ----- leaves and shapes

  void execConstant(const Op& op) {
    const Type& t = op.result()->type;
    const Attr* v = op.attr("value");
    Scalar s = isInt(t.dtype) ? convertScalar(intScalar(DType::I64, std::get<int64_t>(*v)), t.dtype)
                              : floatScalar(t.dtype, op.floatAttr("value"));
    Tile out = emptyLike(t);
    for (auto& e : out.elems) e = s;
    stats_.elementOps += t.numel();
    set(op.result(), std::move(out));
  }

  void execArange(const Op& op) {
    Tile out = emptyLike(op.result()->type);
    int64_t start = op.intAttr("start");
    for (size_t e = 0; e < out.elems.size(); ++e) out.elems[e] = intScalar(DType::I32, start + static_cast<int64_t>(e));
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execSplat(const Op& op) {
    const Scalar s = get(op, 0).elems[0];
    Tile out = emptyLike(op.result()->type);
    for (auto& e : out.elems) e = s;
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // out[idx] = in[idx with every size-1 input dimension read at 0]
  void execBroadcast(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e) {
      std::vector<int64_t> idx = unflatten(static_cast<int64_t>(e), out.type.shape);
      for (size_t k = 0; k < idx.size(); ++k)
        if (in.type.shape[k] == 1) idx[k] = 0;
      out.elems[e] = in.elems[static_cast<size_t>(flatten(idx, in.type.shape))];
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // A size-1 dimension is inserted: out[idx] = in[idx without the new axis].
  void execExpandDims(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    size_t axis = static_cast<size_t>(op.intAttr("axis"));
    for (size_t e = 0; e < out.elems.size(); ++e) {
      std::vector<int64_t> idx = unflatten(static_cast<int64_t>(e), out.type.shape);
      idx.erase(idx.begin() + static_cast<std::ptrdiff_t>(axis));
      out.elems[e] = in.elems[static_cast<size_t>(flatten(idx, in.type.shape))];
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // out[idx] = in[src] with src[order[j]] = idx[j] (rank 2 without `order`: out[j, i] = in[i, j]).
  void execTrans(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    const std::vector<int> order = transOrder(op);
    std::vector<int64_t> src(order.size());
    for (size_t e = 0; e < out.elems.size(); ++e) {
      std::vector<int64_t> idx = unflatten(static_cast<int64_t>(e), out.type.shape);
      for (size_t j = 0; j < order.size(); ++j) src[static_cast<size_t>(order[j])] = idx[j];
      out.elems[e] = in.elems[static_cast<size_t>(flatten(src, in.type.shape))];
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // join: out[..., k] = (a, b)[k][...]; split: out[...] = x[..., index] (the last dim is 2).
  void execJoinSplit(const Op& op) {
    Tile out = emptyLike(op.result()->type);
    const bool join = op.kind == OpKind::Join;
    for (size_t e = 0; e < out.elems.size(); ++e)
      out.elems[e] = join ? get(op, e % 2).elems[e / 2] : get(op, 0).elems[2 * e + static_cast<size_t>(op.intAttr("index"))];
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // The operand's elements unchanged (convert_layout: only the layout of the type differs).
  void execCopy(const Op& op) {
    Tile out = emptyLike(op.result()->type);
    out.elems = get(op, 0).elems;
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // ----- elementwise

  void execConvert(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e) out.elems[e] = convertScalar(in.elems[e], out.type.dtype);
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execUnary(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e) out.elems[e] = unaryScalar(op.kind, in.elems[e]);
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execBinary(const Op& op) {
    const Tile& a = get(op, 0);
    const Tile& b = get(op, 1);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e) {
      bool divByZero = false;
      out.elems[e] = binaryScalar(op.kind, a.elems[e], b.elems[e], divByZero);
      if (divByZero)
        throw RuntimeError(op.loc, "integer division by zero" + where(out.type.shape, static_cast<int64_t>(e)));
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execFma(const Op& op) {
    const Tile& a = get(op, 0);
    const Tile& b = get(op, 1);
    const Tile& c = get(op, 2);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e)
      out.elems[e] = floatScalar(out.type.dtype, floatFma(static_cast<float>(a.elems[e].f), static_cast<float>(b.elems[e].f),
                                                          static_cast<float>(c.elems[e].f)));
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execCmp(const Op& op) {
    const Tile& a = get(op, 0);
    const Tile& b = get(op, 1);
    const std::string& pred = op.strAttr("pred");
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e)
      out.elems[e] = intScalar(DType::I1, compareScalar(pred, a.elems[e], b.elems[e]));
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execSelect(const Op& op) {
    const Tile& c = get(op, 0);
    const Tile& a = get(op, 1);
    const Tile& b = get(op, 2);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e) out.elems[e] = c.elems[e].i ? a.elems[e] : b.elems[e];
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // The address is the element's 64-bit value either way; only its type changes.
  void execPtrCast(const Op& op) {
    const Tile& in = get(op, 0);
    Tile out = emptyLike(op.result()->type);
    for (size_t e = 0; e < out.elems.size(); ++e)
      out.elems[e] = out.type.isPtr ? ptrScalar(out.type.dtype, static_cast<uint64_t>(in.elems[e].i))
                                    : intScalar(DType::I64, in.elems[e].i);
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  void execAddPtr(const Op& op) {
    const Tile& p = get(op, 0);
    const Tile& off = get(op, 1);
    Tile out = emptyLike(op.result()->type);
    const uint64_t size = static_cast<uint64_t>(dtypeBytes(out.type.dtype));
    for (size_t e = 0; e < out.elems.size(); ++e) {
      uint64_t addr = static_cast<uint64_t>(p.elems[e].i) + static_cast<uint64_t>(off.elems[e].i) * size;
      out.elems[e] = ptrScalar(out.type.dtype, addr);
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // ----- memory

  void execLoad(const Op& op) {
    const Tile& p = get(op, 0);
    const Tile* mask = op.numOperands() >= 2 ? &get(op, 1) : nullptr;
    const Tile* other = op.numOperands() >= 3 ? &get(op, 2) : nullptr;
    Tile out = emptyLike(op.result()->type);
    const DType d = out.type.dtype;
    for (size_t e = 0; e < out.elems.size(); ++e) {
      if (mask && !mask->elems[e].i) {
        out.elems[e] = other ? other->elems[e] : zeroOf(d);
        continue;
      }
      auto [buf, index] = access(op, "load", static_cast<uint64_t>(p.elems[e].i), d, out.type.shape,
                                 static_cast<int64_t>(e));
      if (isFloat(d)) {
        out.elems[e] = floatScalar(d, buf->getF(index));
      } else {
        out.elems[e] = intScalar(d, buf->getI(index));
      }
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // Checks every unmasked address, then writes (so a faulting store writes nothing).
  void execStore(const Op& op) {
    const Tile& p = get(op, 0);
    const Tile& value = get(op, 1);
    const Tile* mask = op.numOperands() >= 3 ? &get(op, 2) : nullptr;
    const DType d = value.type.dtype;
    struct Write {
      Buffer* buf;
      int64_t index;
      const Scalar* value;
    };
    std::vector<Write> writes;
    std::vector<std::pair<uint64_t, int64_t>> byAddress;  // (address, element), for conflicts
    for (size_t e = 0; e < value.elems.size(); ++e) {
      if (mask && !mask->elems[e].i) continue;
      auto [buf, index] = access(op, "store", static_cast<uint64_t>(p.elems[e].i), d, value.type.shape,
                                 static_cast<int64_t>(e));
      writes.push_back(Write{buf, index, &value.elems[e]});
      byAddress.push_back({static_cast<uint64_t>(p.elems[e].i), static_cast<int64_t>(e)});
    }
    checkWriteConflicts(op, value, byAddress);
    for (const Write& w : writes) {
      if (isFloat(d)) w.buf->setF(w.index, w.value->f);
      else w.buf->setI(w.index, w.value->i);
      w.buf->markStored(static_cast<uint64_t>(w.index) * static_cast<uint64_t>(dtypeBytes(d)));
    }
    stats_.elementOps += static_cast<int64_t>(value.elems.size());
  }

  // A write conflict: two elements writing one address with different values. Addresses that
  // increase in row-major or (2-D) column-major order are distinct; otherwise, sorted by
  // address (then element), each address's first writer is compared with the others; the
  // reported pair is the one whose second element comes first in row-major order.
  void checkWriteConflicts(const Op& op, const Tile& value, std::vector<std::pair<uint64_t, int64_t>>& byAddress) {
    // Addresses that already increase (most stores) are distinct: no sort needed.
    auto notIncreasing = [](const auto& a, const auto& b) { return a.first >= b.first; };
    if (std::adjacent_find(byAddress.begin(), byAddress.end(), notIncreasing) == byAddress.end()) return;
    const Shape& tileShape = value.type.shape;
    if (tileShape.size() == 2) {  // nor do addresses that increase in column-major order (a transposed store)
      std::vector<int64_t> slot(value.elems.size(), -1);
      for (size_t k = 0; k < byAddress.size(); ++k) slot[static_cast<size_t>(byAddress[k].second)] = static_cast<int64_t>(k);
      bool increasing = true, any = false;
      uint64_t prev = 0;
      for (int64_t c = 0; c < tileShape[1] && increasing; ++c)
        for (int64_t r = 0; r < tileShape[0] && increasing; ++r) {
          const int64_t k = slot[static_cast<size_t>(r * tileShape[1] + c)];
          if (k < 0) continue;
          const uint64_t a = byAddress[static_cast<size_t>(k)].first;
          increasing = !any || a > prev;
          prev = a;
          any = true;
        }
      if (increasing) return;
    }
    std::sort(byAddress.begin(), byAddress.end());
    const bool fl = isFloat(value.type.dtype);
    auto bits = [&](int64_t e) {
      const Scalar& v = value.elems[static_cast<size_t>(e)];
      return fl ? std::bit_cast<uint64_t>(v.f) : static_cast<uint64_t>(v.i);
    };
    int64_t first = -1, second = -1;
    uint64_t at = 0;
    for (size_t g = 0; g < byAddress.size();) {
      size_t end = g + 1;
      while (end < byAddress.size() && byAddress[end].first == byAddress[g].first) ++end;
      for (size_t k = g + 1; k < end; ++k)
        if (bits(byAddress[k].second) != bits(byAddress[g].second) && (second < 0 || byAddress[k].second < second)) {
          first = byAddress[g].second;
          second = byAddress[k].second;
          at = byAddress[g].first;
          break;
        }
      g = end;
    }
    if (second < 0) return;
    const Shape& shape = value.type.shape;
    const Buffer* b = mem_.resolve(at, static_cast<uint64_t>(dtypeBytes(value.type.dtype)));
    auto show = [&](int64_t e) {
      const Scalar& v = value.elems[static_cast<size_t>(e)];
      char buf[40];
      if (fl) std::snprintf(buf, sizeof buf, "%.9g", v.f);
      else std::snprintf(buf, sizeof buf, "%" PRId64, v.i);
      return std::string(buf);
    };
    std::string msg = "write conflict: elements " + formatIndex(shape, first) + " and " + formatIndex(shape, second) +
                      " of this store both write address " + hex(at) + " (" + b->name +
                      formatIndex(b->shape, static_cast<int64_t>((at - b->base) / uint64_t(dtypeBytes(b->dtype)))) +
                      ") with different values (" + show(first) + " and " + show(second) +
                      "); which one lands is undefined (on a GPU, whichever lane wins)";
    throw RuntimeError(op.loc, msg + where({}, 0));
  }

  // One atomic element: old = *addr, then *addr = op(old, ...) (atomicCombine).
  // Programs run one at a time and elements in row-major order, so each is trivially
  // indivisible; sem and scope change nothing here.
  void execAtomic(const Op& op) {
    const bool cas = op.kind == OpKind::AtomicCAS;
    const size_t values = cas ? 2 : 1;
    const Tile& p = get(op, 0);
    const Tile& val = get(op, values);
    const Tile* cmp = cas ? &get(op, 1) : nullptr;
    const Tile* mask = op.numOperands() > values + 1 ? &get(op, values + 1) : nullptr;
    const std::string kind = cas ? "cas" : op.strAttr("kind");
    Tile out = emptyLike(op.result()->type);
    const DType d = out.type.dtype;
    for (size_t e = 0; e < out.elems.size(); ++e) {
      if (mask && !mask->elems[e].i) {
        out.elems[e] = zeroOf(d);
        continue;
      }
      auto [buf, index] = access(op, "atomic", static_cast<uint64_t>(p.elems[e].i), d, out.type.shape,
                                 static_cast<int64_t>(e));
      const Scalar old = isFloat(d) ? floatScalar(d, buf->getF(index)) : intScalar(d, buf->getI(index));
      out.elems[e] = old;
      Scalar next;
      if (cas) {
        if (old.i != cmp->elems[e].i) continue;  // no write: the element stays as it was
        next = val.elems[e];
      } else if (kind == "xchg") {
        next = val.elems[e];
      } else if (isFloat(d)) {  // add (the only float kind besides xchg)
        next = floatScalar(d, static_cast<float>(old.f) + static_cast<float>(val.elems[e].f));
      } else {
        const int64_t a = old.i, b = val.elems[e].i;
        const int64_t r = kind == "add" ? static_cast<int64_t>(uint64_t(a) + uint64_t(b))
                          : kind == "max" ? std::max(a, b)
                          : kind == "min" ? std::min(a, b)
                          : kind == "and" ? (a & b)
                          : kind == "or"  ? (a | b)
                                          : (a ^ b);
        next = intScalar(d, r);
      }
      if (isFloat(d)) buf->setF(index, next.f);
      else buf->setI(index, next.i);
      buf->markStored(static_cast<uint64_t>(index) * static_cast<uint64_t>(dtypeBytes(d)));
    }
    stats_.elementOps += static_cast<int64_t>(out.elems.size());
    set(op.result(), std::move(out));
  }

  // ----- reductions

  // Calls fn(outputIndex, inputIndices) for each output element of a reduction along `axis`;
  // inputIndices lists the reduced elements in increasing index along the axis.
  template <typename Fn>
  void forEachReduction(const Shape& in, int axis, const Shape& outShape, Fn fn) {
    Type outType;
    outType.shape = outShape;
    int64_t outN = outType.numel();
    std::vector<int64_t> members(static_cast<size_t>(in[static_cast<size_t>(axis)]));
    for (int64_t o = 0; o < outN; ++o) {
      std::vector<int64_t> idx = unflatten(o, outShape);
      idx.insert(idx.begin() + axis, 0);
      for (int64_t k = 0; k < in[static_cast<size_t>(axis)]; ++k) {
        idx[static_cast<size_t>(axis)] = k;
        members[static_cast<size_t>(k)] = flatten(idx, in);
      }
      fn(o, members);
    }
  }

  void execReduce(const Op& op) {
    const Tile& in = get(op, 0);
    const std::string& kind = op.strAttr("kind");
    const int axis = static_cast<int>(op.intAttr("axis"));
    Tile out = emptyLike(op.result()->type);
    const DType d = in.type.dtype;
    forEachReduction(in.type.shape, axis, out.type.shape, [&](int64_t o, const std::vector<int64_t>& members) {
      Scalar acc = in.elems[static_cast<size_t>(members[0])];
      if (kind == "sum" && isFloat(d)) {
        // Floats accumulate in f32 (f16/bf16 round once at the end).
        float sum = static_cast<float>(acc.f);
        for (size_t k = 1; k < members.size(); ++k) sum = sum + static_cast<float>(in.elems[static_cast<size_t>(members[k])].f);
        acc = floatScalar(d, sum);
      } else {
        OpKind step = kind == "sum" ? OpKind::Add : kind == "max" ? OpKind::Maximum : OpKind::Minimum;
        bool unusedDivByZero = false;
        for (size_t k = 1; k < members.size(); ++k)
          acc = binaryScalar(step, acc, in.elems[static_cast<size_t>(members[k])], unusedDivByZero);
      }
      out.elems[static_cast<size_t>(o)] = acc;
    });
    stats_.elementOps += in.type.numel();
    set(op.result(), std::move(out));
  }

  void execArgmax(const Op& op) {
    const Tile& in = get(op, 0);
    const int axis = static_cast<int>(op.intAttr("axis"));
    Tile out = emptyLike(op.result()->type);
    const bool fl = isFloat(in.type.dtype);
    forEachReduction(in.type.shape, axis, out.type.shape, [&](int64_t o, const std::vector<int64_t>& members) {
      size_t best = 0;
      for (size_t k = 1; k < members.size(); ++k) {
        const Scalar& cur = in.elems[static_cast<size_t>(members[best])];
        const Scalar& x = in.elems[static_cast<size_t>(members[k])];
        if (fl) {
          if (std::isnan(cur.f)) break;  // the first NaN is the maximum
          if (std::isnan(x.f) || x.f > cur.f) best = k;
        } else if (x.i > cur.i) {
          best = k;
        }
      }
      out.elems[static_cast<size_t>(o)] = intScalar(DType::I32, static_cast<int64_t>(best));
    });
    stats_.elementOps += in.type.numel();
    set(op.result(), std::move(out));
  }

  void execScan(const Op& op) {
    const Tile& in = get(op, 0);
    const std::string& kind = op.strAttr("kind");
    const int axis = static_cast<int>(op.intAttr("axis"));
    const bool reverse = op.intAttr("reverse") != 0;
    const OpKind step = kind == "sum" ? OpKind::Add : kind == "prod" ? OpKind::Mul : kind == "max" ? OpKind::Maximum : OpKind::Minimum;
    Tile out = emptyLike(op.result()->type);
    forEachReduction(in.type.shape, axis, reducedShape(in.type.shape, axis), [&](int64_t, const std::vector<int64_t>& members) {
      const size_t n = members.size();
      bool unusedDivByZero = false;
      for (size_t j = 0; j < n; ++j) {
        const size_t k = reverse ? n - 1 - j : j;
        const size_t e = static_cast<size_t>(members[k]);
        out.elems[e] = j == 0 ? in.elems[e]
                              : binaryScalar(step, out.elems[static_cast<size_t>(members[reverse ? k + 1 : k - 1])], in.elems[e],
                                             unusedDivByZero);
      }
    });
    stats_.elementOps += in.type.numel();
    set(op.result(), std::move(out));
  }

  void execDot(const Op& op) {
    const Tile& a = get(op, 0);
    const Tile& b = get(op, 1);
    const Tile& acc = get(op, 2);
    const int r = a.type.rank();
    const int64_t B = r == 3 ? a.type.shape[0] : 1, M = a.type.shape[r - 2], K = a.type.shape[r - 1], N = b.type.shape[r - 1];
    Tile out = emptyLike(op.result()->type);
    const std::string* precision = op.strAttrIf("precision");
    const bool tf32 = precision && *precision == "tf32";
    auto in = [&](double v) { return tf32 ? truncToTf32(static_cast<float>(v)) : static_cast<float>(v); };
    for (int64_t bi = 0; bi < B; ++bi)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const size_t at = static_cast<size_t>((bi * M + m) * N + n);
          float s = static_cast<float>(acc.elems[at].f);
          for (int64_t k = 0; k < K; ++k) {
            float x = in(a.elems[static_cast<size_t>((bi * M + m) * K + k)].f);
            float y = in(b.elems[static_cast<size_t>((bi * K + k) * N + n)].f);
            float prod = x * y;
            s = s + prod;
          }
          out.elems[at] = floatScalar(op.result()->type.dtype, s);  // an f16 accumulator: rounded once per dot
        }
    stats_.elementOps += B * M * N * K;
    set(op.result(), std::move(out));
  }

  // ----- structure

  void execFor(const Op& op) {
    const DType ivType = op.operand(0)->type.dtype;
    const int64_t lo = get(op, 0).elems[0].i, hi = get(op, 1).elems[0].i, step = get(op, 2).elems[0].i;
    if (step == 0) throw RuntimeError(op.loc, "range() step is zero" + where({}, 0));
    std::vector<Tile> carried;
    for (size_t k = 3; k < op.numOperands(); ++k) carried.push_back(get(op, k));
    const Region& body = op.region(0);
    for (int64_t iv = lo; step > 0 ? iv < hi : iv > hi;) {
      set(body.arg(0), Tile{body.arg(0)->type, {intScalar(ivType, iv)}});
      for (size_t k = 0; k < carried.size(); ++k) set(body.arg(k + 1), carried[k]);
      carried = runRegion(body);
      if (__builtin_add_overflow(iv, step, &iv)) break;
    }
    for (size_t k = 0; k < op.numResults(); ++k) set(op.result(k), std::move(carried[k]));
  }

  // v = inits; loop { if !cond(v) break; v = body(v) }. Every region op is charged to the
  // budget (runRegion), so a loop that never ends stops with the budget's located error.
  void execWhile(const Op& op) {
    std::vector<Tile> carried;
    for (size_t k = 0; k < op.numOperands(); ++k) carried.push_back(get(op, k));
    const Region &cond = op.region(0), &body = op.region(1);
    for (;;) {
      for (size_t k = 0; k < carried.size(); ++k) set(cond.arg(k), carried[k]);
      runRegion(cond);
      const Op& term = *cond.terminator();
      if (get(term, 0).elems[0].i == 0) break;
      for (size_t k = 0; k < carried.size(); ++k) set(body.arg(k), std::move(carried[k]));
      carried = runRegion(body);
    }
    for (size_t k = 0; k < op.numResults(); ++k) set(op.result(k), std::move(carried[k]));
  }

  void execIf(const Op& op) {
    const bool cond = get(op, 0).elems[0].i != 0;
    std::vector<Tile> results = runRegion(op.region(cond ? 0 : 1));
    for (size_t k = 0; k < op.numResults(); ++k) set(op.result(k), std::move(results[k]));
  }
};

}  // namespace

ScalarRunStats runScalar(const Function& fn, const LaunchConfig& launch, Memory& memory, DeviceOutput* print) {
  return ScalarInterpreter(fn, launch, memory, print).run();
}

Engine scalarEngine() {
  return {"tl-scalar", [](const Function& fn, const LaunchConfig& launch, Memory& memory) { runScalar(fn, launch, memory); }};
}

}  // namespace tl
