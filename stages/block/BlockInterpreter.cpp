// tl-block's engine: runs block IR a whole tile at a time (contract in BlockInterpreter.h).
//
// How it runs. Before the grid starts, the function is "planned": every SSA value (kernel
// parameter, region argument, op result) gets a slot number, and every op becomes a Step that
// holds its operand/result slots and its decoded attributes (axis, predicate, constant...). The
// slots are a flat std::vector<Tile> whose tiles are sized once, from the values' static types,
// and then reused by every program and every loop iteration: running an op is a switch on its
// kind, one dispatch on the storage type (block/Tile.h), and one tight loop over the whole tile
// (block/TileKernels.cpp). No per-element dispatch, map lookup or allocation.
//
// Element semantics (the same as tl-scalar's, which is the reference):
//   - i32/i64 arithmetic wraps (two's complement); neg/abs of MIN give MIN.
//   - int div/rem are C's: truncate toward zero, the remainder has the dividend's sign;
//     MIN / -1 = MIN and MIN % -1 = 0; a zero divisor stops the run with a RuntimeError at the
//     op ("integer division by zero in program (x, y, z), element [i]").
//   - f32 ops are computed in float: + - * / exactly rounded, rem = fmodf, exp = expf,
//     exp2 = exp2f, log = logf, sqrt = sqrtf, rsqrt = 1.0f / sqrtf(x),
//     sigmoid = 1.0f / (1.0f + expf(-x)).
//   - f16/bf16 ops are computed in float and the result is rounded to the dtype (round to
//     nearest even, runtime/Memory.h's helpers) after every op.
//   - maximum/minimum on floats: NaN if either operand is NaN (a's if both); +0 vs -0 gives +0
//     for maximum and -0 for minimum; otherwise the larger/smaller.
//   - cmp is C's: every comparison with NaN is false except ne.
//   - convert: float -> i32/i64 truncates toward zero, saturating, NaN -> 0; anything -> i1 is
//     `x != 0` (NaN -> 1); int -> float rounds to f32 (nearest even), then to f16/bf16 when
//     that is the target; int -> int wraps (sign-extends when widening); float -> float rounds
//     to the destination dtype.
//   - constants: float values are rounded from the attribute's double with roundToDType
//     (through f32); int values wrap to the dtype; i1 constants are value != 0.
//   - reduce: sum of ints wraps (exact in any order). Float sums accumulate in f32; along a
//     contiguous row (rank 1, or axis 1) of 32 or more elements they use a DIFFERENT ORDER than
//     the sequential reference: 16 interleaved partial sums combined pairwise (vectorizes, and
//     usually rounds less), so they match the reference only within rounding. Shorter rows and
//     2-D sums along axis 0 add in the reference's order (x0 + x1 + ...) and match it exactly.
//     f16/bf16 sums are accumulated in f32 and rounded once at the end. max/min use the
//     maximum/minimum rules (NaN propagates); their result does not depend on the order.
//   - argmax: the first index of the maximum; a NaN counts as the maximum (the first NaN wins).
//   - scan: the reference's sequential order along the axis (from index 0, or from the end with
//     reverse), each step rounded to the dtype, so it matches tl-scalar bit for bit.
//   - dot: out[i][j] = acc[i][j] + a[i][0]*b[0][j] + a[i][1]*b[1][j] + ..., in f32, added in k
//     order, every product and sum rounded (no FMA: built with -ffp-contract=off), so it
//     matches the reference exactly (the loops run i-k-j so the innermost one vectorizes).
//   - pointers are byte addresses: addptr adds offset * dtypeBytes(pointee), wrapping.
//   - load/store: masked-off elements are not accessed (a load gives `other`, or 0); every
//     unmasked element must lie wholly inside one buffer, else a RuntimeError at the op:
//       "load out of bounds: address 0x10000c34 is 0 bytes past the end of buffer 'x_ptr'
//        (781 x f32) in program (3, 0, 0), element [12]"
//     (2-D tiles say "element [i, j]"; a scalar pointer names no element), and be an aligned
//     element of a buffer of the pointee dtype (else "... is not aligned to an element of
//     buffer ..."). The first failing element in row-major order is reported, and a failing
//     store writes nothing. Fast path: one branch-free pass checks that every unmasked address
//     lies in the buffer holding the first one; then the copy loop has no per-element checks.
//   - write conflicts: two unmasked elements of one store that write one address with different
//     values (bit for bit) are a RuntimeError at the store, tl-scalar's message and pair (each
//     address's first writer and the first element, row-major, that differs from it); nothing
//     is written. Equal values are fine. Cheap first: addresses (masked-off ones included)
//     that strictly increase in row-major order, or a 2-D tile that is affine with one-to-one
//     strides (a transposed store), are distinct; only other stores sort their (address,
//     element) pairs.
//   - for: iterates iv = lo, lo + step, ... while (step > 0 ? iv < hi : iv > hi); step == 0 is
//     a RuntimeError "range() step is zero"; iv never overflows (the loop ends instead).
//   - while: v = inits; the cond region runs on v, its `condition` false ends the loop, else
//     the body runs on v and yields the next v; the results are the final v. Every op is
//     charged to the budget, so an endless loop stops with the budget's error.
//   - shl/shr/umulhi, log2/cos/sin/floor/ceil/erf, fma: tl-scalar's definitions (libm's float
//     functions, fmaf; shift amounts outside [0, bits) give 0 or the sign fill).
//   - atomic_rmw/atomic_cas: element by element in row-major order, tl-scalar's rules
//     (masked-off elements give 0; bounds checked like a load, reported as "atomic ...").
//   - if: runs the taken region only. program_id/num_programs come from the grid (x fastest).
//   - device_print / device_assert: tl-scalar's lines, order and first failing element.
//   - parameters: pointers are the base address of the buffer named as the parameter; runtime
//     scalars come from LaunchConfig::scalars, converted to the parameter's dtype as above.
#include "block/BlockInterpreter.h"

#include "runtime/Arguments.h"
#include "runtime/Budget.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "block/Tile.h"
#include "block/TileKernels.h"
#include "ir/Verifier.h"

namespace tl {

namespace {

using block::Pred;
using block::ReduceKind;
using block::Storage;
using block::Tag;
using block::Tile;

// ---------------------------------------------------------------------------------------------
// The plan: the function's regions with values numbered and attributes decoded.

struct Step;

// One region: the slots of its arguments and its ops in order (the last one a terminator).
struct Block {
  std::vector<int> args;
  std::vector<Step> steps;
};

// One op, ready to run.
struct Step {
  const Op* op = nullptr;
  std::vector<int> in;         // operand slots
  std::vector<int> out;        // result slots
  int64_t axis = 0;            // program_id, num_programs, reduce, argmax
  int64_t intValue = 0;        // integer constant; arange start
  double floatValue = 0;       // float constant
  Pred pred = Pred::Eq;        // cmp
  ReduceKind reduceKind = ReduceKind::Sum;  // reduce
  block::ScanKind scanKind = block::ScanKind::Sum;  // scan (reverse in intValue)
  int64_t steps = 1;           // what the op costs of the run's budget (runtime/Budget.h)
  std::vector<Block> regions;  // for: body; if: then, else
  // yield: operand k is defined directly in the yielding region and not yielded twice, so its
  // tile may be moved (swapped) into the destination instead of copied.
  std::vector<uint8_t> movable;
  std::vector<int> order;      // trans: result dim j is operand dim order[j]
};

Pred parsePred(const std::string& p) {
  if (p == "lt") return Pred::Lt;
  if (p == "le") return Pred::Le;
  if (p == "gt") return Pred::Gt;
  if (p == "ge") return Pred::Ge;
  if (p == "eq") return Pred::Eq;
  return Pred::Ne;
}

ReduceKind parseReduceKind(const std::string& k) {
  if (k == "max") return ReduceKind::Max;
  if (k == "min") return ReduceKind::Min;
  return ReduceKind::Sum;
}

class Planner {
 public:
  std::vector<const Value*> values;  // slot -> value

  Block plan(const Region& region) {
    Block b;
    for (const auto& a : region.args) b.args.push_back(define(a.get()));
    for (const auto& opPtr : region.ops) {
      const Op& op = *opPtr;
      Step s;
      s.op = &op;
      for (const Value* v : op.operands) s.in.push_back(use(op, v));
      for (const auto& r : op.regions) s.regions.push_back(plan(*r));
      for (const auto& r : op.results) s.out.push_back(define(r.get()));
      decodeAttrs(op, region, s);
      s.steps = elementSteps(op);
      b.steps.push_back(std::move(s));
    }
    return b;
  }

 private:
  std::unordered_map<const Value*, int> slotOf_;

  int define(const Value* v) {
    int slot = static_cast<int>(values.size());
    slotOf_[v] = slot;
    values.push_back(v);
    return slot;
  }

  int use(const Op& op, const Value* v) {
    auto it = slotOf_.find(v);
    if (it == slotOf_.end())
      throw IRError(op.loc, std::string(mnemonic(op.kind)) + ": operand is not defined before use");
    return it->second;
  }

  static void decodeAttrs(const Op& op, const Region& region, Step& s) {
    switch (op.kind) {
      case OpKind::ProgramId:
      case OpKind::NumPrograms:
      case OpKind::Argmax: s.axis = op.intAttr("axis"); break;
      case OpKind::Reduce:
        s.axis = op.intAttr("axis");
        s.reduceKind = parseReduceKind(op.strAttr("kind"));
        break;
      case OpKind::Scan: {
        const std::string& k = op.strAttr("kind");
        s.axis = op.intAttr("axis");
        s.intValue = op.intAttr("reverse");
        s.scanKind = k == "prod" ? block::ScanKind::Prod : k == "max" ? block::ScanKind::Max
                     : k == "min" ? block::ScanKind::Min : block::ScanKind::Sum;
        break;
      }
      case OpKind::Constant:
        if (isFloat(op.result()->type.dtype)) s.floatValue = op.floatAttr("value");
        else s.intValue = op.intAttr("value");
        break;
      case OpKind::Arange: s.intValue = op.intAttr("start"); break;
      case OpKind::Split: s.intValue = op.intAttr("index"); break;
      case OpKind::Dot: {  // intValue: 1 for precision "tf32"
        const std::string* p = op.strAttrIf("precision");
        s.intValue = p && *p == "tf32";
        break;
      }
      case OpKind::Trans: s.order = transOrder(op); break;
      case OpKind::Cmp: s.pred = parsePred(op.strAttr("pred")); break;
      case OpKind::Yield:
        for (size_t k = 0; k < op.numOperands(); ++k) {
          const Value* v = op.operand(k);
          bool first = true;
          for (size_t j = 0; j < k; ++j) first = first && op.operand(j) != v;
          s.movable.push_back(v->def && v->def->parent == &region && first);
        }
        break;
      default: break;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Memory element access, one template per dtype so the load/store loops have no dtype switch.

template <DType D>
using StorageOf = std::conditional_t<
    D == DType::I1, uint8_t,
    std::conditional_t<D == DType::I32, int32_t, std::conditional_t<D == DType::I64, int64_t, float>>>;

template <DType D>
StorageOf<D> readElem(const uint8_t* p) {
  if constexpr (D == DType::F32 || D == DType::I32 || D == DType::I64) {
    StorageOf<D> v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else if constexpr (D == DType::F16 || D == DType::BF16) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return D == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  } else if constexpr (D == DType::F8E4M3 || D == DType::F8E5M2) {
    return fp8ToFloat(D, *p);
  } else {
    return uint8_t(*p != 0);
  }
}

template <DType D>
void writeElem(uint8_t* p, StorageOf<D> v) {
  if constexpr (D == DType::F32 || D == DType::I32 || D == DType::I64) {
    std::memcpy(p, &v, sizeof v);
  } else if constexpr (D == DType::F16 || D == DType::BF16) {
    uint16_t h = D == DType::F16 ? floatToHalf(v) : floatToBf16(v);
    std::memcpy(p, &h, sizeof h);
  } else if constexpr (D == DType::F8E4M3 || D == DType::F8E5M2) {
    *p = floatToFp8(D, v);
  } else {
    *p = v ? 1 : 0;
  }
}

// Calls f(std::integral_constant<DType, d>{}): the dtype as a compile-time constant.
template <class F>
void withDType(DType d, F&& f) {
  switch (d) {
    case DType::I1: f(std::integral_constant<DType, DType::I1>{}); break;
    case DType::I32: f(std::integral_constant<DType, DType::I32>{}); break;
    case DType::I64: f(std::integral_constant<DType, DType::I64>{}); break;
    case DType::F16: f(std::integral_constant<DType, DType::F16>{}); break;
    case DType::BF16: f(std::integral_constant<DType, DType::BF16>{}); break;
    case DType::F32: f(std::integral_constant<DType, DType::F32>{}); break;
    case DType::F8E4M3: f(std::integral_constant<DType, DType::F8E4M3>{}); break;
    case DType::F8E5M2: f(std::integral_constant<DType, DType::F8E5M2>{}); break;
  }
}

// The fast path of load/store. A tile's unmasked addresses usually all fall in one buffer; then
// one cheap pass proves it (no branches, so it runs at memory speed) and the copy loop needs no
// per-element checks. Otherwise every element is checked on its own, in order (slow path).
struct FastBuffer {
  uint8_t* bytes = nullptr;  // the buffer's storage; null: take the slow path
  uint64_t base = 0;         // its address
  Buffer* buffer = nullptr;  // the buffer itself (stores mark what they wrote)
};

// Index of the first unmasked element, or n when every element is masked off.
int64_t firstActive(const uint8_t* mask, int64_t n) {
  if (!mask) return 0;
  int64_t i = 0;
  while (i < n && !mask[i]) ++i;
  return i;
}

// Whether every unmasked address is an aligned `size`-byte element inside [base, base + bytes).
bool allInside(const uint64_t* __restrict addr, const uint8_t* __restrict mask, int64_t n, uint64_t base,
               uint64_t bytes, uint64_t size) {
  const uint64_t limit = bytes - size;  // largest valid offset (bytes >= size: checked by the caller)
  const uint64_t misaligned = size - 1;
  uint64_t bad = 0;
  if (mask) {
    for (int64_t i = 0; i < n; ++i)
      bad |= (uint64_t(addr[i] - base > limit) | (addr[i] & misaligned)) & uint64_t(mask[i] != 0);
  } else {
    for (int64_t i = 0; i < n; ++i) bad |= uint64_t(addr[i] - base > limit) | (addr[i] & misaligned);
  }
  return bad == 0;
}

// Whether addr[0..n) strictly increases (so its addresses are distinct): every step is in
// [1, 2^40] (addr[k] - addr[k - 1] - 1 < 2^40, with no compare: the loop vectorizes) and the
// last address is above the first (n <= 2^20 steps below 2^40 cannot wrap twice). Passes of 256
// elements, stopping at the first one that fails.
bool increasing(const uint64_t* __restrict addr, int64_t n) {
  for (int64_t start = 1; start < n; start += 256) {
    const int64_t end = std::min(n, start + 256);
    uint64_t bad = 0;
    for (int64_t k = start; k < end; ++k) bad |= addr[k] - addr[k - 1] - 1;
    if (bad >> 40) return false;
  }
  return addr[n - 1] > addr[0];
}

// Whether a rows x cols pointer tile is affine, addr[r][c] = addr[0][0] + r * sr + c * sc, with
// strides that make it one-to-one: one stride's whole span is shorter than the other stride
// (|sc| * (cols - 1) < |sr|, or the reverse), both non-zero. A transposed store is such a tile.
bool affineDistinct(const uint64_t* __restrict addr, int64_t rows, int64_t cols) {
  const uint64_t a00 = addr[0];
  const int64_t sr = static_cast<int64_t>(addr[cols] - a00), sc = static_cast<int64_t>(addr[1] - a00);
  constexpr int64_t kMaxStride = int64_t(1) << 40;  // keeps the spans below from overflowing
  if (sr == 0 || sc == 0 || sr <= -kMaxStride || sr >= kMaxStride || sc <= -kMaxStride || sc >= kMaxStride) return false;
  const int64_t ar = sr < 0 ? -sr : sr, ac = sc < 0 ? -sc : sc;
  if (!(ac * (cols - 1) < ar || ar * (rows - 1) < ac)) return false;
  uint64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t* row = addr + r * cols;
    const uint64_t shift = row[0] - a00;
    for (int64_t c = 0; c < cols; ++c) bad |= row[c] ^ (addr[c] + shift);
  }
  return bad == 0;
}

// Whether the unmasked addresses strictly increase in row-major order (one branch-free pass).
bool increasingUnmasked(const uint64_t* __restrict addr, const uint8_t* __restrict mask, int64_t n) {
  uint64_t bad = 0, prev = 0, any = 0;
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t on = mask[k] != 0;
    bad |= on & any & uint64_t(addr[k] <= prev);
    prev = on ? addr[k] : prev;
    any |= on;
  }
  return bad == 0;
}

// Whether every row of a 2-D tile (cols >= 2) increases, masked-off elements included, and each
// row's last unmasked address is below the next such row's first: rows whose masked-off tails
// overlap the next row (a row stride below the tile's width), as in softmax_rows.tl.
bool rowsIncreasing(const uint64_t* addr, const uint8_t* mask, int64_t rows, int64_t cols) {
  uint64_t prevLast = 0;
  bool any = false;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t* a = addr + r * cols;
    const uint8_t* m = mask + r * cols;
    if (!increasing(a, cols)) return false;
    int64_t first = 0, last = cols - 1;
    while (first < cols && !m[first]) ++first;
    if (first == cols) continue;
    while (!m[last]) --last;
    if (any && a[first] <= prevLast) return false;
    prevLast = a[last];
    any = true;
  }
  return true;
}

// Cheap proof that a store's unmasked addresses are distinct. With masked-off elements
// included: they increase in row-major order (contiguous or strided rows, masked-off tails that
// continue the pattern), or a 2-D tile is affine and one-to-one (a transposed store). Else the
// unmasked ones alone increase (rows whose masked-off tails overlap the next row; per row for a
// 2-D tile). False only means "not proved": the exact check decides.
[[gnu::noinline]] bool provablyDistinct(const Tile& p, const uint8_t* mask) {
  if (p.n <= 1) return true;
  const uint64_t* addr = p.ptr.data();
  if (increasing(addr, p.n)) return true;
  if (p.rank == 2 && p.rows > 1 && p.cols > 1 && affineDistinct(addr, p.rows, p.cols)) return true;
  if (!mask) return false;
  if (p.rank == 2 && p.cols > 1) return rowsIncreasing(addr, mask, p.rows, p.cols);
  return increasingUnmasked(addr, mask, p.n);
}

// ---------------------------------------------------------------------------------------------
// The engine: runs the plan over the grid.

class Engine {
 public:
  Engine(const Function& fn, const LaunchConfig& launch, Memory& memory, DeviceOutput* print)
      : fn_(fn), launch_(launch), memory_(memory), print_(print) {}

  BlockRunStats run() {
    Planner planner;
    Block body = planner.plan(fn_.body);
    slots_.resize(planner.values.size());
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i].reshape(planner.values[i]->type);
    bindParams(body);

    const auto& g = launch_.grid;
    if (g[0] <= 0 || g[1] <= 0 || g[2] <= 0)
      throw RuntimeError(fn_.loc, "grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) +
                                      ", " + std::to_string(g[2]) + ") must be positive");
    WorkMeter meter("tl-block", "program", g[0] * g[1] * g[2], kBlockDefaultSteps, "one element an op computes");
    meter_ = &meter;
    for (pid_[2] = 0; pid_[2] < g[2]; ++pid_[2])
      for (pid_[1] = 0; pid_[1] < g[1]; ++pid_[1])
        for (pid_[0] = 0; pid_[0] < g[0]; ++pid_[0]) {
          meter.startUnit(stats_.programs);
          runBlock(body);
          ++stats_.programs;
        }
    return stats_;
  }

 private:
  const Function& fn_;
  const LaunchConfig& launch_;
  Memory& memory_;
  DeviceOutput* print_;
  std::vector<Tile> slots_;
  std::vector<std::pair<uint64_t, int64_t>> storeOrder_;  // (address, element) pairs of the exact conflict check
  std::vector<Tile> scratch_;  // yield copies, reused
  std::array<int64_t, 3> pid_{0, 0, 0};
  BlockRunStats stats_;
  WorkMeter* meter_ = nullptr;  // the run's budget (runtime/Budget.h)

  // --- parameters ------------------------------------------------------------------------
  void bindParams(const Block& body) {
    std::vector<KernelArgument> args = bindArguments(fn_, launch_, memory_);
    for (size_t i = 0; i < args.size(); ++i) {
      Tile& t = slots_[body.args[i]];
      if (args[i].buffer) {
        t.ptr[0] = args[i].buffer->base;
        continue;
      }
      // Boxed as a scalar of the launch value's own dtype, then converted like `convert`.
      const ScalarValue& sv = args[i].value;
      Tile src;
      src.reshape(Type::scalar(sv.dtype));
      if (isFloat(sv.dtype)) block::fillFloat(src, sv.f);
      else block::fillInt(src, sv.i);
      block::convert(src, t);
    }
  }

  // --- error messages --------------------------------------------------------------------
  // " in program (x, y, z), element [i, j]" (no element for scalars).
  std::string where(const Tile& shapeOf, int64_t i) const {
    std::string s = " in program (" + std::to_string(pid_[0]) + ", " + std::to_string(pid_[1]) + ", " +
                    std::to_string(pid_[2]) + ")";
    if (shapeOf.rank == 1) s += ", element [" + std::to_string(i) + "]";
    if (shapeOf.rank == 2)
      s += ", element [" + std::to_string(i / shapeOf.cols) + ", " + std::to_string(i % shapeOf.cols) + "]";
    if (shapeOf.rank == 3)
      s += ", element [" + std::to_string(i / shapeOf.cols / shapeOf.dims[1]) + ", " + std::to_string(i / shapeOf.cols % shapeOf.dims[1]) +
           ", " + std::to_string(i % shapeOf.cols) + "]";
    return s;
  }


  // Checks element i's access of `size`-byte elements of `dtype` (the slow path; the
  // reference's checks, in its order) and returns its buffer, or throws the RuntimeError.
  Buffer* checkedAccess(const char* what, const Op& op, const Tile& ptrs, int64_t i, uint64_t size) {
    const uint64_t addr = ptrs.ptr[i];
    Buffer* b = memory_.resolve(addr, size);
    if (!b) {
      const bool store = op.kind == OpKind::Store;
      const bool masked = op.numOperands() >= (store ? 3u : 2u);
      throw RuntimeError(op.loc, std::string(what) + " out of bounds: " + memory_.describeAddress(addr, size) +
                                     where(ptrs, i) + outOfBoundsHint(store, masked, op.strAttrIf("unchecked")));
    }
    if (b->dtype != ptrs.dtype || (addr - b->base) % size != 0) {
      std::ostringstream os;
      os << what << " of " << dtypeName(ptrs.dtype) << " at address 0x" << std::hex << addr << std::dec
         << " is not aligned to an element of buffer '" << b->name << "' (" << b->describe() << ")"
         << where(ptrs, i);
      throw RuntimeError(op.loc, os.str());
    }
    return b;
  }

  // --- running regions -------------------------------------------------------------------
  // Runs a block's ops up to its terminator and returns that terminator's step.
  const Step* runBlock(const Block& b) {
    for (const Step& s : b.steps) {
      meter_->charge(s.steps, s.op->loc);
      if (s.op->kind == OpKind::Yield || s.op->kind == OpKind::Return || s.op->kind == OpKind::Condition) return &s;
      exec(s);
      ++stats_.tileOps;
    }
    return nullptr;
  }

  // Hands yield `y`'s values to the slots `dst` (moving what may be moved, copying the rest;
  // all copies are taken before any destination changes, so yield(b, a) swaps correctly).
  void transfer(const Step& y, const std::vector<int>& dst, size_t dstFirst) {
    const size_t n = y.in.size();
    if (scratch_.size() < n) scratch_.resize(n);
    for (size_t k = 0; k < n; ++k)
      if (!y.movable[k]) scratch_[k] = slots_[y.in[k]];
    for (size_t k = 0; k < n; ++k) {
      Tile& from = y.movable[k] ? slots_[y.in[k]] : scratch_[k];
      std::swap(slots_[dst[dstFirst + k]], from);
    }
  }

  void execFor(const Step& s) {
    const Op& op = *s.op;
    const Tile& loT = slots_[s.in[0]];
    const bool is64 = loT.storage == Storage::I64;
    const int64_t lo = loT.scalarInt(), hi = slots_[s.in[1]].scalarInt(), step = slots_[s.in[2]].scalarInt();
    if (step == 0) throw RuntimeError(op.loc, "range() step is zero" + where(loT, 0));
    const Block& body = s.regions.at(0);
    for (size_t k = 0; k < s.out.size(); ++k) slots_[body.args[k + 1]] = slots_[s.in[3 + k]];
    Tile& ivTile = slots_[body.args[0]];
    int64_t iv = lo;
    while (step > 0 ? iv < hi : iv > hi) {
      if (is64) ivTile.i64[0] = iv;
      else ivTile.i32[0] = static_cast<int32_t>(iv);
      const Step* y = runBlock(body);
      if (y) transfer(*y, body.args, 1);
      // i32 bounds fit in int64, so iv + step cannot overflow there; for i64 an overflow
      // means iv has passed hi, so the loop is over.
      if (__builtin_add_overflow(iv, step, &iv)) break;
    }
    for (size_t k = 0; k < s.out.size(); ++k) std::swap(slots_[s.out[k]], slots_[body.args[k + 1]]);
  }

  // v = inits; loop { if !cond(v) break; v = body(v) }: the carried values live in the cond
  // region's argument slots between iterations (swapped into the body's, yielded back).
  void execWhile(const Step& s) {
    const Block &cond = s.regions.at(0), &body = s.regions.at(1);
    for (size_t k = 0; k < s.out.size(); ++k) slots_[cond.args[k]] = slots_[s.in[k]];
    for (;;) {
      const Step* c = runBlock(cond);
      if (slots_[c->in[0]].scalarInt() == 0) break;
      for (size_t k = 0; k < s.out.size(); ++k) std::swap(slots_[body.args[k]], slots_[cond.args[k]]);
      const Step* y = runBlock(body);
      if (y) transfer(*y, cond.args, 0);
    }
    for (size_t k = 0; k < s.out.size(); ++k) std::swap(slots_[s.out[k]], slots_[cond.args[k]]);
  }

  // Atomics, element by element in row-major order (programs run one at a time, so each is
  // indivisible): old = *p; *p = old kind v (cas: v if old == cmp); masked-off elements give 0.
  void execAtomic(const Step& s) {
    const Op& op = *s.op;
    const bool cas = op.kind == OpKind::AtomicCAS;
    const size_t values = cas ? 2 : 1;
    const Tile& p = slots_[s.in[0]];
    const Tile& val = slots_[s.in[values]];
    const Tile* cmp = cas ? &slots_[s.in[1]] : nullptr;
    const uint8_t* mask = s.in.size() > values + 1 ? slots_[s.in[values + 1]].i1.data() : nullptr;
    const std::string kind = cas ? "cas" : op.strAttr("kind");
    Tile& out = slots_[s.out[0]];
    const uint64_t size = static_cast<uint64_t>(dtypeBytes(p.dtype));
    withDType(p.dtype, [&](auto dt) {
      constexpr DType D = decltype(dt)::value;
      using T = StorageOf<D>;
      if constexpr (D == DType::I32 || D == DType::I64 || D == DType::F32) {
        T* y = out.data<T>();
        const T* v = val.data<T>();
        for (int64_t i = 0; i < p.n; ++i) {
          if (mask && !mask[i]) {
            y[i] = T(0);
            continue;
          }
          Buffer* buf = checkedAccess("atomic", op, p, i, size);
          uint8_t* at = buf->bytes.data() + (p.ptr[i] - buf->base);
          const T old = readElem<D>(at);
          y[i] = old;
          T next = v[i];
          if (cas) {
            if (old != cmp->data<T>()[i]) continue;
          } else if constexpr (D == DType::F32) {
            if (kind == "add") next = old + v[i];
          } else {
            using U = std::make_unsigned_t<T>;
            if (kind == "add") next = T(U(old) + U(v[i]));
            else if (kind == "max") next = std::max(old, v[i]);
            else if (kind == "min") next = std::min(old, v[i]);
            else if (kind == "and") next = T(old & v[i]);
            else if (kind == "or") next = T(old | v[i]);
            else if (kind == "xor") next = T(old ^ v[i]);
          }
          writeElem<D>(at, next);
          buf->markStored(p.ptr[i] - buf->base);
        }
      } else {
        throw IRError(op.loc, std::string(mnemonic(op.kind)) + ": no atomic on " + dtypeName(D));
      }
    });
  }

  void execIf(const Step& s) {
    const bool cond = slots_[s.in[0]].scalarInt() != 0;
    const Step* y = runBlock(s.regions.at(cond ? 0 : 1));
    if (y) transfer(*y, s.out, 0);
  }

  void execLoad(const Step& s) {
    const Tile& p = slots_[s.in[0]];
    const uint8_t* mask = s.in.size() > 1 ? slots_[s.in[1]].i1.data() : nullptr;
    const Tile* other = s.in.size() > 2 ? &slots_[s.in[2]] : nullptr;
    Tile& out = slots_[s.out[0]];
    const uint64_t size = static_cast<uint64_t>(dtypeBytes(p.dtype));
    const uint64_t* addr = p.ptr.data();
    const FastBuffer fast = fastBuffer(p, mask, size);
    withDType(p.dtype, [&](auto dt) {
      constexpr DType D = decltype(dt)::value;
      using T = StorageOf<D>;
      T* __restrict y = out.data<T>();
      const T* alt = other ? other->data<T>() : nullptr;
      const uint8_t* bytes = fast.bytes;
      const uint64_t base = fast.base;
      if (bytes && !mask) {
        for (int64_t i = 0; i < p.n; ++i) y[i] = readElem<D>(bytes + (addr[i] - base));
      } else if (bytes) {
        for (int64_t i = 0; i < p.n; ++i)
          y[i] = mask[i] ? readElem<D>(bytes + (addr[i] - base)) : alt ? alt[i] : T(0);
      } else {
        for (int64_t i = 0; i < p.n; ++i) {
          if (mask && !mask[i]) {
            y[i] = alt ? alt[i] : T(0);
            continue;
          }
          const Buffer* buf = checkedAccess("load", *s.op, p, i, size);
          y[i] = readElem<D>(buf->bytes.data() + (addr[i] - buf->base));
        }
      }
    });
  }

  void execStore(const Step& s) {
    const Tile& p = slots_[s.in[0]];
    const Tile& value = slots_[s.in[1]];
    const uint8_t* mask = s.in.size() > 2 ? slots_[s.in[2]].i1.data() : nullptr;
    const uint64_t size = static_cast<uint64_t>(dtypeBytes(p.dtype));
    const uint64_t* addr = p.ptr.data();
    const FastBuffer fast = fastBuffer(p, mask, size);
    if (!fast.bytes) {  // slow path: check every element before writing any
      for (int64_t i = 0; i < p.n; ++i)
        if (!mask || mask[i]) checkedAccess("store", *s.op, p, i, size);
    }
    if (!provablyDistinct(p, mask)) checkWriteConflicts(s, p, value, mask, size);
    withDType(p.dtype, [&](auto dt) {
      constexpr DType D = decltype(dt)::value;
      using T = StorageOf<D>;
      const T* __restrict v = value.data<T>();
      uint8_t* bytes = fast.bytes;
      const uint64_t base = fast.base;
      uint8_t* stored = fast.buffer && !fast.buffer->stored.empty() ? fast.buffer->stored.data() : nullptr;
      if (bytes && !mask) {
        for (int64_t i = 0; i < p.n; ++i) writeElem<D>(bytes + (addr[i] - base), v[i]);
        if (stored)
          for (int64_t i = 0; i < p.n; ++i) stored[(addr[i] - base) / size] = 1;
      } else if (bytes) {
        for (int64_t i = 0; i < p.n; ++i)
          if (mask[i]) writeElem<D>(bytes + (addr[i] - base), v[i]);
        if (stored)
          for (int64_t i = 0; i < p.n; ++i)
            if (mask[i]) stored[(addr[i] - base) / size] = 1;
      } else {
        for (int64_t i = 0; i < p.n; ++i) {
          if (mask && !mask[i]) continue;
          Buffer* buf = memory_.resolve(addr[i], size);  // checked above
          writeElem<D>(buf->bytes.data() + (addr[i] - buf->base), v[i]);
          buf->markStored(addr[i] - buf->base);
        }
      }
    });
  }

  // The exact check, for stores whose addresses are not provably distinct: the (address,
  // element) pairs sorted, each address's first writer compared with the others bit for bit.
  // Throws tl-scalar's write-conflict RuntimeError for the pair whose later element comes first.
  [[gnu::noinline, gnu::cold]] void checkWriteConflicts(const Step& s, const Tile& p, const Tile& value, const uint8_t* mask, uint64_t size) {
    storeOrder_.clear();
    for (int64_t i = 0; i < p.n; ++i)
      if (!mask || mask[i]) storeOrder_.push_back({p.ptr[i], i});
    std::sort(storeOrder_.begin(), storeOrder_.end());
    withDType(p.dtype, [&](auto dt) {
      using T = StorageOf<decltype(dt)::value>;
      const T* v = value.data<T>();
      int64_t first = -1, second = -1;
      for (size_t g = 0; g < storeOrder_.size();) {
        size_t end = g + 1;
        while (end < storeOrder_.size() && storeOrder_[end].first == storeOrder_[g].first) ++end;
        for (size_t k = g + 1; k < end; ++k)
          if (std::memcmp(&v[storeOrder_[k].second], &v[storeOrder_[g].second], sizeof(T)) != 0 &&
              (second < 0 || storeOrder_[k].second < second)) {
            first = storeOrder_[g].second;
            second = storeOrder_[k].second;
            break;
          }
        g = end;
      }
      if (second < 0) return;
      auto show = [&](int64_t i) {
        std::ostringstream os;
        if constexpr (std::is_floating_point_v<T>) os << std::setprecision(9) << double(v[i]);
        else os << int64_t(v[i]);
        return os.str();
      };
      auto index = [&](int64_t i) {
        if (p.rank == 3)
          return "[" + std::to_string(i / p.cols / p.dims[1]) + ", " + std::to_string(i / p.cols % p.dims[1]) + ", " +
                 std::to_string(i % p.cols) + "]";
        return p.rank == 2 ? "[" + std::to_string(i / p.cols) + ", " + std::to_string(i % p.cols) + "]"
                           : "[" + std::to_string(i) + "]";
      };
      const uint64_t at = p.ptr[first];
      const Buffer* b = memory_.resolve(at, size);  // checked by the caller
      std::ostringstream os;
      os << "write conflict: elements " << index(first) << " and " << index(second)
         << " of this store both write address 0x" << std::hex << at << std::dec << " (" << b->name
         << formatIndex(b->shape, static_cast<int64_t>((at - b->base) / size)) << ") with different values ("
         << show(first) << " and " << show(second)
         << "); which one lands is undefined (on a GPU, whichever lane wins)" << where(Tile{}, 0);
      throw RuntimeError(s.op->loc, os.str());
    });
  }

  // The fast path's buffer: the buffer holding the first unmasked element, when it has the
  // pointee dtype and holds every other unmasked address too (aligned); else {} (slow path).
  FastBuffer fastBuffer(const Tile& ptrs, const uint8_t* mask, uint64_t size) {
    const int64_t first = firstActive(mask, ptrs.n);
    if (first == ptrs.n) return {};
    Buffer* b = memory_.resolve(ptrs.ptr[first], size);
    if (!b || b->dtype != ptrs.dtype || (b->base & (size - 1)) != 0 || b->bytes.size() < size) return {};
    if (!allInside(ptrs.ptr.data(), mask, ptrs.n, b->base, b->bytes.size(), size)) return {};
    return {b->bytes.data(), b->base, b};
  }

  // --- device_print / device_assert: tl-scalar's order and text (runtime/DevicePrint.h) -----
  void execPrint(const Step& s) {
    const Op& op = *s.op;
    if (!print_) return;
    const std::string& prefix = op.strAttr("prefix");
    const bool hex = op.intAttr("hex") != 0;
    if (s.in.empty()) return print_->line(printPid(pid_) + prefix);
    for (size_t k = 0; k < s.in.size(); ++k) {
      const Shape& shape = op.operand(k)->type.shape;
      const int operand = s.in.size() > 1 ? static_cast<int>(k) : -1;
      for (int64_t e = 0; e < slots_[s.in[k]].n; ++e)
        print_->line(printLine(pid_, "", elementIndex(shape, e), shape, prefix, operand,
                               block::elementText(slots_[s.in[k]], e, hex)));
    }
  }

  void execAssert(const Step& s) {
    const int64_t e = block::firstFalse(slots_[s.in[0]]);
    if (e < 0) return;
    const Shape& shape = s.op->operand(0)->type.shape;
    throw RuntimeError(s.op->loc, assertMessage(s.op->strAttr("msg"), pid_, "", elementIndex(shape, e), shape));
  }

  // --- one op ----------------------------------------------------------------------------
  void exec(const Step& s) {
    const Op& op = *s.op;
    auto in = [&](size_t i) -> const Tile& { return slots_[s.in[i]]; };
    Tile* out = s.out.empty() ? nullptr : &slots_[s.out[0]];
    switch (op.kind) {
      case OpKind::ProgramId: out->i32[0] = static_cast<int32_t>(pid_[s.axis]); break;
      case OpKind::NumPrograms: out->i32[0] = static_cast<int32_t>(launch_.grid[s.axis]); break;
      case OpKind::Constant:
        if (isFloat(out->dtype)) block::fillFloat(*out, s.floatValue);
        else block::fillInt(*out, s.intValue);
        break;
      case OpKind::Arange: block::fillArange(*out, s.intValue); break;
      case OpKind::Splat: block::splat(in(0), *out); break;
      case OpKind::Broadcast: block::broadcast(in(0), *out); break;
      case OpKind::ExpandDims: block::copyElements(in(0), *out); break;
      case OpKind::Trans:
        if (in(0).rank == 2) block::transpose(in(0), *out);
        else block::permute(in(0), s.order, *out);
        break;
      case OpKind::Reshape: block::copyElements(in(0), *out); break;  // row-major order is kept
      case OpKind::Join: block::join(in(0), in(1), *out); break;
      case OpKind::Split: block::split(in(0), s.intValue, *out); break;
      case OpKind::Convert: block::convert(in(0), *out); break;
      case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log:
      case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Abs: case OpKind::Sigmoid: case OpKind::Log2:
      case OpKind::Cos: case OpKind::Sin: case OpKind::Floor: case OpKind::Ceil: case OpKind::Erf:
      case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
      case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
      case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint:
        block::unary(op.kind, in(0), *out);
        break;
      case OpKind::Fma: block::fma(in(0), in(1), in(2), *out); break;
      case OpKind::AtomicRMW: case OpKind::AtomicCAS: execAtomic(s); break;
      case OpKind::DebugBarrier: break;  // a program runs as one: nothing to wait for
      case OpKind::DevicePrint: execPrint(s); break;
      case OpKind::DeviceAssert: execAssert(s); break;
      case OpKind::While: execWhile(s); break;
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::Maximum: case OpKind::Minimum: case OpKind::And: case OpKind::Or: case OpKind::Xor:
      case OpKind::Shl: case OpKind::Shr: case OpKind::Umulhi: case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot: {
        int64_t zero = block::binary(op.kind, in(0), in(1), *out);
        if (zero >= 0) throw RuntimeError(op.loc, "integer division by zero" + where(in(1), zero));
        break;
      }
      case OpKind::Cmp: block::compare(s.pred, in(0), in(1), *out); break;
      case OpKind::Select: block::select(in(0), in(1), in(2), *out); break;
      case OpKind::AddPtr: block::addptr(in(0), in(1), *out); break;
      case OpKind::PtrCast: block::ptrcast(in(0), *out); break;
      case OpKind::Load: execLoad(s); break;
      case OpKind::Store: execStore(s); break;
      case OpKind::Reduce: block::reduce(s.reduceKind, static_cast<int>(s.axis), in(0), *out); break;
      case OpKind::Argmax: block::argmax(static_cast<int>(s.axis), in(0), *out); break;
      case OpKind::Scan: block::scan(s.scanKind, static_cast<int>(s.axis), s.intValue != 0, in(0), *out); break;
      case OpKind::Dot: block::dot(in(0), in(1), in(2), *out, s.intValue != 0); break;
      case OpKind::For: execFor(s); break;
      case OpKind::If: execIf(s); break;
      case OpKind::Yield:
      case OpKind::Return: break;  // terminators are handled by runBlock
      default:  // not a block-level op (a thread-level op, or NumKinds)
        throw IRError(op.loc, std::string("tl-block cannot run '") +
                                  (op.kind < OpKind::NumKinds ? mnemonic(op.kind) : "?") + "': not a block-IR op");
    }
  }
};

}  // namespace

BlockRunStats runBlock(const Function& fn, const LaunchConfig& launch, Memory& memory, DeviceOutput* print) {
  std::string problems = verifyFunction(fn);
  if (!problems.empty()) throw IRError(fn.loc, "runBlock needs verified block IR:\n" + problems);
  Engine engine(fn, launch, memory, print);
  return engine.run();
}

}  // namespace tl
