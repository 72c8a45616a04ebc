// Lowering of dot as warpgroup MMAs (wgmma.mma_async, sm_90a): LowerDot.cpp's form A when the
// target has them (LowerOptions::wgmma) and planDot chose them (wgmmaObstacle: empty).
//
// Expects: 2-D a <M x K>, b <K x N> of f16 / bf16, f32 (the dot's precision tf32) or fp8 (e4m3,
// e5m2), E bytes each; acc <M x N x f32> (or x f16 for f16 inputs: out_dtype=tl.float16, the
// wgmma ...f16.f16.f16 form) in mmaAccumulatorLayout(M, N, W) with every warp along
// M (wpc [W, 1], W = num_warps, a multiple of 4: W / 4 warpgroups); M a multiple of 16 W; rows of
// K E bytes and N 2 bytes (K E for tf32 / fp8) each 32, 64 or a multiple of 128 (N of 256 above
// 256). One wgmma step is kK = 32 / E elements of K (16; tf32 8; fp8 32: mma's k).
// Guarantees:
//   1. staging (stageDotOperands: an operand computed outside the loop the dot is in is staged
//      once, before the loop): a into a K-major buffer, b into an MN-major one ([K][N], rows k)
//      or, when its registers run along k (attention's k^T) or its dtype is tf32 or fp8 (which
//      the ISA reads K-major only; registers along n are then stored one element each), a
//      K-major [N][K] one; each in the PTX ISA's canonical layout (ir/MmaLayout.h) with the
//      S-byte swizzle, S = min(128, the rows' bytes), which is LowerDot.cpp's Swizzle, rows
//      longer than S split into blocks of S bytes of columns; every buffer 1024-byte aligned (the
//      swizzle reads address bits 7-9).
//      a's rows are renumbered: row (2t + h) 8 W + 8 w + g of the tile, which the accumulator
//      layout gives warp w = 4 G + l (fragment row 8 h + g of m-tile t, ir/MmaLayout.h), is
//      staged as row 16 (t W + w) + 8 h + g, i.e. instruction row 16 l + 8 h + g of warpgroup G's
//      wgmma for m-tile t: the wgmma's D fragments are then the accumulator's own registers, in
//      place. Then fence_proxy_async (the tensor cores read through the async proxy) and a barrier.
//      An a in the accumulator layout with every warp along M (a chained dot's p, attention's
//      p v: planDot) is not staged: each wgmma takes its A from registers, the A fragment of
//      (m-tile t, k step s) being the C fragments of a's n-tiles 2s and 2s + 1 (as mma's, LowerDot.cpp),
//      whose rows are the rows of D's registers: nothing is renumbered.
//   2. wgmma_fence; per k step of kK, per m-tile t and per block of up to 256 columns, one wgmma
//      whose registers are the accumulator's C fragments of (t, the block's 8-column n-tiles) in
//      order; then wgmma_commit and wgmma_wait 0 on those registers (its results are them, final
//      then: nothing reads a register a wgmma in flight writes), or wait 1 for a dot LowerRing.cpp
//      leaves in flight across its loop's iterations, whose results only the next wgmma reads.
//      A dot with max_imprecise_acc v (fp8; Triton's max_num_imprecise_acc) does this once per
//      max(1, v / kK) k steps on registers that start at 0, and adds each group's results to the
//      accumulator with f32 adds after its wait 0 (such a dot is never left in flight).
//   3. a barrier after the k steps, before the buffers may be reused (none when no operand was
//      staged in the loop: an operand a load ring copies is read from its slot).
// Each wgmma adds its kK products per element in one step, cutting them toward zero as the
// H200 does (sim/TensorCoreSum.h; fp8 keeps 13 bits of the sum): results differ from
// tl-scalar's sequential f32 sum by that truncation (Compare.cpp's tensor-core tolerance). tf32 inputs are staged as f32 and the tensor core
// ignores their low 13 mantissa bits (as mma.sync's, and tl-scalar's truncToTf32).
#include <algorithm>

#include "thread/LowerCommon.h"

namespace tl::lower {

void Lowerer::lowerDotWgmma(const Op& op, const MmaInstr& instr) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &cT = op.operand(2)->type;
  const int64_t M = aT.shape[0], K = aT.shape[1], N = bT.shape[1];
  const int W = src_.numWarps;
  const int64_t E = dtypeBytes(aT.dtype), kK = instr.k;
  const int64_t mTiles = M / (16 * W), nTiles = N / 8, kSteps = K / kK, nPer = std::min<int64_t>(N, 256);
  const bool bKMajor = wgmmaBKMajor(bT);
  // The swizzle atom's row: S bytes, S / E elements.
  auto atom = [E](int64_t elems) { return std::min<int64_t>(128, elems * E); };
  const int64_t SA = atom(K), SB = atom(bKMajor ? K : N), rowA = SA / E, rowB = SB / E;

  // 1. staging (wgmmaStaging's layouts; an operand a ring copies is in its slot). An a in the
  // accumulator layout (a chained dot's p) stays in registers: its registers are the A fragments.
  const bool aInRegs = E == 2 && aT.layout && *aT.layout == *Layout::blocked({1, 2}, {8, 4}, {W, 1}, {1, 0});
  const std::optional<OperandStaging> sa = wgmmaStaging(op, 0), sb = wgmmaStaging(op, 1);
  DotStaging st;
  st.align = 1024;
  st.fenceAsync = true;
  st.aBytes = sa->bytes;
  st.bBytes = sb->bytes;
  st.aWhat = sa->what;
  st.bWhat = sb->what;
  if (!aInRegs) st.stageA = [&](Value* base) { stageOperand(op.operand(0), base, *sa); };
  st.stageB = [&](Value* base) { stageOperand(op.operand(1), base, *sb); };
  const DotBases bases = stageDotOperands(op, st);
  Value* aBase = bases.a;
  Value* bBase = bases.b;

  // The descriptors' start addresses: warpgroup G's rows of m-tile t begin at staged row
  // 16 (t W + 4 G); a k step moves kK elements along a's (or a k-major b's) rows, or 16 rows of
  // an N-major b.
  Value* aGroup = aInRegs ? nullptr : bin(OpKind::Add, aBase, mulC(divC(warp_, 4), 64 * SA));
  // a in registers: A fragment (m-tile t, k step s) = the C fragments of a's n-tiles 2s and
  // 2s + 1, as for mma (LowerDot.cpp): rows (2t + h) 8 W + 8 w + g, the rows of D's registers.
  const std::vector<int64_t> pReg = aInRegs ? mmaFragmentRegs(aT, instr, W, 1, mTiles, "dot operand a") : std::vector<int64_t>{};
  Value* aVal = aInRegs ? get(op.operand(0)) : nullptr;
  auto aStart = [&](int64_t t, int64_t s) {
    if (aInRegs) return chainedAFragment(aVal, pReg, K, t, s);
    const int64_t k = kK * s;
    return addC(aGroup, (k / rowA) * M * SA + t * W * 16 * SA + (k % rowA) * E);
  };
  auto bStart = [&](int64_t s, int64_t n0) {
    const int64_t k = kK * s;
    if (bKMajor) return addC(bBase, (k / rowB) * N * SB + n0 * SB + (k % rowB) * E);
    return addC(bBase, (n0 / rowB) * K * SB + k * SB);
  };
  std::vector<NamedAttr> attrs{{"n", nPer}, {"dtype", std::string(dtypeName(aT.dtype))}};
  if (!aInRegs) attrs.insert(attrs.end(), {{"a_swizzle", SA}, {"a_sbo", 8 * SA}});
  attrs.insert(attrs.end(), {{"b_swizzle", SB}, {"b_lbo", bKMajor ? int64_t(16) : K * SB}, {"b_sbo", 8 * SB}, {"trans_b", int64_t(!bKMajor)}});

  // 2. the wgmmas, on the accumulator's registers.
  const std::vector<int64_t> cReg = mmaFragmentRegs(cT, instr, W, 1, mTiles, "accumulator");
  Value* acc = get(op.operand(2));
  const int64_t blocks = N / nPer;
  std::vector<std::vector<int64_t>> regsOf(size_t(mTiles * blocks));
  std::vector<Value*> d(size_t(mTiles * blocks));
  for (int64_t t = 0; t < mTiles; ++t)
    for (int64_t nb = 0; nb < blocks; ++nb) {
      std::vector<int64_t>& idx = regsOf[size_t(t * blocks + nb)];
      for (int64_t j = nb * nPer / 8; j < (nb + 1) * nPer / 8; ++j)
        for (int e = 0; e < 4; ++e) idx.push_back(cReg[size_t((t * nTiles + j) * 4 + e)]);
      d[size_t(t * blocks + nb)] = permuteRegs(acc, idx);
    }
  // Left in flight across the loop's iterations (LowerRing.cpp): wait for the previous group.
  const LoopRings* rings = ringsOfDot(op);
  const bool inFlight = rings && std::count(rings->inFlightDots.begin(), rings->inFlightDots.end(), &op);
  // max_imprecise_acc: every `chunk` k steps sum from zero and reach the accumulator by an f32 add.
  const int64_t maxImprecise = op.hasAttr("max_imprecise_acc") ? op.intAttr("max_imprecise_acc") : 0;
  const int64_t chunk = maxImprecise > 0 ? std::max<int64_t>(1, maxImprecise / kK) : kSteps;
  std::vector<Type> dTypes;
  for (Value* v : d) dTypes.push_back(v->type);
  for (int64_t s0 = 0; s0 < kSteps; s0 += chunk) {
    std::vector<Value*> sums = d;
    if (maxImprecise > 0)
      for (size_t f = 0; f < d.size(); ++f) sums[f] = b_.create(OpKind::Constant, {}, {dTypes[f]}, {{"value", 0.0}})->result();
    b_.create(OpKind::WgmmaFence, {}, {});
    for (int64_t s = s0; s < std::min(kSteps, s0 + chunk); ++s)
      for (int64_t t = 0; t < mTiles; ++t)
        for (int64_t nb = 0; nb < blocks; ++nb) {
          Value*& c = sums[size_t(t * blocks + nb)];
          Value* a = aStart(t, s);
          Value* b = bStart(s, nb * nPer);
          c = b_.create(OpKind::Wgmma, {a, b, c}, {c->type}, attrs)->result();
        }
    b_.create(OpKind::WgmmaCommit, {}, {});
    // The wait hands the accumulators on: nothing reads them before it (ptxas would otherwise
    // serialize the wgmmas, C7514, or the registers be read while a wgmma writes them).
    Op* wait = b_.create(OpKind::WgmmaWait, sums, dTypes, {{"pending", int64_t(inFlight ? 1 : 0)}});
    for (size_t f = 0; f < d.size(); ++f)
      d[f] = maxImprecise > 0 ? bin(OpKind::Add, d[f], wait->result(f)) : wait->result(f);
  }
  LayoutGeom gc = LayoutGeom::of(*cT.layout, cT.shape);
  std::vector<Value*> regs(static_cast<size_t>(gc.numRegs));
  for (size_t f = 0; f < d.size(); ++f)
    for (size_t i = 0; i < regsOf[f].size(); ++i)
      regs[size_t(regsOf[f][i])] = b_.create(OpKind::Extract, {d[f]}, {Type::scalar(cT.dtype)}, {{"index", int64_t(i)}})->result();
  acc = b_.create(OpKind::Pack, regs, {lowerType(cT)})->result();

  // 3. the buffers may be reused after every warpgroup's wgmmas have read them (a ring's slot is
  // reused only after the barrier of a later iteration's first dot).
  if (bases.stagedInLoop) barrier();
  set(op.result(), acc);
}

// b is staged K-major ([N][K]) when its registers run along k, or its dtype is tf32 or fp8 (the
// ISA has no MN-major form for them).
bool Lowerer::wgmmaBKMajor(const Type& bT) {
  if (dtypeBytes(bT.dtype) != 2) return true;
  return bT.layout->kind() == Layout::Kind::Blocked && bT.layout->order()[0] == 0 && bT.shape[0] > 1;
}

// Step 1's layouts (the contract at the top).
std::optional<Lowerer::OperandStaging> Lowerer::wgmmaStaging(const Op& op, int operand) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type;
  const int64_t M = aT.shape[0], K = aT.shape[1], N = bT.shape[1];
  const int W = src_.numWarps;
  const bool bKMajor = wgmmaBKMajor(bT);
  const int E = dtypeBytes(aT.dtype);
  auto atom = [E](int64_t elems) { return std::min<int64_t>(128, elems * E); };  // the swizzle atom's row, bytes
  OperandStaging s;
  s.align = 1024;
  if (operand == 0) {
    const int64_t SA = atom(K), rowA = SA / E;
    s.stride = rowA;
    s.swizzle = Swizzle::of(rowA, E);
    s.colBlock = K > rowA ? rowA : 0;
    s.blockStride = M * rowA;
    s.rowMap = [this, W](Value* r) {  // (2t + h) 8W + 8w + g -> 16 (t W + w) + 8 h + g
      Value* g = andC(r, 7);
      Value* w = andC(divC(r, 8), W - 1);
      Value* q = divC(r, 8 * int64_t(W));
      Value* h = andC(q, 1);
      Value* tw = bin(OpKind::Add, mulC(divC(q, 2), W), w);
      Value* row = bin(OpKind::Add, mulC(tw, 16), mulC(h, 8));
      return bin(OpKind::Add, row, g);
    };
    s.bytes = M * K * E;
    s.what = "dot operand a [M][K] K-major, " + std::to_string(SA) + "-byte swizzle (wgmma)";
    return s;
  }
  const int64_t SB = atom(bKMajor ? K : N), rowB = SB / E;
  s.stride = rowB;
  s.swizzle = Swizzle::of(rowB, E);
  s.rowDim = bKMajor ? 1 : 0;
  s.colBlock = (bKMajor ? K : N) > rowB ? rowB : 0;
  s.blockStride = (bKMajor ? N : K) * rowB;
  s.bytes = K * N * E;
  s.what = bKMajor ? "dot operand b transposed [N][K] K-major, " + std::to_string(SB) + "-byte swizzle (wgmma)"
                   : "dot operand b [K][N] N-major, " + std::to_string(SB) + "-byte swizzle (wgmma)";
  return s;
}

}  // namespace tl::lower
