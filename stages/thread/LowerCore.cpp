// The lowering's core: the driver that walks block IR op by op, the map from block values to
// thread values, and the index math every op family shares (which element each register of
// each thread holds, as thread IR).
//
// Expects: verified block IR with a layout on every tile and Function::numWarps set.
// Guarantees: lowerToThreadIR returns a verified, cleaned-up thread function (see
// thread/Lowering.h); each block op becomes the thread IR its family's file documents. The
// index math is what a CUDA programmer writes: digits of lane_id and warp_id by the layout's
// order and threadsPerWarp / warpsPerCTA, per-register offsets from reg_index, and
// `and (S - 1)` where the layout wraps around a smaller tile (replication). It computes
// exactly Layout::coords (tests/thread/lower_index_test.cpp checks this).
#include <algorithm>

#include "ir/Pass.h"
#include "ir/PassUtils.h"
#include "ir/Verifier.h"
#include "thread/LowerCommon.h"

namespace tl::lower {

// ---------------------------------------------------------------------------------------------
// LayoutGeom

namespace {

// The root-rank shape of a (possibly sliced) layout and which root dim each value dim is.
void expandShape(const Layout& l, const Shape& shape, Shape& full, std::vector<int>& kept) {
  if (l.kind() == Layout::Kind::Blocked) {
    full = shape;
    kept.resize(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) kept[i] = static_cast<int>(i);
    return;
  }
  Shape withDim = shape;
  withDim.insert(withDim.begin() + l.sliceDim(), 1);
  expandShape(*l.parent(), withDim, full, kept);
  kept.erase(kept.begin() + l.sliceDim());
}

}  // namespace

LayoutGeom LayoutGeom::of(const Layout& layout, const Shape& shape) {
  LayoutGeom g;
  g.spt = layout.sizePerThread();
  g.tpw = layout.threadsPerWarp();
  g.wpc = layout.warpsPerCTA();
  g.order = layout.order();
  g.numWarps = layout.numWarps();
  expandShape(layout, shape, g.full, g.kept);
  int R = g.rootRank();
  g.e.assign(R, 1);
  g.tile.assign(R, 1);
  g.regStride.assign(R, 1);
  g.laneStride.assign(R, 1);
  g.warpStride.assign(R, 1);
  for (int d = 0; d < R; ++d) {
    g.tile[d] = int64_t(g.spt[d]) * g.tpw[d] * g.wpc[d];
    if (g.isKept(d)) g.e[d] = std::max<int64_t>(1, (g.full[d] + g.tile[d] - 1) / g.tile[d]) * g.spt[d];
  }
  int64_t rs = 1, ls = 1, ws = 1;
  for (int d : g.order) {
    g.regStride[d] = rs;
    g.laneStride[d] = ls;
    g.warpStride[d] = ws;
    rs *= g.e[d];
    ls *= g.tpw[d];
    ws *= g.wpc[d];
  }
  g.numRegs = rs;
  return g;
}

bool LayoutGeom::isKept(int rootDim) const { return std::find(kept.begin(), kept.end(), rootDim) != kept.end(); }

std::vector<int64_t> LayoutGeom::digits(int64_t reg) const {
  std::vector<int64_t> d(rootRank(), 0);
  for (int dim : order) {
    d[dim] = reg % e[dim];
    reg /= e[dim];
  }
  return d;
}

int64_t LayoutGeom::regOf(const std::vector<int64_t>& digits) const {
  int64_t r = 0;
  for (int d = 0; d < rootRank(); ++d) r += digits[d] * regStride[d];
  return r;
}

std::vector<int64_t> rowMajorStrides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::optional<std::vector<int64_t>> staticRegisterMap(const Type& srcType, const Type& dstType,
                                                      const CoordMap& toSrc) {
  const Layout &sl = *srcType.layout, &dl = *dstType.layout;
  int64_t srcRegs = sl.elemsPerThread(srcType.shape), dstRegs = dl.elemsPerThread(dstType.shape);
  auto strides = rowMajorStrides(srcType.shape);
  std::vector<int64_t> firstReg(static_cast<size_t>(srcType.numel()), -1), result;
  for (int t = 0; t < dl.numThreads(); ++t) {
    // Which of this thread's source registers holds each source element (the first one).
    std::vector<int64_t> touched;
    for (int64_t r = 0; r < srcRegs; ++r) {
      auto c = sl.coords(srcType.shape, t, r);
      int64_t lin = 0;
      for (size_t i = 0; i < c.size(); ++i) lin += c[i] * strides[i];
      if (firstReg[lin] < 0) {
        firstReg[lin] = r;
        touched.push_back(lin);
      }
    }
    bool ok = true;
    for (int64_t r = 0; r < dstRegs && ok; ++r) {
      auto c = toSrc(dl.coords(dstType.shape, t, r));
      int64_t lin = 0;
      for (size_t i = 0; i < c.size(); ++i) lin += c[i] * strides[i];
      int64_t s = firstReg[lin];
      if (s < 0) ok = false;
      else if (t == 0) result.push_back(s);
      else if (result[r] != s) ok = false;
    }
    for (int64_t lin : touched) firstReg[lin] = -1;
    if (!ok) return std::nullopt;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Value mapping and the driver

void Lowerer::fail(const std::string& msg) const {
  throw IRError(cur_ ? cur_->loc : src_.loc, std::string("thread lowering: ") + (cur_ ? mnemonic(cur_->kind) + std::string(": ") : "") + msg);
}

Value* Lowerer::get(const Value* v) const {
  auto it = map_.find(v);
  if (it == map_.end()) fail("operand has no thread value (was it defined by an unsupported op?)");
  return it->second;
}

void Lowerer::set(const Value* blockValue, Value* threadValue) {
  if (threadValue->name.empty()) threadValue->name = blockValue->name;  // the source name, for printing
  map_[blockValue] = threadValue;
}

Type Lowerer::lowerType(const Type& t) const {
  if (t.isScalar()) return t;
  if (!t.layout) fail("tile " + t.str() + " has no layout (run the layout passes first)");
  int64_t n = t.layout->elemsPerThread(t.shape);
  return n == 1 ? t.scalarType() : t.withShape({n});
}

std::unique_ptr<Function> Lowerer::run() {
  dst_ = cloneHeader(src_);
  dst_->level = IRLevel::Thread;
  dst_->sharedBytes = 0;  // set from the allocator's peak at the end
  for (const auto& a : src_.body.args) map_[a.get()] = dst_->body.addArg(a->type, a->name);
  b_.setInsertionPointToEnd(&dst_->body);
  b_.setLoc(src_.loc);
  // The thread's identity, once at the top (cse would merge repeats anyway).
  threadId_ = b_.create(OpKind::ThreadId, {}, {Type::scalar(DType::I32)})->result();
  threadId_->name = "tid";
  lane_ = b_.create(OpKind::LaneId, {}, {Type::scalar(DType::I32)})->result();
  lane_->name = "lane";
  warp_ = b_.create(OpKind::WarpId, {}, {Type::scalar(DType::I32)})->result();
  warp_->name = "warp";
  planRings();
  lowerRegion(src_.body, dst_->body);
  dropTrailingBarriers(dst_->body);
  return std::move(dst_);
}

namespace {

bool touchesShared(const Op& op) {
  switch (op.kind) {
    case OpKind::LdShared:
    case OpKind::StShared:
    case OpKind::CpAsync:
    case OpKind::Ldmatrix:
    case OpKind::Wgmma: return true;
    default: break;
  }
  for (const auto& region : op.regions)
    for (const auto& inner : region->ops)
      if (touchesShared(*inner)) return true;
  return false;
}

}  // namespace

int64_t Lowerer::lastOpIndex() const {
  int64_t n = 0;
  walk(src_.body, [&](const Op&) { ++n; });
  return n - 1;
}

// A barrier the lowering put after a shared buffer's last reads (so that the next op may
// reuse the space) protects nothing when no op of the function touches shared memory after it:
// it is dropped. Only the function's top-level ops are scanned, from the end; a user's
// debug_barrier (it may order global memory) is kept.
void Lowerer::dropTrailingBarriers(Region& body) {
  for (size_t i = body.ops.size(); i-- > 0;) {
    Op& op = *body.ops[i];
    if (touchesShared(op)) return;
    if (op.kind == OpKind::Barrier && !userBarriers_.count(&op)) body.ops.erase(body.ops.begin() + long(i));
  }
}

void Lowerer::lowerRegion(const Region& from, Region& to) {
  // Ops are always appended, so the caller's insertion point is the end of its region.
  Region* saved = b_.region();
  b_.setInsertionPointToEnd(&to);
  for (const auto& op : from.ops) lowerOp(*op);
  b_.setInsertionPointToEnd(saved);
}

void Lowerer::lowerOp(const Op& op) {
  const Op* savedOp = cur_;
  int64_t savedIndex = curIndex_;
  cur_ = &op;
  curIndex_ = nextIndex_++;
  b_.setLoc(op.loc);
  switch (op.kind) {
    case OpKind::Arange: lowerArange(op); break;
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Trans: lowerBroadcastLike(op); break;
    case OpKind::ConvertLayout: lowerConvertLayout(op); break;
    case OpKind::Reshape: lowerReshape(op); break;
    case OpKind::Join: lowerJoin(op); break;
    case OpKind::Split: lowerSplit(op); break;
    case OpKind::Load: lowerLoad(op); break;
    case OpKind::Store: lowerStore(op); break;
    case OpKind::Reduce: lowerReduce(op); break;
    case OpKind::Argmax: lowerArgmax(op); break;
    case OpKind::Scan: lowerScan(op); break;
    case OpKind::Dot: lowerDot(op); break;
    case OpKind::For: lowerFor(op); break;
    case OpKind::If: lowerIf(op); break;
    case OpKind::While: lowerWhile(op); break;
    case OpKind::Condition: b_.condition(get(op.operand(0))); break;
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: lowerAtomic(op); break;
    case OpKind::DebugBarrier: lowerDebugBarrier(op); break;
    case OpKind::DevicePrint: lowerPrint(op); break;
    case OpKind::DeviceAssert: lowerAssert(op); break;
    case OpKind::Yield: lowerYield(op); break;
    case OpKind::Return: b_.ret(); break;
    default: lowerLeafOrElementwise(op); break;
  }
  cur_ = savedOp;
  curIndex_ = savedIndex;
}

// ---------------------------------------------------------------------------------------------
// Index math

Value* Lowerer::constI32(int64_t value, int64_t n) {
  Type t = n == 1 ? Type::scalar(DType::I32) : Type::tile(DType::I32, {n});
  return b_.constInt(t, value);
}

Value* Lowerer::constOf(const Type& scalarType, double f, int64_t i, int64_t n) {
  Type t = n == 1 ? scalarType : scalarType.withShape({n});
  return isFloat(scalarType.dtype) ? b_.constFloat(t, f) : b_.constInt(t, i);
}

Value* Lowerer::constI32s(const std::vector<int64_t>& values) {
  if (values.size() == 1) return constI32(values[0]);
  std::vector<Value*> regs;
  for (int64_t x : values) regs.push_back(constI32(x));
  return b_.create(OpKind::Pack, regs, {Type::tile(DType::I32, {int64_t(values.size())})})->result();
}

Value* Lowerer::splatTo(Value* v, int64_t n) {
  // (A splat of a constant is folded by the cleanup, after the shared-memory bases are set.)
  if (n == 1 || !v->type.isScalar()) return v;
  return b_.splat(v, {n});
}

Value* Lowerer::bin(OpKind kind, Value* a, Value* b) {
  int64_t n = std::max(regsOf(a), regsOf(b));
  return b_.binary(kind, splatTo(a, n), splatTo(b, n));
}

Value* Lowerer::addC(Value* a, int64_t c) { return c == 0 ? a : bin(OpKind::Add, a, constI32(c, regsOf(a))); }
Value* Lowerer::mulC(Value* a, int64_t c) {
  if (c == 1) return a;
  if (c == 0 || isIntConstant(a, 0)) return constI32(0, regsOf(a));
  return bin(OpKind::Mul, a, constI32(c, regsOf(a)));
}
Value* Lowerer::divC(Value* a, int64_t c) { return c == 1 || isIntConstant(a, 0) ? a : bin(OpKind::Div, a, constI32(c, regsOf(a))); }
Value* Lowerer::andC(Value* a, int64_t c) { return isIntConstant(a, 0) ? a : bin(OpKind::And, a, constI32(c, regsOf(a))); }

Value* Lowerer::cmpC(const char* pred, Value* a, int64_t c) { return b_.cmp(pred, a, constI32(c, regsOf(a))); }

Value* Lowerer::andMask(Value* a, Value* b) {
  if (!a) return b;
  if (!b) return a;
  return bin(OpKind::And, a, b);
}

// (lane / laneStride) & (tpw - 1): the lane's coordinate digit along root dim d.
Value* Lowerer::laneDigit(const LayoutGeom& g, int d) {
  if (g.tpw[d] == 1) return constI32(0);
  Value* v = divC(lane_, g.laneStride[d]);
  return g.laneStride[d] * g.tpw[d] == kWarpSize ? v : andC(v, g.tpw[d] - 1);
}

Value* Lowerer::warpDigit(const LayoutGeom& g, int d) {
  if (g.wpc[d] == 1) return constI32(0);
  Value* v = divC(warp_, g.warpStride[d]);
  return g.warpStride[d] * g.wpc[d] == g.numWarps ? v : andC(v, g.wpc[d] - 1);
}

Value* Lowerer::threadBase(const LayoutGeom& g, int d) {
  Value* w = warpDigit(g, d);
  Value* l = laneDigit(g, d);
  Value* t = isIntConstant(w, 0) ? l : isIntConstant(l, 0) ? mulC(w, g.tpw[d]) : bin(OpKind::Add, mulC(w, g.tpw[d]), l);
  return mulC(t, g.spt[d]);
}

Value* Lowerer::regOffsets(const LayoutGeom& g, int d) {
  int64_t n = g.numRegs;
  if (g.e[d] == 1) return constI32(0, n);
  Value* r = b_.create(OpKind::RegIndex, {}, {Type::tile(DType::I32, {n})})->result();
  Value* digit = divC(r, g.regStride[d]);
  if (g.regStride[d] * g.e[d] != n) digit = andC(digit, g.e[d] - 1);
  if (g.e[d] == g.spt[d]) return digit;                    // one repetition: offset = i
  if (g.spt[d] == 1) return mulC(digit, g.tile[d]);       // one element per repetition
  // One statement per op: C++ leaves the order of a call's arguments open (g++ and clang differ),
  // and the IR must not depend on the compiler.
  Value* within = andC(digit, g.spt[d] - 1);
  Value* rep = mulC(divC(digit, g.spt[d]), g.tile[d]);
  return bin(OpKind::Add, rep, within);
}

Value* Lowerer::unwrapped(const LayoutGeom& g, int d) {
  Value* base = threadBase(g, d);
  Value* off = regOffsets(g, d);
  if (isIntConstant(base, 0)) return off;
  if (isIntConstant(off, 0)) return splatTo(base, g.numRegs);
  return bin(OpKind::Add, base, off);
}

Value* Lowerer::coord(const LayoutGeom& g, int valueDim) {
  int d = g.kept[valueDim];
  Value* u = unwrapped(g, d);
  return g.wraps(d) ? andC(u, g.full[d] - 1) : u;
}

Value* Lowerer::linearIndex(const LayoutGeom& g, const Shape& shape) {
  auto strides = rowMajorStrides(shape);
  Value* lin = nullptr;
  for (size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] == 1) continue;
    Value* term = mulC(coord(g, static_cast<int>(j)), strides[j]);
    lin = lin ? bin(OpKind::Add, lin, term) : term;
  }
  return lin ? splatTo(lin, g.numRegs) : constI32(0, g.numRegs);
}

Value* Lowerer::ownerMask(const LayoutGeom& g, int freeWarpDim) {
  Value* m = nullptr;
  for (int d = 0; d < g.rootRank(); ++d) {
    if (g.isKept(d)) {
      if (g.wraps(d)) m = andMask(m, cmpC("lt", unwrapped(g, d), g.full[d]));
      continue;
    }
    if (g.tpw[d] > 1) m = andMask(m, cmpC("eq", laneDigit(g, d), 0));
    if (g.wpc[d] > 1 && d != freeWarpDim) m = andMask(m, cmpC("eq", warpDigit(g, d), 0));
  }
  return m ? splatTo(m, g.numRegs) : nullptr;
}

Value* Lowerer::permuteRegs(Value* v, const std::vector<int64_t>& indices) {
  int64_t n = regsOf(v);
  bool identity = static_cast<int64_t>(indices.size()) == n;
  for (size_t i = 0; identity && i < indices.size(); ++i) identity = indices[i] == static_cast<int64_t>(i);
  if (identity) return v;
  if (n == 1) return splatTo(v, static_cast<int64_t>(indices.size()));  // every index is 0
  Type t = indices.size() == 1 ? v->type.scalarType() : v->type.withShape({int64_t(indices.size())});
  return b_.create(OpKind::Permute, {v}, {t}, {{"indices", indices}})->result();
}

}  // namespace tl::lower

// ---------------------------------------------------------------------------------------------
// The entry point

namespace tl {

std::unique_ptr<Function> lowerToThreadIR(const Function& fn, SharedMemoryReport* report, const LowerOptions& options) {
  if (fn.level != IRLevel::Block) throw IRError(fn.loc, "thread lowering: expects block IR");
  if (fn.numWarps <= 0) throw IRError(fn.loc, "thread lowering: Function::numWarps is not set (run the layout passes first)");
  if (std::string err = verifyFunction(fn); !err.empty())
    throw IRError(fn.loc, "thread lowering: the input block IR does not verify:\n" + err);
  lower::Lowerer lowerer(fn, options);
  auto out = lowerer.run();
  int64_t peak = allocateSharedMemory(lowerer.buffers());
  lowerer.patchSharedBases();
  out->sharedBytes = peak;
  if (std::string err = verifyFunction(*out); !err.empty())
    throw IRError(fn.loc, "thread lowering produced invalid thread IR:\n" + err);
  // Cleanup: the block pipeline's passes are level-agnostic (see docs/thread-ir.md).
  blockPipeline().run(*out);
  if (report) {
    report->buffers = lowerer.buffers();
    report->peakBytes = peak;
  }
  return out;
}

}  // namespace tl
