// The axis analysis (Triton's AxisInfo, simplified): what a kernel's integer and pointer
// arithmetic proves about runs of contiguous, aligned and equal elements.
//
// Expects: verified block IR (with or without layouts).
// Guarantees: every value defined in the function gets an AxisInfo (stages/thread/Layouts.h)
// whose claims hold for every launch whose scalar arguments satisfy `hints`: the analysis is
// conservative — a claim that is too strong would turn into a misaligned or wrongly predicated
// vector access at run time, so where a rule is unsure it says 1. Float values get constancy
// only (contiguity and divisibility 1).
//
// One forward walk over the ops (loops: a fixpoint over the carried values). The rule for each
// op is one small function below; docs/layouts.md has them as a table.
//
// Compiler hints (tl.multiple_of, tl.max_contiguous, tl.max_constancy: the front end records
// them as int-list attributes `multiple_of`, `max_contiguous`, `max_constancy`, one value per
// dimension, on the op that made the value) are promises, as in Triton: each dimension takes
// the larger of what the rules proved and what the hint says (divisibility, contiguity,
// constancy respectively), each hint rounded down to the largest power of two dividing it (the
// analysis works in powers of two). A hint is trusted, not checked: if it lies, a vector access
// it enables meets addresses that are not consecutive or not aligned, and the executor stops
// there with a located error naming them (it never reads or writes other data than the
// kernel's addresses name). The GPU faults on a misaligned first address, and otherwise reads
// vec consecutive elements from the group's first address, whatever the others were.
#include <algorithm>
#include <numeric>

#include "ir/PassUtils.h"
#include "ir/Verifier.h"  // transOrder
#include "thread/Layouts.h"

namespace tl {

std::string AxisInfo::str() const {
  auto list = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  };
  std::string s = "contiguity=" + list(contiguity) + " divisibility=" + list(divisibility) +
                  " constancy=" + list(constancy);
  if (value) s += " value=" + std::to_string(*value);
  return s;
}

namespace {

// The largest power of two dividing v (kMaxDivisibility for 0, and at most that).
int64_t pow2Divisor(int64_t v) {
  if (v == 0) return kMaxDivisibility;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int64_t d = 1;
  while ((u & 1) == 0 && d < kMaxDivisibility) {
    u >>= 1;
    d <<= 1;
  }
  return d;
}

// Product of two divisibilities, saturating at kMaxDivisibility (both are powers of two).
int64_t mulDiv(int64_t a, int64_t b) {
  if (a >= kMaxDivisibility / b) return kMaxDivisibility;
  return a * b;
}

// gcd of two powers of two.
int64_t gcd2(int64_t a, int64_t b) { return std::min(a, b); }

}  // namespace

ParamHints paramHintsFromLaunch(const LaunchConfig& launch) {
  ParamHints hints;
  for (const auto& [name, v] : launch.scalars) {
    if (!isInt(v.dtype) || v.dtype == DType::I1) continue;
    ParamFact f;
    f.divisibility = std::min<int64_t>(16, pow2Divisor(v.i));
    f.isOne = v.i == 1;
    hints[name] = f;
  }
  return hints;
}

std::string describeHints(const ParamHints& hints) {
  std::string s;
  for (const auto& [name, f] : hints) {
    if (!s.empty()) s += "; ";
    s += name + (f.isOne ? ": equals 1" : ": divisible by " + std::to_string(f.divisibility));
  }
  return s.empty() ? "none" : s;
}

namespace {

class Analyzer {
 public:
  Analyzer(const Function& fn, const ParamHints& hints) : fn_(fn), hints_(hints) {}

  std::map<const Value*, AxisInfo> run() {
    for (size_t i = 0; i < fn_.body.args.size(); ++i) {
      const Value* v = fn_.body.arg(i);
      AxisInfo a = unknown(v->type);
      if (v->type.isPtr) {
        a.divisibility = {256};  // runtime/Memory.h: every buffer is 256-byte aligned
      } else if (isInt(v->type.dtype) && i < fn_.params.size()) {
        auto it = hints_.find(fn_.params[i].name);
        if (it != hints_.end()) {
          a.divisibility = {it->second.isOne ? 1 : it->second.divisibility};
          if (it->second.isOne) a.value = 1;
        }
      }
      info_[v] = a;
    }
    region(fn_.body);
    return std::move(info_);
  }

 private:
  const Function& fn_;
  const ParamHints& hints_;
  std::map<const Value*, AxisInfo> info_;

  // --- building blocks ------------------------------------------------------------------------

  static size_t dims(const Type& t) { return t.isScalar() ? 1 : t.shape.size(); }
  static int64_t extent(const Type& t, size_t d) { return t.isScalar() ? 1 : t.shape[d]; }

  // Nothing known: runs of one element.
  static AxisInfo unknown(const Type& t) {
    size_t n = dims(t);
    return AxisInfo{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1), std::nullopt};
  }
  // Every element equals `v` (ints) or an unknown but uniform value (floats: v = nullopt).
  static AxisInfo uniform(const Type& t, std::optional<int64_t> v) {
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < a.constancy.size(); ++d) {
      a.constancy[d] = extent(t, d);
      if (v) a.divisibility[d] = pow2Divisor(*v);
    }
    a.value = v;
    return a;
  }

  const AxisInfo& get(const Value* v) {
    auto it = info_.find(v);
    if (it == info_.end()) it = info_.emplace(v, unknown(v->type)).first;
    return it->second;
  }

  // The divisibility of the first element of each run of `newContig` elements along d, for a
  // value whose runs of a.contiguity[d] elements start at multiples of a.divisibility[d]: when
  // runs get shorter, a later run starts `k * newContig` elements into an old run, so it is
  // only known divisible by gcd(div, newContig * step), step = 1 (ints) or element bytes (ptrs).
  static int64_t divAt(const AxisInfo& a, size_t d, int64_t newContig, int64_t step = 1) {
    if (a.contiguity[d] <= newContig) return a.divisibility[d];
    return gcd2(a.divisibility[d], newContig * step);
  }
  // What is known to divide every element (any dimension's claim with runs of one element).
  static int64_t elementDiv(const AxisInfo& a) {
    int64_t best = 1;
    for (size_t d = 0; d < a.divisibility.size(); ++d)
      if (a.contiguity[d] == 1) best = std::max(best, a.divisibility[d]);
    return best;
  }
  static AxisInfo join(const AxisInfo& a, const AxisInfo& b) {
    AxisInfo r = a;
    for (size_t d = 0; d < r.contiguity.size() && d < b.contiguity.size(); ++d) {
      r.contiguity[d] = gcd2(a.contiguity[d], b.contiguity[d]);
      r.constancy[d] = gcd2(a.constancy[d], b.constancy[d]);
      // The join's runs may be shorter than either side's: re-anchor the divisibility.
      r.divisibility[d] = gcd2(divAt(a, d, r.contiguity[d]), divAt(b, d, r.contiguity[d]));
    }
    if (a.value != b.value) r.value.reset();
    return r;
  }
  // Contiguity and constancy never exceed the extent of their dimension.
  static AxisInfo clamp(AxisInfo a, const Type& t) {
    for (size_t d = 0; d < a.contiguity.size(); ++d) {
      a.contiguity[d] = std::clamp<int64_t>(a.contiguity[d], 1, extent(t, d));
      a.constancy[d] = std::clamp<int64_t>(a.constancy[d], 1, extent(t, d));
      a.divisibility[d] = std::clamp<int64_t>(a.divisibility[d], 1, kMaxDivisibility);
    }
    return a;
  }

  // --- the rules ------------------------------------------------------------------------------

  // a + b, a - b, ptr + off: contiguous plus constant stays contiguous (for `-` only on the
  // left); run starts divisible by both sides' divisibility; constant where both are.
  AxisInfo addSub(const Op& op) {
    const Type& t = op.result()->type;
    const AxisInfo &l = get(op.operand(0)), &r = get(op.operand(1));
    bool isSub = op.kind == OpKind::Sub, isPtr = op.kind == OpKind::AddPtr;
    int64_t step = isPtr ? dtypeBytes(t.dtype) : 1;  // bytes per element of the pointee
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < dims(t); ++d) {
      int64_t c = std::gcd(l.contiguity[d], r.constancy[d]);
      if (!isSub) c = std::max(c, std::gcd(l.constancy[d], r.contiguity[d]));
      a.contiguity[d] = c;
      int64_t rd = divAt(r, d, c);
      if (isPtr) rd = mulDiv(rd, step);
      a.divisibility[d] = gcd2(divAt(l, d, c, isPtr ? step : 1), rd);
      a.constancy[d] = std::gcd(l.constancy[d], r.constancy[d]);
    }
    if (l.value && r.value && !isPtr) a.value = isSub ? *l.value - *r.value : *l.value + *r.value;
    return a;
  }

  // a * b: contiguity survives only a multiplication by 1; otherwise every element is divisible
  // by the product of the elements' divisibilities.
  AxisInfo mul(const Op& op) {
    const Type& t = op.result()->type;
    const AxisInfo &l = get(op.operand(0)), &r = get(op.operand(1));
    if (r.value == 1) return withConstancy(l, r);
    if (l.value == 1) return withConstancy(r, l);
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < dims(t); ++d) {
      a.divisibility[d] = mulDiv(divAt(l, d, 1), divAt(r, d, 1));
      a.constancy[d] = std::gcd(l.constancy[d], r.constancy[d]);
    }
    if (l.value && r.value) a.value = *l.value * *r.value;
    return a;
  }
  // `x` combined with a uniform operand `u` (x * 1, x / 1): x's info, constancy intersected.
  static AxisInfo withConstancy(AxisInfo x, const AxisInfo& u) {
    for (size_t d = 0; d < x.constancy.size(); ++d) x.constancy[d] = std::gcd(x.constancy[d], u.constancy[d]);
    return x;
  }

  // Elementwise results about which only divisibility (per element) and constancy are known.
  // `combine` merges the two per-element divisibilities (gcd for most, max for `&`).
  template <class Combine>
  AxisInfo perElement(const Op& op, Combine combine) {
    const Type& t = op.result()->type;
    AxisInfo a = unknown(t);
    const AxisInfo& l = get(op.operand(0));
    for (size_t d = 0; d < dims(t); ++d) {
      a.divisibility[d] = divAt(l, d, 1);
      a.constancy[d] = l.constancy[d];
      if (op.numOperands() == 2) {
        const AxisInfo& r = get(op.operand(1));
        a.divisibility[d] = combine(a.divisibility[d], divAt(r, d, 1));
        a.constancy[d] = std::gcd(a.constancy[d], r.constancy[d]);
      }
    }
    return a;
  }

  // Comparisons: equal where both sides are; and `x < c` / `x >= c` (or `c > x` / `c <= x`) with
  // x contiguous and c uniform is constant on aligned blocks of g = gcd(contiguity, div x, div c)
  // elements: the result can only flip where x == c, and c is a multiple of g, which is where a
  // block starts. (`x <= c`, `x > c`, `==`, `!=` may flip inside a block: no such rule.)
  AxisInfo cmp(const Op& op) {
    const Type& t = op.result()->type;
    const AxisInfo &l = get(op.operand(0)), &r = get(op.operand(1));
    const std::string& pred = op.strAttr("pred");
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < dims(t); ++d) {
      int64_t k = std::gcd(l.constancy[d], r.constancy[d]);
      auto block = [&](const AxisInfo& x, const AxisInfo& c) {
        if (c.constancy[d] < x.contiguity[d]) return int64_t(1);  // c must be uniform over the run
        return gcd2(x.contiguity[d], gcd2(x.divisibility[d], c.divisibility[d]));
      };
      if (pred == "lt" || pred == "ge") k = std::max(k, block(l, r));
      if (pred == "gt" || pred == "le") k = std::max(k, block(r, l));
      a.constancy[d] = k;
    }
    if (l.value && r.value) {
      int64_t x = *l.value, y = *r.value;
      bool v = pred == "lt" ? x < y : pred == "le" ? x <= y : pred == "gt" ? x > y : pred == "ge" ? x >= y
             : pred == "eq" ? x == y : x != y;
      a.value = v ? 1 : 0;
    }
    return a;
  }

  // where(c, a, b): wherever c is constant, the result is a run of a or of b.
  AxisInfo select(const Op& op) {
    const Type& t = op.result()->type;
    const AxisInfo &c = get(op.operand(0)), &x = get(op.operand(1)), &y = get(op.operand(2));
    if (c.value) return *c.value ? x : y;
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < dims(t); ++d) {
      int64_t k = c.constancy[d];
      a.contiguity[d] = std::min(std::gcd(x.contiguity[d], k), std::gcd(y.contiguity[d], k));
      a.divisibility[d] = gcd2(divAt(x, d, a.contiguity[d]), divAt(y, d, a.contiguity[d]));
      a.constancy[d] = std::min(std::gcd(x.constancy[d], k), std::gcd(y.constancy[d], k));
    }
    if (x.value && x.value == y.value) a.value = x.value;
    return a;
  }

  AxisInfo splat(const Op& op) {
    const Type& t = op.result()->type;
    const AxisInfo& s = get(op.operand(0));
    AxisInfo a = uniform(t, s.value);
    for (size_t d = 0; d < dims(t); ++d) a.divisibility[d] = s.divisibility[0];
    return a;
  }

  // Growing a size-1 dimension: the new elements repeat the old one.
  AxisInfo broadcast(const Op& op) {
    const Type &t = op.result()->type, &in = op.operand(0)->type;
    AxisInfo a = get(op.operand(0));
    for (size_t d = 0; d < dims(t); ++d)
      if (in.shape[d] != t.shape[d]) a.constancy[d] = t.shape[d];
    return a;
  }

  // A new size-1 dimension: along it every "run" is one element, divisible by what divides
  // every element.
  AxisInfo expandDims(const Op& op) {
    const AxisInfo& in = get(op.operand(0));
    auto axis = static_cast<size_t>(op.intAttr("axis"));
    AxisInfo a = in;
    a.contiguity.insert(a.contiguity.begin() + axis, 1);
    a.constancy.insert(a.constancy.begin() + axis, 1);
    a.divisibility.insert(a.divisibility.begin() + axis, elementDiv(in));
    return a;
  }

  // x.to(dtype): widening ints keeps the values; anything else keeps only equality.
  AxisInfo convert(const Op& op) {
    const Type &t = op.result()->type, &in = op.operand(0)->type;
    const AxisInfo& x = get(op.operand(0));
    bool widenInt = isInt(in.dtype) && in.dtype != DType::I1 && isInt(t.dtype) && t.dtype != DType::I1 &&
                    dtypeBytes(t.dtype) >= dtypeBytes(in.dtype);
    if (widenInt) return x;
    AxisInfo a = unknown(t);
    a.constancy = x.constancy;
    return a;
  }

  // ptrcast keeps the 64-bit value, so it keeps what divides each element and where elements
  // repeat; runs do not carry over (consecutive ints are one byte apart, pointers one element).
  // An address loaded from memory is unknown (divisibility 1) unless a tl.multiple_of on the
  // loaded int64 says otherwise.
  AxisInfo ptrCast(const Op& op) {
    const Type& t = op.result()->type;
    const Type& in = op.operand(0)->type;
    const AxisInfo& x = get(op.operand(0));
    AxisInfo a = unknown(t);
    for (size_t d = 0; d < dims(t); ++d) a.divisibility[d] = divAt(x, d, 1, in.isPtr ? dtypeBytes(in.dtype) : 1);
    a.constancy = x.constancy;
    return a;
  }

  AxisInfo forInductionVar(const Op& op) {
    AxisInfo a = unknown(op.operand(0)->type);
    a.divisibility[0] = gcd2(elementDiv(get(op.operand(0))), elementDiv(get(op.operand(2))));
    return a;
  }

  AxisInfo rule(const Op& op) {
    const Type& t = op.result()->type;
    switch (op.kind) {
      case OpKind::Constant: {
        const Attr* v = op.attr("value");
        if (isInt(t.dtype) && v && std::holds_alternative<int64_t>(*v)) return uniform(t, wrapInt(t.dtype, std::get<int64_t>(*v)));
        return uniform(t, std::nullopt);
      }
      case OpKind::Arange: {
        AxisInfo a = unknown(t);
        a.contiguity[0] = t.shape[0];
        a.divisibility[0] = pow2Divisor(op.intAttr("start"));
        return a;
      }
      case OpKind::Splat: return splat(op);
      case OpKind::Broadcast: return broadcast(op);
      case OpKind::ExpandDims: return expandDims(op);
      case OpKind::ConvertLayout: return get(op.operand(0));
      case OpKind::Trans: {  // result dim j is operand dim order[j]: every fact moves with its dim
        const AxisInfo& in = get(op.operand(0));
        AxisInfo a = in;
        const std::vector<int> order = transOrder(op);
        for (auto [to, from] : {std::pair{&a.contiguity, &in.contiguity}, std::pair{&a.divisibility, &in.divisibility},
                                std::pair{&a.constancy, &in.constancy}})
          if (to->size() == order.size())
            for (size_t j = 0; j < order.size(); ++j) (*to)[j] = (*from)[static_cast<size_t>(order[j])];
        return a;
      }
      case OpKind::Convert: return convert(op);
      case OpKind::Add: case OpKind::Sub: case OpKind::AddPtr: return addSub(op);
      case OpKind::Mul: return mul(op);
      case OpKind::Div:
        if (get(op.operand(1)).value == 1) return withConstancy(get(op.operand(0)), get(op.operand(1)));
        return perElement(op, [](int64_t, int64_t) { return int64_t(1); });
      case OpKind::Rem:  // a % b = a - (a / b) * b: divisible by what divides both
        return perElement(op, gcd2);
      case OpKind::Neg: case OpKind::Abs: case OpKind::Maximum: case OpKind::Minimum:
      case OpKind::Or: case OpKind::Xor:
        return perElement(op, gcd2);
      case OpKind::And:  // low zero bits of either side stay zero
        return perElement(op, [](int64_t x, int64_t y) { return std::max(x, y); });
      case OpKind::Not: case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Sqrt:
      case OpKind::Rsqrt: case OpKind::Sigmoid: case OpKind::Log2: case OpKind::Cos: case OpKind::Sin:
      case OpKind::Floor: case OpKind::Ceil: case OpKind::Erf:
      case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
      case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
      case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint: {
        AxisInfo a = unknown(t);
        a.constancy = get(op.operand(0)).constancy;
        return a;
      }
      case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot: {  // floats: equal where both operands are
        AxisInfo a = unknown(t);
        for (size_t d = 0; d < dims(t); ++d)
          a.constancy[d] = std::gcd(get(op.operand(0)).constancy[d], get(op.operand(1)).constancy[d]);
        return a;
      }
      case OpKind::PtrCast: return ptrCast(op);
      case OpKind::Cmp: return cmp(op);
      case OpKind::Select: return select(op);
      default: return unknown(t);  // program_id, loads, reductions, dot: nothing known
    }
  }

  // The hints recorded on `op` (see the top of the file), applied to what the rules proved.
  static AxisInfo withHints(const Op& op, AxisInfo a) {
    auto apply = [&](const char* name, std::vector<int64_t>& field) {
      const Attr* h = op.attr(name);
      const auto* list = h ? std::get_if<std::vector<int64_t>>(h) : nullptr;
      if (!list) return;
      for (size_t d = 0; d < field.size() && d < list->size(); ++d)
        if ((*list)[d] > 0) field[d] = std::max(field[d], pow2Divisor((*list)[d]));
    };
    apply("multiple_of", a.divisibility);
    apply("max_contiguous", a.contiguity);
    apply("max_constancy", a.constancy);
    return a;
  }

  // --- the walk -------------------------------------------------------------------------------

  void region(const Region& r) {
    for (const auto& op : r.ops) {
      if (op->kind == OpKind::For) forOp(*op);
      else if (op->kind == OpKind::If) ifOp(*op);
      else if (op->kind == OpKind::While) whileOp(*op);
      else if (op->numResults() == 1) info_[op->result()] = clamp(withHints(*op, rule(*op)), op->result()->type);
    }
  }

  // Carried values: start from the inits, join with what the body yields until nothing
  // changes (the fields only shrink, through powers of two, so this ends; a cap keeps it cheap
  // and falls back to "unknown", which is always true).
  void forOp(const Op& op) {
    const Region& body = op.region(0);
    info_[body.arg(0)] = forInductionVar(op);
    size_t n = op.numResults();
    for (size_t i = 0; i < n; ++i) info_[body.arg(i + 1)] = get(op.operand(3 + i));
    bool stable = false;
    for (int iter = 0; iter < 64 && !stable; ++iter) {
      region(body);
      stable = true;
      const Op* y = body.terminator();
      for (size_t i = 0; i < n && y; ++i) {
        AxisInfo next = join(get(body.arg(i + 1)), get(y->operand(i)));
        if (!(next == get(body.arg(i + 1)))) {
          info_[body.arg(i + 1)] = next;
          stable = false;
        }
      }
    }
    if (!stable) {
      for (size_t i = 0; i < n; ++i) info_[body.arg(i + 1)] = unknown(body.arg(i + 1)->type);
      region(body);
    }
    for (size_t i = 0; i < n; ++i) info_[op.result(i)] = get(body.arg(i + 1));
  }

  // A while's carried values may change any number of times: nothing is assumed about them
  // (unknown is always true); the regions are still analyzed for the values they compute.
  void whileOp(const Op& op) {
    for (const auto& r : op.regions)
      for (const auto& a : r->args) info_[a.get()] = unknown(a->type);
    region(op.region(0));
    region(op.region(1));
    for (const auto& res : op.results) info_[res.get()] = unknown(res->type);
  }

  void ifOp(const Op& op) {
    region(op.region(0));
    region(op.region(1));
    const Op *a = op.region(0).terminator(), *b = op.region(1).terminator();
    for (size_t i = 0; i < op.numResults(); ++i) {
      if (a && b && i < a->numOperands() && i < b->numOperands())
        info_[op.result(i)] = join(get(a->operand(i)), get(b->operand(i)));
      else
        info_[op.result(i)] = unknown(op.result(i)->type);
    }
  }
};

}  // namespace

std::map<const Value*, AxisInfo> analyzeAxes(const Function& fn, const ParamHints& hints) {
  return Analyzer(fn, hints).run();
}

}  // namespace tl
