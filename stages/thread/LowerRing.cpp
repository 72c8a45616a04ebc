// Load rings: a pipelined loop's loads of dot operands copied by cp_async straight
// into a ring of shared-memory slots, instead of into registers and then, at the dot, to shared
// memory (the staging of LowerDot.cpp / LowerWgmma.cpp).
//
// Expects: block IR after pipeline-loads (lib/ir/PipelineLoads.cpp), which issues the loads of a
// 16-bit dot operand L = num_stages - 1 iterations ahead: a `for` carrying L values x_i ..
// x_{i+L-1} of the load, its inits the loads of iterations 0 .. L-1 just before the loop, the
// body yielding x_{i+1} .. x_{i+L-1} and the load of iteration i + L. A ring is such a chain
// where:
//   - x_i's only use is operand a or b of a dot at the top of the body that lowerDotMma or
//     lowerDotWgmma lowers (tensorCoreStaging), or a 2-D dot on FMAs (lowerDot's form B,
//     fmaStaging), and each other carried value's only use is the yield; the loop's results for
//     them are unused;
//   - every load of the chain has x_i's type (one layout: no replicated elements, its registers
//     in runs of vec along the staged rows, vec x its bytes = 4, 8 or 16, or, for 4-byte
//     elements, running across them: an FMA dot's a, staged transposed, copied one element a
//     cp_async) and no `other` but 0;
//   - every ring of the loop has the same L; the loads before the loop come iteration by
//     iteration; the body's loads come before its ring dots.
// Anything else is lowered as before (registers, then st_shared at the dot).
// Guarantees:
//   1. one shared buffer per ring of R slots, each the dot's staging of that operand (the same
//      addresses, swizzle and alignment: tensorCoreStaging); R = L + 1, or L + 2 when a wgmma dot
//      is left in flight (4). The loop carries a slot counter, i % R, instead of the L values.
//   2. each load before the loop: cp_async of every register group into slot s (s = its
//      iteration), then cp_async_commit (one group per load, in program order);
//   3. the body's load of iteration i + L is held back to the first ring dot: that dot does
//      cp_async_wait (pending: the groups of the later iterations, L - 1 per ring: every ring's
//      copies of iteration i have landed), fence_proxy_async for a wgmma, and a barrier; then
//      the held loads go out (cp_async into slot (i + L) % R, commit). A later ring dot of the
//      iteration waits for nothing and takes no barrier (its slot landed before the first
//      one's), unless it stages an operand in the loop. A ring dot reads its slot
//      (slot i % R) where it would have read its staged buffer, and needs no barrier after it
//      when no operand was staged in the loop: the barrier before the next iteration's copies
//      orders them after every thread's reads of the slot they overwrite.
//   4. a wgmma dot whose operands are rings or staged before the loop, whose accumulator is a
//      carried value only it reads and whose result only the yield reads, waits with
//      wgmma_wait 1: one iteration's wgmmas stay in flight while the next is issued. R = L + 2
//      keeps the slot they read out of the copies' way.
//   5. after the loop: wgmma_wait 0 on the loop's accumulators of those dots (when 4 applies;
//      what follows reads the wait's results), cp_async_wait 0, a barrier: no copy is in
//      flight (the last iterations' copies are masked off: zeros, nothing read) when the
//      buffers are reused.
// The executor checks what this relies on: a read of bytes a copy has not landed, a copy over
// bytes an in-flight wgmma reads, or a store over either, is an error at the op.
#include <algorithm>

#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

bool isZeroConstant(const Value* v) {
  if (v->isRegionArg() || v->def->kind != OpKind::Constant) return false;
  const Attr* a = v->def->attr("value");
  if (!a) return false;
  if (std::holds_alternative<double>(*a)) return std::get<double>(*a) == 0.0;
  if (std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a) == 0;
  return false;
}

// No element of the tile is held by two threads (or twice by one).
bool noReplicas(const LayoutGeom& g) {
  for (int d = 0; d < g.rootRank(); ++d) {
    if (g.isKept(d) ? g.wraps(d) : (g.tpw[d] > 1 || g.wpc[d] > 1)) return false;
  }
  return true;
}

}  // namespace

const Lowerer::Ring* Lowerer::LoopRings::ringOf(const Value* operand) const {
  for (const Ring& r : rings)
    if (r.head == operand) return &r;
  return nullptr;
}

Lowerer::LoopRings* Lowerer::ringsOf(const Op& blockFor) {
  auto it = loopRings_.find(&blockFor);
  return it == loopRings_.end() ? nullptr : &it->second;
}

Lowerer::LoopRings* Lowerer::ringsOfDot(const Op& dot) {
  const Op* loop = dot.parent ? dot.parent->parentOp : nullptr;
  return loop ? ringsOf(*loop) : nullptr;
}

// The chain of `loop`'s carried values that feeds `operand` of `dot`, when it is a ring (the
// conditions at the top).
std::optional<Lowerer::Ring> Lowerer::ringFrom(const Op& loop, const Op& dot, int operand) {
  const Region& body = loop.region(0);
  const Value* head = dot.operand(size_t(operand));
  if (!head->isRegionArg() || head->owner != &body || head->index == 0) return std::nullopt;
  const Type& t = head->type;
  if (t.dtype != DType::F16 && t.dtype != DType::BF16 && t.dtype != DType::F32 && !isFp8(t.dtype)) return std::nullopt;
  std::optional<OperandStaging> st = dotStaging(dot, operand);
  if (!st || !t.layout || t.layout->kind() != Layout::Kind::Blocked) return std::nullopt;
  Ring r;
  r.dot = &dot;
  r.operand = operand;
  r.head = head;
  r.staging = *st;
  const Op& yield = *body.terminator();
  for (const Value* v = head;;) {
    if (countUses(body, v) != 1 || std::count(r.chain.begin(), r.chain.end(), size_t(v->index))) return std::nullopt;
    r.chain.push_back(v->index);
    const Value* y = yield.operand(v->index - 1);
    if (y->isRegionArg() && y->owner == &body && y->index > 0) {
      v = y;
      continue;
    }
    if (y->isRegionArg() || y->def->kind != OpKind::Load || y->def->parent != &body || countUses(body, y) != 1)
      return std::nullopt;
    r.nextLoad = y->def;
    break;
  }
  for (size_t c : r.chain) {
    const Value* init = loop.operand(3 + c - 1);
    if (init->isRegionArg() || init->def->kind != OpKind::Load || init->def->parent != loop.parent ||
        countUses(src_.body, init) != 1 || countUses(src_.body, loop.result(c - 1)) != 0)
      return std::nullopt;
    r.firstLoads.push_back(init->def);
  }
  // Every load: x_i's type, no replicas, register runs along the staged rows that cp.async can
  // copy whole, and nothing but zeros where masked off.
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  std::vector<const Op*> loads = r.firstLoads;
  loads.push_back(r.nextLoad);
  // Registers that run across the staged rows (an FMA dot's a, staged transposed) go one 4-byte
  // element per copy.
  r.elementwise = t.layout->order()[0] != 1 - st->rowDim;
  if (r.elementwise && dtypeBytes(t.dtype) != 4) return std::nullopt;
  for (const Op* l : loads) {
    const int64_t vec = r.elementwise ? 1 : l->hasAttr("vec") ? l->intAttr("vec") : 1;
    const int64_t bytes = vec * dtypeBytes(t.dtype);  // one cp.async: 4, 8 or 16 bytes
    if (!(l->result()->type == t) || bytes < 4 || bytes > 16) return std::nullopt;
    if (l->numOperands() > 2 && !isZeroConstant(l->operand(2))) return std::nullopt;
  }
  if (!noReplicas(g)) return std::nullopt;
  const int64_t align = std::max<int64_t>(16, st->align);
  r.slotBytes = (st->bytes + align - 1) / align * align;
  return r;
}

void Lowerer::planRings() {
  walk(src_.body, [&](Op& loop) {
    if (loop.kind != OpKind::For || !loop.hasAttr("pipelined_loads")) return;
    const Region& body = loop.region(0);
    LoopRings lr;
    for (const auto& op : body.ops)
      if (op->kind == OpKind::Dot)
        for (int i = 0; i < 2; ++i)
          if (std::optional<Ring> r = ringFrom(loop, *op, i)) lr.rings.push_back(std::move(*r));
    if (lr.rings.empty()) return;
    lr.ahead = int64_t(lr.rings[0].chain.size());
    auto position = [](const Region& region, const Op* op) {
      size_t i = 0;
      while (region.ops[i].get() != op) ++i;
      return i;
    };
    size_t firstDot = body.ops.size(), lastNext = 0;
    for (const Ring& r : lr.rings) {
      if (int64_t(r.chain.size()) != lr.ahead) return;
      firstDot = std::min(firstDot, position(body, r.dot));
      lastNext = std::max(lastNext, position(body, r.nextLoad));
    }
    if (lastNext > firstDot) return;
    // The loads before the loop, iteration by iteration (the groups' order the waits count on).
    for (const Ring& a : lr.rings)
      for (const Ring& b : lr.rings)
        for (size_t s = 0; s + 1 < a.firstLoads.size(); ++s)
          if (position(*loop.parent, a.firstLoads[s + 1]) < position(*loop.parent, b.firstLoads[s])) return;
    // 4: wgmma dots left in flight across iterations.
    const Op& yield = *body.terminator();
    for (const auto& op : body.ops) {
      if (op->kind != OpKind::Dot) continue;
      DotPlan plan = planDot(*op, src_.numWarps, options_.wgmma);
      if (!plan.wgmma || !tensorCoreStaging(*op, 1) || op->hasAttr("max_imprecise_acc")) continue;
      bool operandsReady = true;
      for (int i = 0; i < 2; ++i) operandsReady = operandsReady && (lr.ringOf(op->operand(size_t(i))) || definedOutside(op->operand(size_t(i)), loop));
      const Value* acc = op->operand(2);
      if (operandsReady && acc->isRegionArg() && acc->owner == &body && acc->index > 0 && countUses(body, acc) == 1 &&
          yield.operand(acc->index - 1) == op->result() && countUses(body, op->result()) == 1)
        lr.inFlightDots.push_back(op.get());
    }
    lr.slots = lr.ahead + (lr.inFlightDots.empty() ? 1 : 2);
    for (const Ring& r : lr.rings) {
      for (const Op* l : r.firstLoads) ringLoadLoop_[l] = &loop;
      ringLoadLoop_[r.nextLoad] = &loop;
    }
    loopRings_[&loop] = std::move(lr);
  });
}

Value* Lowerer::slotIndexAhead(const LoopRings& lr, int64_t ahead) {
  Value* t = addC(lr.slot, ahead);
  Value* wrapped = addC(t, -lr.slots);
  Value* past = b_.create(OpKind::Cmp, {t, constI32(lr.slots)}, {Type::scalar(DType::I1)}, {{"pred", std::string("ge")}})->result();
  return b_.create(OpKind::Select, {past, wrapped, t}, {Type::scalar(DType::I32)})->result();
}

void Lowerer::copyToSlot(const Ring& ring, const Op& load, Value* slotIndex) {
  const Type& t = load.result()->type;
  const OperandStaging& st = ring.staging;
  Value* slotBase = bin(OpKind::Add, ring.base, mulC(slotIndex, ring.slotBytes));
  Value* dst = stagedAddresses(t, slotBase, st.rowDim, st.stride, st.swizzle ? &*st.swizzle : nullptr, st.colBlock,
                               st.blockStride, st.rowMap);
  Value* src = get(load.operand(0));
  std::vector<Value*> operands{splatTo(dst, regsOf(src)), src};
  if (load.numOperands() > 1) operands.push_back(get(load.operand(1)));
  const int64_t vec = !ring.elementwise && load.hasAttr("vec") ? load.intAttr("vec") : 1;
  b_.create(OpKind::CpAsync, operands, {}, {{"vec", vec}});
  b_.create(OpKind::CpAsyncCommit, {}, {});
}

bool Lowerer::lowerRingLoad(const Op& load) {
  auto it = ringLoadLoop_.find(&load);
  if (it == ringLoadLoop_.end()) return false;
  LoopRings& lr = loopRings_.at(it->second);
  for (Ring& r : lr.rings) {
    if (r.nextLoad == &load) {  // 3: held back to the first ring dot
      lr.deferred.push_back(&load);
      return true;
    }
    auto at = std::find(r.firstLoads.begin(), r.firstLoads.end(), &load);
    if (at == r.firstLoads.end()) continue;
    if (!r.base) {  // 1: the ring's buffer, live from here to the loop's end (lowerFor)
      r.base = sharedBase(lr.slots * r.slotBytes,
                          "ring of " + std::to_string(lr.slots) + " slots: " + r.staging.what + ", cp_async " +
                              std::to_string(lr.ahead) + (lr.ahead == 1 ? " iteration" : " iterations") + " ahead",
                          r.staging.align);
      r.buffer = buffers_.size() - 1;
    }
    copyToSlot(r, load, constI32(at - r.firstLoads.begin()));  // 2
    return true;
  }
  return false;
}

}  // namespace tl::lower
