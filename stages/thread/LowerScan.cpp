// Lowering of scan (BlockOps.def: inclusive cumsum / cumprod / cummax / cummin along an axis)
// to existing thread IR: permute, the elementwise combine, select, shfl_idx, shared memory and
// barriers. No new thread op: the executor, the timing model and PTX codegen need nothing new.
//
// Expects: a tile operand with any layout L (blocked or slice); the result has the same layout
// (assign-layouts keeps the operand's layout for a scan).
// Guarantees: every thread ends with the scanned value of every register it holds, replicas
// included (so later ops may use any copy). Along the root dimension ad of the axis, element
// coordinate = rep*tile + (warpDigit*tpw + laneDigit)*spt + i (Layout::coords), so the scan
// order is rep, then warp, then lane, then register i. Work happens per "column": the q
// registers of one digit j = rep*spt + i along ad (one per element of the other dims, in the
// slice layout's register order, as reduce's groupedOrder), for each rep in scan order:
//   1. in-thread: sequentially over i, col[i] = col[i-1] op col[i] (reverse: from the last i);
//      t = the thread's total of the rep;
//   2. across lanes, when threadsPerWarp[ad] > 1: Kogge-Stone on t with shfl_idx from the lane
//      k = 1, 2, 4, ... places earlier along the axis (a select keeps t where there is none);
//      the lane prefix is the previous lane's inclusive value (identity in the first lane), the
//      warp's total is read from its last lane;
//   3. across warps, when warpsPerCTA[ad] > 1: lane 0 along ad of each warp (first owners only)
//      st_shared's the warp total at slot [rep][warp digit][element of the other dims]; barrier;
//      every thread ld_shared's the warpsPerCTA[ad] totals of its elements, combines the ones of
//      earlier warps (in order) into its warp prefix and all of them into the rep's total;
//      barrier (the buffer may be reused);
//   4. the prefix = carry of earlier reps op warp prefix op lane prefix, and every register
//      becomes prefix op its in-thread value; the carry grows by the rep's total.
// The columns are put back in register order with permute + select on the register digit.
// Where the layout wraps along ad (a tile smaller than the threads along it), only the first
// full[ad] positions count: lane and warp digits are taken modulo the extents that cover the
// tile, so replicas compute exactly what their first owner does.
// Identities (lane 0's prefix, warps before the first): sum -0.0 / 0, prod 1, max -inf /
// INT_MIN, min +inf / INT_MAX: combining with them changes no bit. Integer scans and max/min
// are exact; float sums and products differ from tl-scalar's sequential order by rounding only
// (the stage tests use the usual tolerance); f16/bf16 round after every combine, as tl-scalar.
#include <algorithm>
#include <limits>

#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

OpKind scanOp(const std::string& kind) {
  return kind == "sum" ? OpKind::Add : kind == "prod" ? OpKind::Mul : kind == "max" ? OpKind::Maximum : OpKind::Minimum;
}

}  // namespace

void Lowerer::lowerScan(const Op& op) {
  const Type& inT = op.operand(0)->type;
  const std::string& kind = op.strAttr("kind");
  const int axis = static_cast<int>(op.intAttr("axis"));
  const bool reverse = op.intAttr("reverse") != 0;
  const LayoutGeom g = LayoutGeom::of(*inT.layout, inT.shape);
  const int ad = g.kept[axis];
  const Shape outShape = reducedShape(inT.shape, axis);
  const LayoutGeom out = LayoutGeom::of(*Layout::slice(axis, inT.layout), outShape);
  const int64_t q = out.numRegs;  // registers per column
  const DType dt = inT.dtype;
  const Type scalarT = Type::scalar(dt);

  // Extents along ad that cover the tile (smaller than the layout's where it wraps around).
  const int64_t reps = g.e[ad] / g.spt[ad];
  int64_t se = g.spt[ad], te = g.tpw[ad], we = g.wpc[ad];
  if (g.wraps(ad)) {
    se = std::min<int64_t>(g.spt[ad], g.full[ad]);
    const int64_t groups = g.full[ad] / se;  // thread positions along ad that hold distinct elements
    te = std::min<int64_t>(g.tpw[ad], groups);
    we = groups / te;
  }

  auto cmb = [&](Value* a, Value* b) -> Value* {  // null is the identity
    if (!a) return b;
    if (!b) return a;
    return bin(scanOp(kind), a, b);
  };
  auto identity = [&](int64_t n) {
    const bool isF = isFloat(dt);
    const bool is64 = dt == DType::I64;
    const int64_t lo = is64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
    const int64_t hi = is64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
    const double inf = std::numeric_limits<double>::infinity();
    if (kind == "sum") return constOf(scalarT, isF ? -0.0 : 0.0, 0, n);
    if (kind == "prod") return constOf(scalarT, 1.0, 1, n);
    if (kind == "max") return constOf(scalarT, -inf, lo, n);
    return constOf(scalarT, inf, hi, n);
  };
  auto wide = [&](Value* cond) { return splatTo(cond, q); };  // a per-thread condition on a column

  // The columns: col[j] holds digit j along ad of every element of the other dims.
  Value* x = get(op.operand(0));
  std::vector<Value*> col(static_cast<size_t>(g.e[ad]));
  for (int64_t j = 0; j < g.e[ad]; ++j) col[j] = permuteRegs(x, groupedOrder(g, ad, j));

  // Lane and warp positions along ad, in scan order (0 = first), and the lane arithmetic.
  Value* ld = laneDigit(g, ad);
  if (te < g.tpw[ad]) ld = andC(ld, te - 1);
  Value* laneRank = reverse ? bin(OpKind::Sub, constI32(te - 1), ld) : ld;
  const int64_t dir = reverse ? -1 : 1;  // lanes earlier in scan order are at lane - dir*k*laneStride
  Value* wd = warpDigit(g, ad);
  if (we < g.wpc[ad]) wd = andC(wd, we - 1);
  Value* warpRank = reverse ? bin(OpKind::Sub, constI32(we - 1), wd) : wd;
  auto shflFrom = [&](Value* v, Value* srcLane) {
    return b_.create(OpKind::ShflIdx, {v, srcLane}, {v->type})->result();
  };

  // Steps 1 and 2 per rep: in-thread scan, lane prefix, warp total.
  std::vector<Value*> lanePrefix(static_cast<size_t>(reps), nullptr), warpTotal(static_cast<size_t>(reps), nullptr);
  for (int64_t r = 0; r < reps; ++r) {
    for (int64_t k = 1; k < se; ++k) {
      const int64_t i = reverse ? se - 1 - k : k, prev = reverse ? i + 1 : i - 1;
      col[r * g.spt[ad] + i] = cmb(col[r * g.spt[ad] + prev], col[r * g.spt[ad] + i]);
    }
    Value* t = col[r * g.spt[ad] + (reverse ? 0 : se - 1)];
    if (te == 1) {
      warpTotal[r] = t;
      continue;
    }
    const int64_t ls = g.laneStride[ad];
    for (int64_t k = 1; k < te; k *= 2) {
      Value* has = cmpC("ge", laneRank, k);
      Value* moved = addC(lane_, -dir * k * ls);
      Value* src = b_.select(has, moved, lane_);
      Value* earlier = shflFrom(t, src);
      Value* sum = cmb(earlier, t);
      t = b_.select(wide(has), sum, t);
    }
    Value* hasPrev = cmpC("ge", laneRank, 1);
    Value* prevLane = b_.select(hasPrev, addC(lane_, -dir * ls), lane_);
    Value* prevIncl = shflFrom(t, prevLane);
    Value* none = identity(q);
    lanePrefix[r] = b_.select(wide(hasPrev), prevIncl, none);
    // The last lane in scan order: lane + (lastDigit - ld) * laneStride (a constant when the
    // axis takes all 32 lanes).
    const int64_t lastDigit = reverse ? 0 : te - 1;
    Value* lastLane = nullptr;
    if (te == kWarpSize) {
      lastLane = constI32(lastDigit);
    } else {
      Value* back = mulC(ld, ls);
      lastLane = addC(bin(OpKind::Sub, lane_, back), lastDigit * ls);
    }
    warpTotal[r] = shflFrom(t, lastLane);
  }

  // Step 3: warp prefixes and rep totals through shared memory.
  std::vector<Value*> warpPrefix(static_cast<size_t>(reps), nullptr), repTotal(warpTotal);
  if (we > 1) {
    int64_t numOut = 1;
    for (int64_t s : outShape) numOut *= s;
    const int bytes = dtypeBytes(dt);
    Value* base = sharedBase(reps * we * numOut * bytes, "scan across warps");
    Value* lin = linearIndex(out, outShape);
    Value* writer = ownerMask(out, /*freeWarpDim=*/ad);  // lane 0 along ad, first owners of the other dims
    if (we < g.wpc[ad]) writer = andMask(writer, splatTo(cmpC("lt", warpDigit(g, ad), we), q));
    for (int64_t r = 0; r < reps; ++r) {
      Value* slot = bin(OpKind::Add, splatTo(mulC(addC(wd, r * we), numOut), q), lin);
      stShared(sharedAddr(slot, bytes, base), warpTotal[r], writer);
    }
    barrier();
    for (int64_t r = 0; r < reps; ++r) {
      Value* prefix = identity(q);
      Value* total = nullptr;
      for (int64_t s = 0; s < we; ++s) {  // s: position in scan order
        const int64_t w = reverse ? we - 1 - s : s;
        Value* v = ldShared(sharedAddr(addC(lin, (r * we + w) * numOut), bytes, base), dt);
        Value* before = splatTo(cmpC("gt", warpRank, s), q);
        Value* grown = cmb(prefix, v);
        prefix = b_.select(before, grown, prefix);
        total = cmb(total, v);
      }
      warpPrefix[r] = prefix;
      repTotal[r] = total;
    }
    barrier();
  }

  // Step 4: each rep's prefix (earlier reps, earlier warps, earlier lanes) into its registers.
  Value* carry = nullptr;
  for (int64_t s = 0; s < reps; ++s) {
    const int64_t r = reverse ? reps - 1 - s : s;
    Value* prefix = cmb(cmb(carry, warpPrefix[r]), lanePrefix[r]);
    if (prefix)
      for (int64_t i = 0; i < se; ++i) col[r * g.spt[ad] + i] = cmb(prefix, col[r * g.spt[ad] + i]);
    if (s + 1 < reps) carry = cmb(carry, repTotal[r]);
  }
  for (int64_t i = se; i < g.spt[ad]; ++i) col[i] = col[i % se];  // in-thread replicas (reps == 1 here)

  // Back to register order: register rr with digit j along ad takes col[j][its column index].
  Value* result = nullptr;
  Value* digit = nullptr;
  if (g.e[ad] > 1) {
    Value* regs = b_.create(OpKind::RegIndex, {}, {Type::tile(DType::I32, {g.numRegs})})->result();
    digit = divC(regs, g.regStride[ad]);
    if (g.regStride[ad] * g.e[ad] != g.numRegs) digit = andC(digit, g.e[ad] - 1);
  }
  for (int64_t j = 0; j < g.e[ad]; ++j) {
    std::vector<int64_t> idx(static_cast<size_t>(g.numRegs), 0);
    const std::vector<int64_t> regs = groupedOrder(g, ad, j);
    for (size_t k = 0; k < regs.size(); ++k) idx[static_cast<size_t>(regs[k])] = static_cast<int64_t>(k);
    Value* placed = permuteRegs(col[j], idx);
    if (!result) {
      result = placed;
      continue;
    }
    Value* mine = cmpC("eq", digit, j);
    result = b_.select(mine, placed, result);
  }
  set(op.result(), result);
}

}  // namespace tl::lower
