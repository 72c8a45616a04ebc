// Lowering of dot: acc + a @ b, each thread computing the accumulator elements it owns.
//
// Two forms, chosen by the accumulator's layout (planDot, stages/thread/Layouts.h, decided it in
// assign-layouts):
//
// A. Tensor cores, when acc has the mma accumulator layout (ir/MmaLayout.h).
// Expects: 2-D a <M x K>, b <K x N> of f16 / bf16 / f8e4m3 / f8e5m2, or f32 with precision
// "tf32" or "tf32x3"; acc <M x N x f32> (or x f16 for f16 inputs: out_dtype=tl.float16, the mma
// ...f16.f16.f16.f16 form) in mmaAccumulatorLayout(M, N, numWarps) = #blocked<spt=[1,2],
// tpw=[8,4], wpc=[W0,W1], order=[1,0]>; K a multiple of the instruction's k.
// Guarantees:
//   1. staging (before the loop, once, for an operand computed outside the loop whose body the
//      dot is at the top of; its buffer is then live for the whole loop): every thread
//      st_shared's the a and b elements it is the first owner of (vector
//      stores of up to 16 bytes where its registers run along a row), a as [M][K] and b as
//      [K][N] (f16 / bf16) with the 16-byte-chunk XOR swizzle (Swizzle below: the 8 rows of one
//      ldmatrix and the 8 stores of one wavefront fall in 8 different bank groups), or, where a
//      row is not a power of two of bytes, as [M][K + pad] and [K][N + pad]; a 16-bit b whose
//      registers run along k (a blocked layout with order[0] = 0: attention's k^T) as [N][K]
//      (swizzled or padded the same way), so its stores are vectors too; b transposed as
//      [N][K + pad] for tf32 and fp8; pad is 16 bytes of elements (the fragment loads are then
//      conflict-free, the stores of rows shorter than 128 bytes not); then a barrier;
//      A 16-bit a whose layout is the accumulator layout with every warp along M (wpc [W0, 1],
//      the dot's own W0 and W1 = 1: a chained dot's p, planDot) is not staged: its registers are
//      the A fragments (step 2), and the k steps are unrolled.
//   2. per k step of the instruction's k (a thread-level for, or unrolled when K/k <= 8): warp
//      (w0, w1) loads, for each of its M/(16*W0) m-tiles, the A fragment of the tile's 16 rows
//      (rows (2i)*8*W0 + 8*w0 + g and (2i+1)*8*W0 + 8*w0 + g, g = lane/4: exactly the rows its
//      accumulator registers hold), and for each of its N/(8*W1) n-tiles the B fragment of the
//      tile's 8 columns: f16 / bf16 with ldmatrix.x4 (A) and ldmatrix.x4.trans (two n-tiles of
//      B; x2 for an odd last one; without .trans from a [N][K] b), tf32 / fp8 with ld_shared of kRun consecutive elements (4
//      bytes) in the ISA's element order (f32 as it is: the tensor core reads it as tf32); then one `mma` per
//      (m-tile, n-tile), the C fragment being 4 of the accumulator's registers (the register
//      map is derived from Layout::coords and the ISA's C table, and checked for every lane);
//      tf32x3 (Triton's 3xTF32): each f32 fragment x also gives lo = x - cvt_tf32(x) (exact in
//      f32: x = hi + lo, hi being what the tensor core reads of x; 0 for an infinite x, whose
//      difference is NaN; Triton masks the small products' sum instead), and each (m-tile, n-tile)
//      takes three mma, lo_a * b, a * lo_b, then a * b (lo * lo, about 2^-22 of the product, is
//      dropped);
//   3. a barrier after the k steps, before the buffers may be reused (none when no operand was
//      staged in the loop: an operand a load ring copies is read from its slot, LowerRing.cpp).
// The mma adds its k products to the accumulator in one step (the executor: as the H200 does,
// sim/TensorCoreSum.h), so results differ from tl-scalar's sequential f32 sum by its truncation.
//
// B. FMAs, any other layout.
// Expects: a <M x K> and b <K x N> float tiles of one dtype, acc <M x N x f32>, each with a
// layout (any three layouts; planDot gives a 2-D acc the register-tile layout
// fmaAccumulatorLayout, ir/Layout.h); the result has acc's type and layout. An f16 acc (f16 inputs,
// out_dtype=tl.float16) is converted to f32 before the loop and back to f16 after it. Batched: <B x M x K>,
// <B x K x N>, <B x M x N x f32>: the same with the batch coordinate of each accumulator
// register selecting its [M][K] and [K][N] slabs of the staged buffers.
// Guarantees:
//   1. staging: every thread st_shared's the a and b elements it is the first owner of into
//      two buffers: 2-D, a transposed as [K][M + pad] (pad: 16 bytes of elements) and b as
//      [K][N] (fmaStaging), with vector stores of up to 16 bytes where the registers run along a
//      row; batched, [B][M][K] and [B][K][N]; element dtype as loaded; then a barrier. 2-D, as
//      the tensor-core forms (stageDotOperands): an operand computed outside the loop the dot is
//      at the top of is staged once, before the loop; one a load ring copies (LowerRing.cpp) is
//      read from its slot, not staged;
//   2. a thread-level `for k in [0, K)` carries the accumulator registers; each iteration
//      ld_shared's A[m][k] and B[k][n] for the rows m and columns n of the accumulator
//      registers (2-D, the layout not wrapping: each distinct row and column once, A's
//      consecutive rows and B's consecutive columns as vector loads, then permutes to the
//      registers; otherwise once per register), converts f16/bf16/fp8 to f32 (f32 with
//      precision "tf32": cvt_tf32, its low mantissa bits dropped), and does
//      `fma(a, b, acc)` register by register (index math hoisted before the loop);
//      The loop carries attr unroll = 1 when K <= kFmaUnrollK (tl-ptx unrolls it fully: no
//      loop overhead between the FMAs, and the shared-memory offsets become constants);
//   3. a barrier after the loop, before the buffers may be reused (none when no operand was
//      staged here, in the loop body).
// The sum runs over k in increasing order like tl-scalar's, but each step is one fused
// multiply-add (tl-scalar rounds the product and the sum separately): results may differ by
// rounding.
#include <algorithm>
#include <map>

#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {
constexpr int64_t kFmaUnrollK = 32;  // the largest K whose FMA k loop is unrolled
}  // namespace

void Lowerer::lowerDot(const Op& op) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &cT = op.operand(2)->type;
  if (DotPlan plan = planDot(op, src_.numWarps, options_.wgmma); plan.instr && cT.layout && *cT.layout == *plan.accLayout) {
    if (plan.wgmma) lowerDotWgmma(op, *plan.instr);
    else lowerDotMma(op, *plan.instr, plan.tf32x3);
    return;
  }
  const int r = aT.rank();  // 2, or 3: batched, dim 0 the batch
  const int64_t B = r == 3 ? aT.shape[0] : 1, M = aT.shape[r - 2], K = aT.shape[r - 1], N = bT.shape[r - 1];
  int bytes = dtypeBytes(aT.dtype);
  DotBases bases;
  // 2-D: a transposed, [K][M + pad] (fmaStaging), so a row of a is aK elements after the previous k.
  const std::optional<OperandStaging> sa = fmaStaging(op, 0), sb = fmaStaging(op, 1);
  const int64_t aK = r == 2 ? sa->stride : 1;
  Value* aBase;
  Value* bBase;
  if (r == 2) {  // hoisted before the loop or copied by a ring, as the tensor-core forms
    DotStaging st;
    st.aBytes = sa->bytes;
    st.aWhat = sa->what;
    st.bBytes = sb->bytes;
    st.bWhat = sb->what;
    st.stageA = [&](Value* base) { stageOperand(op.operand(0), base, *sa); };
    st.stageB = [&](Value* base) { stageOperand(op.operand(1), base, *sb); };
    bases = stageDotOperands(op, st);
    aBase = bases.a;
    bBase = bases.b;
  } else {
    bases.stagedInLoop = true;
    aBase = sharedBase(B * M * K * bytes, "dot operand a [B][M][K]");
    bBase = sharedBase(B * K * N * bytes, "dot operand b [B][K][N]");
    LayoutGeom ga = LayoutGeom::of(*aT.layout, aT.shape), gb = LayoutGeom::of(*bT.layout, bT.shape);
    // (One op-making call per statement: C++ leaves the order of arguments open, and the IR must
    // not depend on the compiler.)
    Value* maskA = ownerMask(ga);
    Value* valA = get(op.operand(0));
    stShared(sharedAddr(linearIndex(ga, aT.shape), bytes, aBase), valA, maskA);
    Value* maskB = ownerMask(gb);
    Value* valB = get(op.operand(1));
    stShared(sharedAddr(linearIndex(gb, bT.shape), bytes, bBase), valB, maskB);
    barrier();
  }

  // 2. the k loop, over the addresses of the A row and B column values the thread loads.
  LayoutGeom gc = LayoutGeom::of(*cT.layout, cT.shape);
  FmaOperands ops;
  if (r == 2 && cT.layout->kind() == Layout::Kind::Blocked && !gc.wraps(0) && !gc.wraps(1)) {
    ops = distinctFmaOperands(op, gc, aBase, bBase);
  } else {  // one A and one B value per accumulator register
    Value* aElem = r == 2 ? coord(gc, 0) : mulC(coord(gc, r - 2), K);  // &A[0][m_r] (2-D, transposed), &A[b_r][m_r][0]
    if (r == 3) aElem = bin(OpKind::Add, aElem, mulC(coord(gc, 0), M * K));
    ops.aAddr = sharedAddr(aElem, bytes, aBase);
    Value* bElem = coord(gc, r - 1);  // &B[b_r][0][n_r]
    if (r == 3) bElem = bin(OpKind::Add, bElem, mulC(coord(gc, 0), K * N));
    ops.bAddr = sharedAddr(bElem, bytes, bBase);
  }
  Value* zero = constI32(0);
  Value* hi = constI32(K);
  Value* one = constI32(1);
  // An f16 accumulator (out_dtype=tl.float16) is carried in f32 on FMAs and rounded at the end.
  const bool f16Acc = cT.dtype == DType::F16;
  Value* acc0 = get(op.operand(2));
  if (f16Acc) acc0 = b_.convert(acc0, DType::F32);
  Op* loop = b_.forOp(zero, hi, one, {acc0});
  if (K <= kFmaUnrollK) loop->setAttr("unroll", int64_t(1));
  Region& body = loop->region(0);
  Value* k = body.arg(0);
  Region* outer = b_.region();
  b_.setInsertionPointToEnd(&body);
  Value* c = body.arg(1);
  Value* aAddr = bin(OpKind::Add, ops.aAddr, splatTo(mulC(k, aK * bytes), regsOf(ops.aAddr)));
  Value* bAddr = bin(OpKind::Add, ops.bAddr, splatTo(mulC(k, N * bytes), regsOf(ops.bAddr)));
  Value* av = ldShared(aAddr, aT.dtype, nullptr, ops.aVec);
  Value* bv = ldShared(bAddr, bT.dtype, nullptr, ops.bVec);
  if (aT.dtype != DType::F32) {
    av = b_.convert(av, DType::F32);
    bv = b_.convert(bv, DType::F32);
  } else if (const std::string* p = op.strAttrIf("precision"); p && *p == "tf32") {
    av = b_.create(OpKind::CvtTf32, {av}, {av->type})->result();
    bv = b_.create(OpKind::CvtTf32, {bv}, {bv->type})->result();
  }
  if (!ops.aIdx.empty()) av = permuteRegs(av, ops.aIdx);
  if (!ops.bIdx.empty()) bv = permuteRegs(bv, ops.bIdx);
  Value* next = b_.create(OpKind::Fma, {av, bv, c}, {c->type})->result();
  b_.yield({next});
  b_.setInsertionPointToEnd(outer);

  // 3. the buffers may be reused after every thread has finished reading them (a buffer
  // staged before the loop, or a ring's slot, is not reused in the loop: no barrier).
  if (bases.stagedInLoop) barrier();
  set(op.result(), f16Acc ? b_.convert(loop->result(0), DType::F16) : loop->result(0));
}

}  // namespace tl::lower

namespace tl::lower {

// Stores a dot operand (a tile of the block IR) into shared memory at index
// coord(rowDim) * stride + coord(1 - rowDim), each element by its first owner; consecutive
// registers that are consecutive along dim 1 - rowDim go as one vector store of up to 16 bytes.
// With a swizzle, element (r, c) goes to r * stride + ((c / E) ^ x(r)) * E + c % E instead, E
// the elements of a 16-byte chunk (a vector store stays inside one chunk).
Value* Lowerer::stagedAddresses(const Type& t, Value* base, int rowDim, int64_t stride, const Swizzle* swizzle,
                                int64_t colBlock, int64_t blockStride, const std::function<Value*(Value*)>& rowMap) {
  const int colDim = 1 - rowDim, bytes = dtypeBytes(t.dtype);
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  Value* col = coord(g, colDim);
  Value* row = coord(g, rowDim);
  if (rowMap) row = rowMap(row);
  Value* block = nullptr;
  if (colBlock > 0) {
    block = mulC(divC(col, colBlock), blockStride);
    col = andC(col, colBlock - 1);
  }
  if (swizzle) {
    Value* chunk = bin(OpKind::Xor, divC(col, swizzle->elems), swizzleXor(*swizzle, row));
    Value* within = andC(col, swizzle->elems - 1);
    col = bin(OpKind::Add, mulC(chunk, swizzle->elems), within);
  }
  Value* idx = bin(OpKind::Add, mulC(row, stride), col);
  if (block) idx = bin(OpKind::Add, idx, block);
  return sharedAddr(idx, bytes, base);
}

void Lowerer::stageOperand(const Value* operand, Value* base, int rowDim, int64_t stride, const Swizzle* swizzle,
                           int64_t colBlock, int64_t blockStride, const std::function<Value*(Value*)>& rowMap) {
  const Type& t = operand->type;
  const int colDim = 1 - rowDim, bytes = dtypeBytes(t.dtype);
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  Value* mask = ownerMask(g);
  Value* addr = stagedAddresses(t, base, rowDim, stride, swizzle, colBlock, blockStride, rowMap);
  Value* value = get(operand);
  int64_t vec = 1;
  if (t.layout->kind() == Layout::Kind::Blocked && t.layout->order()[0] == colDim)
    while (vec * 2 <= t.layout->sizePerThread()[size_t(colDim)] && vec * 2 * bytes <= 16 && vec * 2 <= t.shape[size_t(colDim)]) vec *= 2;
  const int64_t n = regsOf(value);
  std::vector<Value*> operands{splatTo(addr, n), value};
  if (mask) operands.push_back(splatTo(mask, n));
  b_.create(OpKind::StShared, operands, {}, {{"vec", n == 1 ? int64_t(1) : vec}});
}

void Lowerer::stageOperand(const Value* operand, Value* base, const OperandStaging& s) {
  stageOperand(operand, base, s.rowDim, s.stride, s.swizzle ? &*s.swizzle : nullptr, s.colBlock, s.blockStride, s.rowMap);
}

// Form B, 2-D: a transposed as [K][M + pad] (a thread's consecutive accumulator rows are then
// consecutive in shared memory, vector loads as b's columns; the pad, 16 bytes of elements,
// halves the bank conflicts of its scalar staging stores), b as [K][N].
std::optional<Lowerer::OperandStaging> Lowerer::fmaStaging(const Op& dot, int operand) {
  const Type &aT = dot.operand(0)->type, &bT = dot.operand(1)->type;
  if (aT.rank() != 2) return std::nullopt;
  const int64_t M = aT.shape[0], K = aT.shape[1], N = bT.shape[1];
  const int bytes = dtypeBytes(aT.dtype);
  OperandStaging s;
  s.rowDim = operand == 0 ? 1 : 0;
  s.stride = operand == 0 ? M + 16 / bytes : N;
  s.bytes = K * s.stride * bytes;
  s.what = operand == 0 ? "dot operand a, transposed [K][M + pad]" : "dot operand b [K][N]";
  return s;
}

std::optional<Lowerer::OperandStaging> Lowerer::dotStaging(const Op& dot, int operand) {
  const Type& cT = dot.operand(2)->type;
  DotPlan plan = planDot(dot, src_.numWarps, options_.wgmma);
  if (plan.instr && cT.layout && *cT.layout == *plan.accLayout) return tensorCoreStaging(dot, operand);
  return fmaStaging(dot, operand);
}

std::optional<Lowerer::OperandStaging> Lowerer::tensorCoreStaging(const Op& dot, int operand) {
  const Type& cT = dot.operand(2)->type;
  DotPlan plan = planDot(dot, src_.numWarps, options_.wgmma);
  if (!plan.instr || !cT.layout || !(*cT.layout == *plan.accLayout)) return std::nullopt;
  return plan.wgmma ? wgmmaStaging(dot, operand) : mmaStaging(dot, operand);
}

// The swizzle (LowerCommon.h): a row of rowLen * bytes = L bytes, a power of two. An ldmatrix
// reads one 16-byte chunk from each of 8 consecutive rows, and a warp's 16-byte stores go 8 at a
// time along the rows; shared memory serves 128 bytes (32 banks of 4) per wavefront. Rows of L <
// 128 bytes share a line (P = 128 / L rows per line, C = L / 16 chunks each); longer rows span
// lines (P = 1, C = 8: the XOR touches the chunk's low 3 bits). x(r) = (r / P) % C makes the 8
// rows' chunks land in 8 different 16-byte bank groups, and keeps 8 consecutive chunks distinct,
// without the padding (the pad makes the stores of rows shorter than 128 bytes conflict).
std::optional<Lowerer::Swizzle> Lowerer::Swizzle::of(int64_t rowLen, int bytes) {
  const int64_t L = rowLen * bytes;
  if (L < 16 || (L & (L - 1)) != 0) return std::nullopt;
  Swizzle sw;
  sw.rowLen = rowLen;
  sw.elems = 16 / bytes;
  sw.rowsPerLine = L < 128 ? 128 / L : 1;
  sw.chunksPerLine = std::min<int64_t>(L / 16, 8);
  return sw;
}

Value* Lowerer::swizzleXor(const Swizzle& sw, Value* row) {
  if (sw.chunksPerLine == 1) return constI32(0);
  return andC(divC(row, sw.rowsPerLine), sw.chunksPerLine - 1);
}

// Form B, 2-D, the accumulator's layout not wrapping: each distinct A row value and B column
// value the thread needs once per k (a thread with an R x C patch of registers loads R + C
// values for R x C FMAs, not 2 R C), A's consecutive rows (a is staged transposed, aK
// elements per k) and B's consecutive columns as vector loads of up to 16 bytes, moved to the
// accumulator's registers by permutes (free: register renaming).
Lowerer::FmaOperands Lowerer::distinctFmaOperands(const Op& op, const LayoutGeom& gc, Value* aBase, Value* bBase) {
  const Type& bT = op.operand(1)->type;
  const int bytes = dtypeBytes(bT.dtype);
  // Each register's row and column offset from the thread's base (lane-independent: no wrap),
  // and the sorted distinct offsets.
  auto offsets = [&](int d, std::vector<int64_t>& distinct, std::vector<int64_t>& index) {
    std::vector<int64_t> of;
    for (int64_t reg = 0; reg < gc.numRegs; ++reg) {
      const int64_t digit = gc.digits(reg)[size_t(d)];
      of.push_back(digit / gc.spt[size_t(d)] * gc.tile[size_t(d)] + digit % gc.spt[size_t(d)]);
    }
    distinct = of;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (int64_t o : of) index.push_back(std::lower_bound(distinct.begin(), distinct.end(), o) - distinct.begin());
  };
  FmaOperands ops;
  std::vector<int64_t> rows, cols;
  offsets(0, rows, ops.aIdx);
  offsets(1, cols, ops.bIdx);
  // Rows and columns come in runs of spt consecutive offsets starting at multiples of spt: vectors.
  auto vecOf = [&](int d, size_t distinct) {
    int64_t vec = 1;
    while (vec * 2 <= gc.spt[size_t(d)] && vec * 2 * bytes <= 16 && int64_t(distinct) % (vec * 2) == 0) vec *= 2;
    return distinct == 1 ? int64_t(1) : vec;
  };
  ops.aVec = vecOf(0, rows.size());
  ops.bVec = vecOf(1, cols.size());
  auto scaled = [](std::vector<int64_t> v, int64_t by) {
    for (int64_t& x : v) x *= by;
    return v;
  };
  Value* aThread = sharedAddr(threadBase(gc, 0), bytes, aBase);  // &A^T[0][row base]
  Value* rowOffs = constI32s(scaled(rows, bytes));
  ops.aAddr = bin(OpKind::Add, splatTo(aThread, int64_t(rows.size())), rowOffs);
  Value* bThread = sharedAddr(threadBase(gc, 1), bytes, bBase);           // &B[0][col base]
  Value* colOffs = constI32s(scaled(cols, bytes));
  ops.bAddr = bin(OpKind::Add, splatTo(bThread, int64_t(cols.size())), colOffs);
  return ops;
}

// The register of each C fragment element of an M x N tile in the accumulator layout (wpc
// [W0, w1]), per (m-tile i, n-tile j, element e) at (i * N/(8 w1) + j) * 4 + e: fragment row r of
// m-tile i is tile row (2i + r/8) 8 W0 + 8 w0 + r % 8 (ir/MmaLayout.h), derived from the layout's
// coords and the same for every lane (checked on the first and the last warp).
std::vector<int64_t> Lowerer::mmaFragmentRegs(const Type& t, const MmaInstr& instr, int W0, int64_t w1, int64_t mTiles,
                                              const char* what) {
  const int64_t nT = t.shape[1] / (8 * w1);
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  std::vector<int64_t> regs(static_cast<size_t>(mTiles * nT * 4), -1);
  for (int warp : {0, int(W0 * w1) - 1})
    for (int l = 0; l < kWarpSize; ++l) {
      const int thread = warp * kWarpSize + l, w0v = warp / int(w1), w1v = warp % int(w1);
      std::map<std::pair<int64_t, int64_t>, int64_t> regAt;
      for (int64_t r = 0; r < g.numRegs; ++r) {
        auto c = t.layout->coords(t.shape, thread, r);
        regAt[{c[0], c[1]}] = r;
      }
      for (int64_t i = 0; i < mTiles; ++i)
        for (int64_t j = 0; j < nT; ++j)
          for (int e = 0; e < 4; ++e) {
            auto [r, c] = mmaFragmentCoord(instr, MmaOperand::C, l, e);
            int64_t row = (2 * i + r / 8) * 8 * W0 + 8 * w0v + r % 8, col = j * 8 * w1 + 8 * w1v + c;
            auto it = regAt.find({row, col});
            int64_t& slot = regs[static_cast<size_t>((i * nT + j) * 4 + e)];
            if (it == regAt.end() || (slot >= 0 && slot != it->second)) fail(std::string("internal: the ") + what + " layout does not hold the mma C fragments");
            slot = it->second;
          }
    }
  if (static_cast<int64_t>(regs.size()) != g.numRegs) fail(std::string("internal: mma C fragments do not cover the ") + what);
  return regs;
}

// Staging of a tensor-core dot's operands (LowerCommon.h DotStaging).
Lowerer::DotBases Lowerer::stageDotOperands(const Op& op, const DotStaging& st) {
  const LoopFrame* loop = enclosingLoop(op);
  // An operand whose loads a ring copies to shared memory is not staged: it is in its slot.
  LoopRings* rings = ringsOfDot(op);
  const Ring* ringA = rings ? rings->ringOf(op.operand(0)) : nullptr;
  const Ring* ringB = rings ? rings->ringOf(op.operand(1)) : nullptr;
  const bool hoistA = st.stageA && !ringA && loop && definedOutside(op.operand(0), *loop->blockFor);
  const bool hoistB = st.stageB && !ringB && loop && definedOutside(op.operand(1), *loop->blockFor);
  const bool hereA = st.stageA && !ringA && !hoistA, hereB = st.stageB && !ringB && !hoistB;
  DotBases bases;
  bases.stagedInLoop = hereA || hereB;
  auto done = [&] {
    if (st.fenceAsync) b_.create(OpKind::FenceProxyAsync, {}, {});
    barrier();
  };
  if (hoistA || hoistB) {
    Region* body = b_.region();
    Region* outer = loop->threadFor->parent;
    size_t at = 0;
    while (outer->ops[at].get() != loop->threadFor) ++at;
    b_.setInsertionPoint(outer, at);
    if (hoistA) {
      bases.a = sharedBaseForLoop(st.aBytes, st.aWhat + ", staged once before the loop", *loop, st.align);
      st.stageA(bases.a);
    }
    if (hoistB) {
      bases.b = sharedBaseForLoop(st.bBytes, st.bWhat + ", staged once before the loop", *loop, st.align);
      st.stageB(bases.b);
    }
    done();
    b_.setInsertionPointToEnd(body);
  }
  // The first ring dot of an iteration waits until only the next L - 1 iterations' groups are
  // pending: every ring's copies of this iteration have landed, and its barrier (after the
  // fence) shows them to every thread and the async proxy. A later ring dot of the iteration
  // (rings->issued: attention's p @ v after q @ k^T) reads slots that already hold: it needs no
  // wait, fence or barrier of its own unless it stages an operand here.
  const bool ringWait = (ringA || ringB) && !rings->issued;
  if (ringWait) b_.create(OpKind::CpAsyncWait, {}, {}, {{"pending", (rings->ahead - 1) * int64_t(rings->rings.size())}});
  if (hereA) {
    bases.a = sharedBase(st.aBytes, st.aWhat, st.align);
    st.stageA(bases.a);
  }
  if (hereB) {
    bases.b = sharedBase(st.bBytes, st.bWhat, st.align);
    st.stageB(bases.b);
  }
  if (hereA || hereB || ringWait) done();
  if (ringA || ringB) {
    // After the barrier every thread is done with the slot iteration i + L will use (R > L
    // slots; R > L + 1 when wgmmas stay in flight): the next loads go out now.
    if (!rings->issued)
      for (const Op* load : rings->deferred)
        for (const Ring& r : rings->rings)
          if (r.nextLoad == load) copyToSlot(r, *load, slotIndexAhead(*rings, rings->ahead));
    rings->issued = true;
    auto slotBase = [&](const Ring& r) { return bin(OpKind::Add, r.base, mulC(rings->slot, r.slotBytes)); };
    if (ringA) bases.a = slotBase(*ringA);
    if (ringB) bases.b = slotBase(*ringB);
  }
  return bases;
}

// Form A (the contract at the top).
void Lowerer::lowerDotMma(const Op& op, const MmaInstr& instr, bool tf32x3) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &cT = op.operand(2)->type;
  const int64_t M = aT.shape[0], K = aT.shape[1], N = bT.shape[1];
  const int bytes = dtypeBytes(aT.dtype);
  const auto& wpc = cT.layout->warpsPerCTA();
  const int W0 = wpc[0], W1 = wpc[1];
  const int64_t mTiles = M / (16 * W0), nTiles = N / (8 * W1), kSteps = K / instr.k;
  const int nA = instr.regs(MmaOperand::A), nB = instr.regs(MmaOperand::B), run = instr.kRun();
  const bool ldm = bytes == 2;                          // f16 / bf16: fragments by ldmatrix
  // b whose registers run along k (attention's k^T, loaded along the head dim) is staged
  // transposed, [N][K], so its stores are vectors along the rows, and its fragments come by
  // ldmatrix without .trans: the rows of an 8 x 8 matrix are then n, its 8 elements k.
  const bool bKMajor = ldm && bT.layout->kind() == Layout::Kind::Blocked && bT.layout->order()[0] == 0 && bT.shape[0] > 1;
  // ldmatrix buffers are swizzled where the rows are a power of two of bytes, else padded.
  const std::optional<Swizzle> swA = ldm ? Swizzle::of(K, bytes) : std::nullopt;
  const std::optional<Swizzle> swB = ldm ? Swizzle::of(bKMajor ? K : N, bytes) : std::nullopt;
  const int64_t pad = 16 / bytes;
  const int64_t SA = swA ? K : K + pad;                 // a: [M][K] swizzled, or [M][K + pad]
  // b: [K][N] (or [N][K] when k-major) swizzled or padded; tf32 / fp8 transposed [N][K + pad].
  const int64_t SB = ldm ? (swB ? (bKMajor ? K : N) : (bKMajor ? K : N) + pad) : K + pad;
  // a already in registers as another dot's accumulator with every warp along M (a chained dot,
  // planDot): its registers are this dot's A fragments (mmaAFromAccumulator), no staging.
  const bool aInRegs = ldm && W1 == 1 && aT.layout && *aT.layout == *Layout::blocked({1, 2}, {8, 4}, {W0, 1}, {1, 0});

  // 1. staging (mmaStaging's layouts). An operand computed outside the loop the dot is in
  // (attention's q) is staged once, before the loop, into a buffer the loop's other ops do not
  // reuse; one a ring copies (LowerRing.cpp) is in its slot.
  const std::optional<OperandStaging> sa = mmaStaging(op, 0), sb = mmaStaging(op, 1);
  DotStaging st;
  st.bBytes = sb->bytes;
  st.bWhat = sb->what;
  if (sa) {
    st.aBytes = sa->bytes;
    st.aWhat = sa->what;
    st.stageA = [&](Value* base) { stageOperand(op.operand(0), base, *sa); };
  }
  st.stageB = [&](Value* base) { stageOperand(op.operand(1), base, *sb); };
  const DotBases bases = stageDotOperands(op, st);
  Value* aBase = bases.a;
  Value* bBase = bases.b;

  // Warp (w0, w1) = (warp / W1, warp % W1); g = lane / 4, t = lane % 4.
  Value* w0 = divC(warp_, W1);
  Value* w1 = W1 > 1 ? andC(warp_, W1 - 1) : constI32(0);
  // Per m-tile (A) and per n-tile or pair of n-tiles (B): the address this lane loads at k step 0.
  std::vector<Value*> aAddr, bAddr;
  Value* aChunk = nullptr;  // swizzled a: the lane's chunk at k step 0, and its row's XOR
  Value* aXor = nullptr;
  Value* bChunk0 = nullptr;  // k-major b: the lane's chunk at k step 0 (k 0-7 or 8-15), its row's XOR
  Value* bXor0 = nullptr;
  if (ldm) {
    // ldmatrix.x4 of A: lane l gives row l % 8 of matrix q = l / 8, which is fragment rows 0-7
    // (q even) or 8-15 (q odd), k 0-7 (q < 2) or 8-15: registers a0..a7 in the ISA's order.
    Value* r8 = andC(lane_, 7);
    Value* q = divC(lane_, 8);
    Value* qLow = andC(q, 1);
    Value* qHigh = divC(q, 2);
    // (One op-making call per statement: C++ leaves the order of arguments open.)
    Value* aRow = bin(OpKind::Add, mulC(w0, 8), r8);
    Value* aHalf = mulC(qLow, 8 * W0);
    aRow = bin(OpKind::Add, aRow, aHalf);
    // Swizzled: the rows' XOR repeats every 8 rows, and the m-tiles are 16 * W0 rows apart, so
    // it is the lane's for every m-tile; the chunk (k / 8) moves with the k step.
    Value* aCol = swA ? constI32(0) : mulC(qHigh, 8);
    if (!aInRegs) {
      Value* aLane = sharedAddr(bin(OpKind::Add, mulC(aRow, SA), aCol), bytes, aBase);
      for (int64_t i = 0; i < mTiles; ++i) aAddr.push_back(addC(aLane, i * 16 * W0 * SA * bytes));
    }
    if (swA && !aInRegs) {
      aChunk = qHigh;
      aXor = swizzleXor(*swA, aRow);
    }
    if (bKMajor) {
      // ldmatrix.x4 of B^T ([N][K]): matrix q is k 0-7 (q even) or 8-15 of n-tile j + q / 2;
      // lane l gives its row l % 8 (an n). Like A: the XOR is the lane's for every tile pair (16
      // W1 rows apart), the chunk moves with the k step.
      Value* bRowN = bin(OpKind::Add, mulC(w1, 8), r8);
      Value* bTileN = mulC(qHigh, 8 * W1);
      bRowN = bin(OpKind::Add, bRowN, bTileN);
      Value* bColK = swB ? constI32(0) : mulC(qLow, 8);
      Value* bLaneT = sharedAddr(bin(OpKind::Add, mulC(bRowN, SB), bColK), bytes, bBase);
      for (int64_t j = 0; j < nTiles; j += 2) bAddr.push_back(addC(bLaneT, j * 8 * W1 * SB * bytes));
      if (swB) {
        bChunk0 = qLow;
        bXor0 = swizzleXor(*swB, bRowN);
      }
    } else {
    // ldmatrix.x4.trans of B ([K][N]): matrix q is k rows 0-7 (q even) or 8-15 of n-tile j + q / 2.
    // Swizzled: the k steps move 16 rows (the XOR repeats every 8), the n-tiles move the chunk.
    Value* bRow = bin(OpKind::Add, r8, mulC(qLow, 8));
    Value* bTile = mulC(qHigh, 8 * W1);
    Value* bCol = bin(OpKind::Add, bTile, mulC(w1, 8));
    if (swB) {
      Value* bRowAddr = mulC(bRow, SB);
      Value* bXor = swizzleXor(*swB, bRow);
      Value* bChunk = divC(bCol, swB->elems);
      for (int64_t j = 0; j < nTiles; j += 2) {
        Value* phys = bin(OpKind::Xor, addC(bChunk, j * 8 * W1 / swB->elems), bXor);
        Value* idx = bin(OpKind::Add, bRowAddr, mulC(phys, swB->elems));
        bAddr.push_back(sharedAddr(idx, bytes, bBase));
      }
    } else {
      Value* bLane = sharedAddr(bin(OpKind::Add, mulC(bRow, SB), bCol), bytes, bBase);
      for (int64_t j = 0; j < nTiles; j += 2) bAddr.push_back(addC(bLane, j * 8 * W1 * bytes));
    }
    }
  } else {
    // ld_shared of kRun consecutive elements. The fragment tables have the shape this relies
    // on: A row g + (row at lane 0), col kRun*t + (col at lane 0); B row kRun*t + (row at lane
    // 0), col g.
    for (int l = 0; l < kWarpSize; ++l) {
      const int gl = l >> 2, tl = l & 3;
      for (int e = 0; e < nA; ++e) {
        auto [r, c] = mmaFragmentCoord(instr, MmaOperand::A, l, e);
        auto [r0, c0] = mmaFragmentCoord(instr, MmaOperand::A, 0, e);
        if (r != r0 + gl || c != c0 + run * tl) fail("internal: unexpected mma A fragment table for " + instr.ptx());
      }
      for (int e = 0; e < nB; ++e) {
        auto [r, c] = mmaFragmentCoord(instr, MmaOperand::B, l, e);
        auto [r0, c0] = mmaFragmentCoord(instr, MmaOperand::B, 0, e);
        if (r != r0 + run * tl || c != gl || c0 != 0) fail("internal: unexpected mma B fragment table for " + instr.ptx());
      }
    }
    Value* g = divC(lane_, 4);
    Value* runT = mulC(andC(lane_, 3), run);
    Value* aThread = bin(OpKind::Add, mulC(bin(OpKind::Add, mulC(w0, 8), g), SA), runT);  // row 8*w0 + g, col kRun*t
    Value* bThread = bin(OpKind::Add, mulC(bin(OpKind::Add, mulC(w1, 8), g), SB), runT);
    Value* aThreadAddr = sharedAddr(aThread, bytes, aBase);
    Value* bThreadAddr = sharedAddr(bThread, bytes, bBase);
    for (int64_t i = 0; i < mTiles; ++i) {
      std::vector<int64_t> off;
      for (int e = 0; e < nA; ++e) {
        auto [r0, c0] = mmaFragmentCoord(instr, MmaOperand::A, 0, e);
        off.push_back(((2 * i + r0 / 8) * 8 * W0 * SA + c0) * bytes);
      }
      Value* o = constI32s(off);
      aAddr.push_back(bin(OpKind::Add, splatTo(aThreadAddr, nA), o));
    }
    for (int64_t j = 0; j < nTiles; ++j) {
      std::vector<int64_t> off;
      for (int e = 0; e < nB; ++e) off.push_back((j * 8 * W1 * SB + mmaFragmentCoord(instr, MmaOperand::B, 0, e).first) * bytes);
      Value* o = constI32s(off);
      bAddr.push_back(bin(OpKind::Add, splatTo(bThreadAddr, nB), o));
    }
  }

  LayoutGeom gc = LayoutGeom::of(*cT.layout, cT.shape);
  const std::vector<int64_t> cReg = mmaFragmentRegs(cT, instr, W0, W1, mTiles, "accumulator");
  // a in registers: its A fragments by chainedAFragment.
  const std::vector<int64_t> pReg = aInRegs ? mmaFragmentRegs(aT, instr, W0, 1, mTiles, "dot operand a") : std::vector<int64_t>{};
  Value* aVal = aInRegs ? get(op.operand(0)) : nullptr;

  auto fragments = [&](Value* acc) {
    std::vector<Value*> cf;
    for (int64_t f = 0; f < mTiles * nTiles; ++f)
      cf.push_back(permuteRegs(acc, {cReg[size_t(f * 4)], cReg[size_t(f * 4 + 1)], cReg[size_t(f * 4 + 2)], cReg[size_t(f * 4 + 3)]}));
    return cf;
  };
  auto accumulator = [&](const std::vector<Value*>& cf) {
    std::vector<Value*> regs(static_cast<size_t>(gc.numRegs));
    for (size_t f = 0; f < cf.size(); ++f)
      for (int e = 0; e < 4; ++e)
        regs[size_t(cReg[f * 4 + size_t(e)])] = b_.create(OpKind::Extract, {cf[f]}, {Type::scalar(cT.dtype)}, {{"index", int64_t(e)}})->result();
    return b_.create(OpKind::Pack, regs, {lowerType(cT)})->result();
  };
  auto loadFragment = [&](Value* addr, int n) {
    Type ty = Type::tile(aT.dtype, {n});
    return b_.create(OpKind::LdShared, {addr}, {ty}, {{"vec", int64_t(run)}, {"dtype", std::string(dtypeName(aT.dtype))}})->result();
  };
  auto ldmatrix = [&](Value* addr, int64_t count, bool trans) {
    return b_.create(OpKind::Ldmatrix, {addr}, {Type::tile(aT.dtype, {2 * count})}, {{"count", count}, {"trans", int64_t(trans)}})->result();
  };
  // tf32x3's low part: x - cvt_tf32(x), and 0 where that is NaN (an infinite x, whose tf32 part
  // is itself; a NaN x stays NaN through its tf32 part), so infinities give IEEE's result.
  auto lowPart = [&](Value* x) {
    Value* hi = b_.create(OpKind::CvtTf32, {x}, {x->type})->result();
    Value* lo = b_.create(OpKind::Sub, {x, hi}, {x->type})->result();
    Value* nan = b_.create(OpKind::Cmp, {lo, lo}, {Type::tile(DType::I1, x->type.shape)}, {{"pred", std::string("ne")}})->result();
    Value* zero = b_.create(OpKind::Constant, {}, {x->type}, {{"value", 0.0}})->result();
    return b_.create(OpKind::Select, {nan, zero, lo}, {x->type})->result();
  };
  // One k step (kIndex: the step's number, an i32 scalar; s: the same as a number when unrolled).
  auto step = [&](Value* kIndex, int64_t s, std::vector<Value*> cf) {
    std::vector<Value*> af, bf;
    if (aInRegs)
      for (int64_t i = 0; i < mTiles; ++i) af.push_back(chainedAFragment(aVal, pReg, K, i, s));
    Value* aOff = mulC(kIndex, instr.k * bytes);
    if (aChunk) {  // swizzled a: the chunk of this k step, XORed with the row's
      Value* chunk = bin(OpKind::Add, aChunk, mulC(kIndex, instr.k / swA->elems));
      aOff = mulC(bin(OpKind::Xor, chunk, aXor), 16);
    }
    Value* bOff = mulC(kIndex, instr.k * (ldm && !bKMajor ? SB : 1) * bytes);
    if (bChunk0) {  // swizzled k-major b: as a
      Value* chunk = bin(OpKind::Add, bChunk0, mulC(kIndex, instr.k / swB->elems));
      bOff = mulC(bin(OpKind::Xor, chunk, bXor0), 16);
    }
    if (ldm) {
      if (!aInRegs)
        for (Value* a : aAddr) af.push_back(ldmatrix(bin(OpKind::Add, a, aOff), 4, false));
      for (size_t p = 0; p < bAddr.size(); ++p) {
        const bool pair = int64_t(2 * p + 1) < nTiles;
        Value* both = ldmatrix(bin(OpKind::Add, bAddr[p], bOff), pair ? 4 : 2, !bKMajor);
        bf.push_back(pair ? permuteRegs(both, {0, 1, 2, 3}) : both);
        if (pair) bf.push_back(permuteRegs(both, {4, 5, 6, 7}));
      }
    } else {
      for (Value* a : aAddr) af.push_back(loadFragment(bin(OpKind::Add, a, splatTo(aOff, nA)), nA));
      for (Value* b : bAddr) bf.push_back(loadFragment(bin(OpKind::Add, b, splatTo(bOff, nB)), nB));
    }
    // tf32x3: x = hi + lo with hi = x's tf32 bits and lo = x - hi (exact in f32); the tensor
    // core reads hi from x itself and lo by truncation too. The small products first, as Triton.
    std::vector<Value*> aLo, bLo;
    if (tf32x3) {
      for (Value* x : af) aLo.push_back(lowPart(x));
      for (Value* x : bf) bLo.push_back(lowPart(x));
    }
    for (int64_t i = 0; i < mTiles; ++i)
      for (int64_t j = 0; j < nTiles; ++j) {
        Value*& c = cf[size_t(i * nTiles + j)];
        if (tf32x3) {
          c = b_.create(OpKind::Mma, {aLo[size_t(i)], bf[size_t(j)], c}, {c->type})->result();
          c = b_.create(OpKind::Mma, {af[size_t(i)], bLo[size_t(j)], c}, {c->type})->result();
        }
        c = b_.create(OpKind::Mma, {af[size_t(i)], bf[size_t(j)], c}, {c->type})->result();
      }
    return cf;
  };

  // 2. the k steps.
  Value* acc = get(op.operand(2));
  if (kSteps <= 8 || aInRegs) {  // a in registers: the k step picks registers, so unrolled
    std::vector<Value*> cf = fragments(acc);
    for (int64_t s = 0; s < kSteps; ++s) cf = step(constI32(s), s, cf);
    acc = accumulator(cf);
  } else {
    Value* zero = constI32(0);
    Value* steps = constI32(kSteps);
    Value* one = constI32(1);
    Op* loop = b_.forOp(zero, steps, one, {acc});
    Region& body = loop->region(0);
    Region* outer = b_.region();
    b_.setInsertionPointToEnd(&body);
    std::vector<Value*> cf = step(body.arg(0), -1, fragments(body.arg(1)));
    b_.yield({accumulator(cf)});
    b_.setInsertionPointToEnd(outer);
    acc = loop->result(0);
  }
  // 3. the buffers may be reused after every thread has finished reading them (a ring's slot is
  // reused only after the barrier of a later iteration's first dot).
  if (bases.stagedInLoop) barrier();
  set(op.result(), acc);
}

// Step 1's layouts (the contract at the top): a [M][K] swizzled or padded; b [K][N], or [N][K]
// when its registers run along k (16-bit), or transposed [N][K + pad] (tf32, fp8).
std::optional<Lowerer::OperandStaging> Lowerer::mmaStaging(const Op& op, int operand) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &cT = op.operand(2)->type;
  const int64_t M = aT.shape[0], K = aT.shape[1], N = bT.shape[1];
  const int bytes = dtypeBytes(aT.dtype);
  const bool ldm = bytes == 2;
  const int W0 = cT.layout->warpsPerCTA()[0], W1 = cT.layout->warpsPerCTA()[1];
  const int64_t pad = 16 / bytes;
  OperandStaging s;
  if (operand == 0) {
    const bool aInRegs = ldm && W1 == 1 && aT.layout && *aT.layout == *Layout::blocked({1, 2}, {8, 4}, {W0, 1}, {1, 0});
    if (aInRegs) return std::nullopt;
    s.swizzle = ldm ? Swizzle::of(K, bytes) : std::nullopt;
    s.stride = s.swizzle ? K : K + pad;
    s.bytes = M * s.stride * bytes;
    s.what = s.swizzle ? "dot operand a [M][K] swizzled (tensor cores)" : "dot operand a [M][K+pad] (tensor cores)";
    return s;
  }
  const bool bKMajor = ldm && bT.layout->kind() == Layout::Kind::Blocked && bT.layout->order()[0] == 0 && bT.shape[0] > 1;
  const bool bRowsN = !ldm || bKMajor;  // b's buffer rows are n
  s.swizzle = ldm ? Swizzle::of(bKMajor ? K : N, bytes) : std::nullopt;
  s.stride = ldm ? (s.swizzle ? (bKMajor ? K : N) : (bKMajor ? K : N) + pad) : K + pad;
  s.rowDim = bRowsN ? 1 : 0;
  s.bytes = (bRowsN ? N : K) * s.stride * bytes;
  s.what = !ldm      ? "dot operand b transposed [N][K+pad] (tensor cores)"
           : bKMajor ? (s.swizzle ? "dot operand b transposed [N][K] swizzled (tensor cores)"
                                  : "dot operand b transposed [N][K+pad] (tensor cores)")
           : s.swizzle ? "dot operand b [K][N] swizzled (tensor cores)"
                       : "dot operand b [K][N+pad] (tensor cores)";
  return s;
}

Value* Lowerer::chainedAFragment(Value* a, const std::vector<int64_t>& pReg, int64_t K, int64_t t, int64_t s) {
  std::vector<int64_t> idx;
  for (int64_t half = 0; half < 2; ++half)
    for (int e = 0; e < 4; ++e) idx.push_back(pReg[size_t((t * (K / 8) + 2 * s + half) * 4 + e)]);
  return permuteRegs(a, idx);
}

}  // namespace tl::lower
