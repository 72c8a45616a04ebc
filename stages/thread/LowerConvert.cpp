// Lowering of convert_layout (and of broadcasts whose data must change threads): moving a tile
// from one assignment of elements to threads to another, through shared memory.
//
// Expects: a tile with a layout in, the same tile with another layout out. Pointer tiles
// cannot go through shared memory (it holds no pointers): the layout pass must not convert
// them (it can recompute the pointers in the new layout instead); this is an IRError.
// Guarantees:
//   - equal layouts: nothing; a layout change where every thread already holds each element it
//     needs (the same static register mapping for every thread): one `permute`, no memory;
//   - otherwise: every thread st_shared's the registers it is the FIRST OWNER of at the
//     element's row-major offset (replicas are masked off, so no two threads write one address
//     and the race detector has nothing to flag), barrier, every thread ld_shared's the
//     elements of its new registers, barrier (before the buffer may be reused);
//   - a 2-D tile goes through a [R][C + pad] buffer, pad the row padding with the fewest
//     shared-memory wavefronts for both halves (exchangeRowPad, below): 0 unless a pad removes
//     bank conflicts, at most an eighth more memory (or one 4-byte word per row); not with
//     LowerOptions::padExchanges off (--keep-layouts: the row-major buffer the source implies);
//   - both halves move the widest vectors (up to 16 bytes) in which each thread's consecutive
//     registers sit at consecutive, aligned buffer indices (exchangeVec): an accumulator's
//     column pairs as 4- or 8-byte stores, a store layout's 8 x bf16 as 16-byte loads; a store
//     group's registers are all owners or all replicas (one predicate per group, as in PTX).
#include <set>

#include "sim/Banks.h"
#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

// ownerMask's test (LowerCore.cpp), evaluated here for one (thread, register), to choose vector
// widths (coordinates come from Layout::coords, which the lowering's index math matches).
struct GeomAt {
  const LayoutGeom& g;
  int thread;
  int64_t unwrapped(int d, int64_t reg) const {
    const int64_t lane = thread % kWarpSize, warp = thread / kWarpSize;
    const int64_t laneDigit = (lane / g.laneStride[size_t(d)]) % g.tpw[size_t(d)];
    const int64_t warpDigit = (warp / g.warpStride[size_t(d)]) % g.wpc[size_t(d)];
    const int64_t digit = (reg / g.regStride[size_t(d)]) % g.e[size_t(d)];
    const int64_t spt = g.spt[size_t(d)];
    return (warpDigit * g.tpw[size_t(d)] + laneDigit) * spt + digit / spt * g.tile[size_t(d)] + digit % spt;
  }
  bool owner(int64_t reg) const {
    const int64_t lane = thread % kWarpSize, warp = thread / kWarpSize;
    for (int d = 0; d < g.rootRank(); ++d) {
      if (g.isKept(d)) {
        if (g.wraps(d) && unwrapped(d, reg) >= g.full[size_t(d)]) return false;
        continue;
      }
      if (g.tpw[size_t(d)] > 1 && (lane / g.laneStride[size_t(d)]) % g.tpw[size_t(d)] != 0) return false;
      if (g.wpc[size_t(d)] > 1 && (warp / g.warpStride[size_t(d)]) % g.wpc[size_t(d)] != 0) return false;
    }
    return true;
  }
};

}  // namespace

int64_t Lowerer::exchangeVec(const Type& t, const std::vector<int64_t>& strides, int64_t offset, bool stores) const {
  const LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  const int bytes = dtypeBytes(t.dtype);
  const int threads = g.numWarps * kWarpSize;
  auto index = [&](const GeomAt& at, int64_t reg) {
    const std::vector<int64_t> c = t.layout->coords(t.shape, at.thread, reg);
    int64_t i = offset;
    for (int j = 0; j < t.rank(); ++j)
      if (t.shape[size_t(j)] > 1) i += c[size_t(j)] * strides[size_t(j)];
    return i;
  };
  for (int64_t vec = 16 / bytes; vec >= 2; vec /= 2) {
    if (g.numRegs % vec != 0) continue;
    bool ok = true;
    for (int th = 0; th < threads && ok; ++th) {
      const GeomAt at{g, th};
      for (int64_t first = 0; first < g.numRegs && ok; first += vec) {
        const int64_t i0 = index(at, first);
        const bool owns = !stores || at.owner(first);
        ok = i0 % vec == 0;
        for (int64_t e = 1; e < vec && ok; ++e) ok = index(at, first + e) == i0 + e && (!stores || at.owner(first + e) == owns);
      }
    }
    if (ok) return vec;
  }
  return 1;
}

void Lowerer::lowerConvertLayout(const Op& op) {
  const Type &srcT = op.operand(0)->type, &dstT = op.result()->type;
  Value* x = get(op.operand(0));
  if (*srcT.layout == *dstT.layout) {
    set(op.result(), x);
    return;
  }
  auto same = [](const std::vector<int64_t>& c) { return c; };
  if (auto perm = staticRegisterMap(srcT, dstT, same)) {
    set(op.result(), permuteRegs(x, *perm));
    return;
  }
  if (srcT.rank() == 2 && !srcT.isPtr && options_.padExchanges) {
    if (const int64_t pad = exchangeRowPad(srcT, dstT); pad > 0) {
      const int64_t R = srcT.shape[0], C = srcT.shape[1], stride = C + pad;
      const int bytes = dtypeBytes(srcT.dtype);
      Value* base = sharedBase(R * stride * bytes, "convert_layout, rows padded by " + std::to_string(pad));
      LayoutGeom gs = LayoutGeom::of(*srcT.layout, srcT.shape);
      Value* mask = ownerMask(gs);
      Value* idx = bin(OpKind::Add, mulC(coord(gs, 0), stride), coord(gs, 1));
      stShared(sharedAddr(splatTo(idx, gs.numRegs), bytes, base), x, mask, exchangeVec(srcT, {stride, 1}, 0, true));
      barrier();
      set(op.result(), readExchanged(base, dstT, {stride, 1}, 0));
      return;
    }
  }
  std::vector<int> dims;
  for (int j = 0; j < srcT.rank(); ++j) dims.push_back(j);
  set(op.result(), exchangeViaShared(x, srcT, dstT, dims, "convert_layout"));
}

// Wavefronts of the stores (each register of every warp: the first owners of its elements) and
// loads (each register of every warp) for row stride C + pad, counted with the simulator's bank
// model (sim/Banks.h, the one tl-sim reports), for pad in 0, 1, 2, 4, ... words while the buffer
// grows by at most an eighth (one word per row is always allowed); the fewest wins, the smaller
// pad on ties. The accesses are st_shared / ld_shared of the vectors exchangeVec allows at that
// stride, as lowered above (a pad that breaks a vector's alignment costs it its width).
int64_t Lowerer::exchangeRowPad(const Type& srcT, const Type& dstT) const {
  const int64_t R = srcT.shape[0], C = srcT.shape[1];
  const int bytes = dtypeBytes(srcT.dtype);
  if (bytes > 4 || R < 2) return 0;
  const int threads = src_.numWarps * kWarpSize;
  const int64_t srcRegs = LayoutGeom::of(*srcT.layout, srcT.shape).numRegs;
  const int64_t dstRegs = LayoutGeom::of(*dstT.layout, dstT.shape).numRegs;
  // Each (thread, register)'s element, once; the stores skip replicas.
  auto elements = [&](const Type& t, int64_t regs, bool firstOwners) {
    std::vector<std::vector<std::pair<int64_t, int64_t>>> at(size_t(threads), std::vector<std::pair<int64_t, int64_t>>(size_t(regs), {-1, -1}));
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int th = 0; th < threads; ++th)
      for (int64_t r = 0; r < regs; ++r) {
        auto c = t.layout->coords(t.shape, th, r);
        std::pair<int64_t, int64_t> e{c[0], c[1]};
        if (!firstOwners || seen.insert(e).second) at[size_t(th)][size_t(r)] = e;
      }
    return at;
  };
  const auto stores = elements(srcT, srcRegs, true), loads = elements(dstT, dstRegs, false);
  // One access per group of `vec` registers, at its first element.
  auto wavefronts = [&](const std::vector<std::vector<std::pair<int64_t, int64_t>>>& at, int64_t regs, int64_t stride, int64_t vec) {
    int64_t total = 0;
    for (int w = 0; w < src_.numWarps; ++w)
      for (int64_t r = 0; r < regs; r += vec) {
        WarpAccess a;
        a.space = MemSpace::Shared;
        a.bytes = uint8_t(bytes * vec);
        for (int l = 0; l < kWarpSize; ++l) {
          auto [row, col] = at[size_t(w * kWarpSize + l)][size_t(r)];
          if (row < 0) continue;
          a.activeMask |= 1u << l;
          a.addr[size_t(l)] = uint64_t((row * stride + col) * bytes);
        }
        if (a.activeMask) total += banks(a).wavefronts;
      }
    return total;
  };
  const int64_t wordElems = 4 / bytes;
  int64_t best = 0, bestCost = -1;
  for (int64_t words = 0; words <= 32; words = words ? words * 2 : 1) {
    const int64_t pad = words * wordElems;
    if (words > 1 && R * pad * 8 > R * C) break;
    const int64_t stride = C + pad;
    const int64_t cost = wavefronts(stores, srcRegs, stride, exchangeVec(srcT, {stride, 1}, 0, true)) +
                         wavefronts(loads, dstRegs, stride, exchangeVec(dstT, {stride, 1}, 0, false));
    if (bestCost < 0 || cost < bestCost) {
      best = pad;
      bestCost = cost;
    }
  }
  return best;
}

Value* Lowerer::exchangeViaShared(Value* regs, const Type& srcT, const Type& dstT,
                                  const std::vector<int>& srcDimOfDst, const std::string& purpose) {
  // Destination dim j advances the source's row-major index by the stride of srcDimOfDst[j].
  auto strides = rowMajorStrides(srcT.shape);
  std::vector<int64_t> read;
  for (int j = 0; j < dstT.rank(); ++j) {
    int s = srcDimOfDst[j];
    read.push_back(s < 0 || srcT.shape[s] == 1 ? 0 : strides[s]);
  }
  return exchangeLinear(regs, srcT, dstT, read, 0, purpose);
}

Value* Lowerer::exchangeLinear(Value* regs, const Type& srcT, const Type& dstT, const std::vector<int64_t>& readStrides,
                               int64_t readOffset, const std::string& purpose) {
  if (srcT.isPtr)
    fail("cannot move a pointer tile " + srcT.str() + " between threads (shared memory holds no pointers); "
         "the layout pass should recompute the pointers in the new layout");
  int bytes = dtypeBytes(srcT.dtype);
  Value* base = sharedBase(srcT.numel() * bytes, purpose);
  LayoutGeom gs = LayoutGeom::of(*srcT.layout, srcT.shape);
  // (One op-making call per statement: C++ leaves the order of arguments open, and the IR must
  // not depend on the compiler.)
  Value* mask = ownerMask(gs);
  stShared(sharedAddr(linearIndex(gs, srcT.shape), bytes, base), regs, mask, exchangeVec(srcT, rowMajorStrides(srcT.shape), 0, true));
  barrier();
  return readExchanged(base, dstT, readStrides, readOffset);
}

Value* Lowerer::readExchanged(Value* base, const Type& dstT, const std::vector<int64_t>& readStrides, int64_t readOffset) {
  int bytes = dtypeBytes(dstT.dtype);
  LayoutGeom gd = LayoutGeom::of(*dstT.layout, dstT.shape);
  Value* lin = nullptr;
  for (int j = 0; j < dstT.rank(); ++j) {
    if (readStrides[j] == 0 || dstT.shape[j] == 1) continue;
    Value* term = mulC(coord(gd, j), readStrides[j]);
    lin = lin ? bin(OpKind::Add, lin, term) : term;
  }
  lin = lin ? addC(lin, readOffset) : constI32(readOffset, gd.numRegs);
  Value* r = ldShared(sharedAddr(splatTo(lin, gd.numRegs), bytes, base), dstT.dtype, nullptr,
                      exchangeVec(dstT, readStrides, readOffset, false));
  barrier();
  return r;
}

}  // namespace tl::lower
