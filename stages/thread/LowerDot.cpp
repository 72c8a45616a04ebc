// Lowering of dot: acc + a @ b, each thread computing the accumulator elements it owns.
//
// Expects: a <M x K> and b <K x N> float tiles of one dtype, acc <M x N x f32>, each with a
// layout (any three layouts); the result has acc's type and layout. Batched: <B x M x K>,
// <B x K x N>, <B x M x N x f32>: the same with the batch coordinate of each accumulator
// register selecting its [M][K] and [K][N] slabs of the staged buffers.
// Guarantees:
//   1. staging: every thread st_shared's the a and b elements it is the first owner of into
//      two buffers, row-major [M][K] and [K][N] ([B][M][K], [B][K][N]; element dtype as loaded),
//      then a barrier;
//   2. a thread-level `for k in [0, K)` carries the accumulator registers; each iteration
//      ld_shared's A[m_r][k] and B[k][n_r] for every accumulator register r (m_r, n_r: its
//      coordinates, index math hoisted before the loop), converts f16/bf16/fp8 to f32, and does
//      `fma(a, b, acc)` register by register;
//   3. a barrier after the loop, before the buffers may be reused.
// The sum runs over k in increasing order like tl-scalar's, but each step is one fused
// multiply-add (tl-scalar rounds the product and the sum separately): results may differ by
// rounding.
#include "thread/LowerCommon.h"

namespace tl::lower {

void Lowerer::lowerDot(const Op& op) {
  const Type &aT = op.operand(0)->type, &bT = op.operand(1)->type, &cT = op.operand(2)->type;
  const int r = aT.rank();  // 2, or 3: batched, dim 0 the batch
  const int64_t B = r == 3 ? aT.shape[0] : 1, M = aT.shape[r - 2], K = aT.shape[r - 1], N = bT.shape[r - 1];
  int bytes = dtypeBytes(aT.dtype);
  Value* aBase = sharedBase(B * M * K * bytes, r == 3 ? "dot operand a [B][M][K]" : "dot operand a [M][K]");
  Value* bBase = sharedBase(B * K * N * bytes, r == 3 ? "dot operand b [B][K][N]" : "dot operand b [K][N]");

  // 1. staging
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

  // 2. the k loop. Row addresses of A and column addresses of B for every accumulator register.
  LayoutGeom gc = LayoutGeom::of(*cT.layout, cT.shape);
  Value* aElem = mulC(coord(gc, r - 2), K);  // &A[b_r][m_r][0]
  if (r == 3) aElem = bin(OpKind::Add, aElem, mulC(coord(gc, 0), M * K));
  Value* aRow = sharedAddr(aElem, bytes, aBase);
  Value* bElem = coord(gc, r - 1);  // &B[b_r][0][n_r]
  if (r == 3) bElem = bin(OpKind::Add, bElem, mulC(coord(gc, 0), K * N));
  Value* bCol = sharedAddr(bElem, bytes, bBase);
  Value* zero = constI32(0);
  Op* loop = b_.forOp(zero, constI32(K), constI32(1), {get(op.operand(2))});
  Region& body = loop->region(0);
  Value* k = body.arg(0);
  Region* outer = b_.region();
  b_.setInsertionPointToEnd(&body);
  Value* c = body.arg(1);
  int64_t n = gc.numRegs;
  Value* aAddr = bin(OpKind::Add, aRow, splatTo(mulC(k, bytes), n));
  Value* bAddr = bin(OpKind::Add, bCol, splatTo(mulC(k, N * bytes), n));
  Value* av = ldShared(aAddr, aT.dtype);
  Value* bv = ldShared(bAddr, bT.dtype);
  if (aT.dtype != DType::F32) {
    av = b_.convert(av, DType::F32);
    bv = b_.convert(bv, DType::F32);
  }
  Value* next = b_.create(OpKind::Fma, {av, bv, c}, {c->type})->result();
  b_.yield({next});
  b_.setInsertionPointToEnd(outer);

  // 3. the buffers may be reused after every thread has finished reading them.
  barrier();
  set(op.result(), loop->result(0));
}

}  // namespace tl::lower
