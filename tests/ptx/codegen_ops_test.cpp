// Code generation of single op families, from small thread-IR texts: what LLVM IR and PTX each
// becomes (the mapping of docs/gpu.md), that ptxas accepts it, and the located errors.
#include "codegen_util.h"

namespace tl::ptxtest {
namespace {

// Compiles the text for `arch` and checks that ptxas accepts it (when installed).
PtxResult compileAndAssemble(const std::string& text, const PtxOptions& opts = {}) {
  auto fn = parseThreadIR(text);
  if (!fn) return {};
  PtxResult r = compileToPTX(*fn, opts);
  PtxasInfo info = runPtxas(r.ptx, opts.arch);
  if (info.ran) {
    EXPECT_TRUE(info.ok) << info.log << "\n" << r.ptx;
  }
  return r;
}

TEST(CodegenOps, ElementwiseSemantics) {
  PtxResult r = compileAndAssemble(R"(thread_func @ew(%out: ptr<f32>, %iout: ptr<i32>, %a: f32, %b: f32, %i: i32, %j: i32) num_warps(1) shared_bytes(0) {
  %mx = maximum %a, %b : f32
  %mn = minimum %a, %b : f32
  %p = mul %mx, %a : f32
  %q = add %p, %b : f32
  %e = exp %q : f32
  %l = log %e : f32
  %r = rsqrt %l : f32
  %sq = sqrt %r : f32
  %sg = sigmoid %sq : f32
  %f = fma %sg, %a, %b : f32
  %d0 = div %f, %b : f32
  %dr = div %f, %b {rounding = "rn"} : f32
  %d = add %d0, %dr : f32
  %k = convert %d : i32
  %q1 = div %i, %j : i32
  %r1 = rem %i, %j : i32
  %t = add %q1, %r1 : i32
  %u = add %t, %k : i32
  %lane = lane_id : i32
  %po = addptr %out, %lane : ptr<f32>
  st_global %po, %d {vec = 1}
  %pi = addptr %iout, %lane : ptr<i32>
  st_global %pi, %u {vec = 1}
  %c32 = constant {value = 32} : i32
  %lane2 = add %lane, %c32 : i32
  %po2 = addptr %out, %lane2 : ptr<f32>
  st_global %po2, %mn {vec = 1}
  return
}
)");
  EXPECT_TRUE(contains(r.llvmIR, "@llvm.maximum.f32")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "@llvm.fptosi.sat.i32.f32")) << r.llvmIR;
  EXPECT_TRUE(contains(r.ptx, "max.NaN.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "min.NaN.f32")) << r.ptx;
  // a*b + c stays two rounded ops (mul.rn / add.rn: ptxas may not fuse them); only fma fuses
  EXPECT_TRUE(contains(r.ptx, "mul.rn.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "add.rn.f32")) << r.ptx;
  EXPECT_EQ(count(r.ptx, "fma.rn.f32"), 1u) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ex2.approx.ftz.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "lg2.approx.ftz.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "rsqrt.approx.ftz.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "sqrt.rn.f32")) << r.ptx;
  // `/` is Triton's div.full.f32; div_rn (rounding = "rn") IEEE division
  EXPECT_EQ(count(r.ptx, "div.full.f32"), 1u) << r.ptx;
  EXPECT_EQ(count(r.ptx, "div.rn.f32"), 1u) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "cvt.rzi.s32.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "div.s32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, ".param .f32 ew_param_2")) << r.ptx;  // scalars by value
}

TEST(CodegenOps, PreciseModeAvoidsFlushToZeroAndApproxRsqrt) {
  PtxOptions opts;
  opts.fastMath = false;
  PtxResult r = compileAndAssemble(R"(thread_func @precise(%out: ptr<f32>, %a: f32) num_warps(1) shared_bytes(0) {
  %e = exp %a : f32
  %r = rsqrt %e : f32
  %lane = lane_id : i32
  %p = addptr %out, %lane : ptr<f32>
  st_global %p, %r {vec = 1}
  return
}
)", opts);
  EXPECT_TRUE(contains(r.ptx, "ex2.approx.f32")) << r.ptx;
  EXPECT_FALSE(contains(r.ptx, ".ftz")) << r.ptx;
  EXPECT_FALSE(contains(r.ptx, "rsqrt.approx")) << r.ptx;
}

TEST(CodegenOps, HalfPrecisionComputesInF32AndRounds) {
  PtxResult r = compileAndAssemble(R"(thread_func @half(%x_ptr: ptr<f16>, %out: ptr<bf16>, %N: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c8 = constant {value = 8} : i32
  %base = mul %lane, %c8 : i32
  %ri = reg_index : <8xi32>
  %sb = splat %base : <8xi32>
  %offs = add %sb, %ri : <8xi32>
  %sn = splat %N : <8xi32>
  %mask = cmp %offs, %sn {pred = "lt"} : <8xi1>
  %sp = splat %x_ptr : <8xptr<f16>>
  %ptrs = addptr %sp, %offs : <8xptr<f16>>
  %zero = constant {value = 0.0} : <8xf16>
  %x = ld_global %ptrs, %mask, %zero {vec = 8} : <8xf16>
  %e = exp %x : <8xf16>
  %y = add %e, %x : <8xf16>
  %z = convert %y : <8xbf16>
  %so = splat %out : <8xptr<bf16>>
  %po = addptr %so, %offs : <8xptr<bf16>>
  st_global %po, %z, %mask {vec = 8}
  return
}
)");
  EXPECT_TRUE(contains(r.ptx, "ld.global.v4.b32")) << r.ptx;  // 8 halves = 16 bytes in one access
  EXPECT_TRUE(contains(r.ptx, "st.global.v4.b32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "cvt.rn.bf16.f32") || contains(r.ptx, "cvt.rn.bf16x2.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "cvt.f32.f16")) << r.ptx;
}

TEST(CodegenOps, BooleansAndSixtyFourBitShuffles) {
  PtxResult r = compileAndAssemble(R"(thread_func @bools(%flags: ptr<i1>, %out: ptr<i64>, %v: i64) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %pf = addptr %flags, %lane : ptr<i1>
  %f = ld_global %pf {vec = 1} : i1
  %nf = not %f : i1
  %g = shfl_xor %v {offset = 16} : i64
  %c3 = constant {value = 3} : i32
  %h = shfl_idx %g, %c3 : i64
  %w = convert %nf : i64
  %s = add %h, %w : i64
  %po = addptr %out, %lane : ptr<i64>
  st_global %po, %s {vec = 1}
  st_global %pf, %nf {vec = 1}
  return
}
)");
  EXPECT_EQ(count(r.ptx, "shfl.sync.bfly.b32"), 2u) << r.ptx;  // two 32-bit halves
  EXPECT_EQ(count(r.ptx, "shfl.sync.idx.b32"), 2u) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.global.u8")) << r.ptx;       // an i1 is one byte in memory
  EXPECT_TRUE(contains(r.ptx, "st.global.u8")) << r.ptx;
}

// Predicated accesses of every width class: 1 byte (i1), 2 bytes (f16), 8 and 16 bytes (i64).
TEST(CodegenOps, PredicatedAccessesOfEveryWidth) {
  PtxResult r = compileAndAssemble(R"(thread_func @widths(%b: ptr<i1>, %h: ptr<f16>, %q: ptr<i64>, %N: i32) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c2 = constant {value = 2} : i32
  %base = mul %lane, %c2 : i32
  %ri = reg_index : <2xi32>
  %sb = splat %base : <2xi32>
  %offs = add %sb, %ri : <2xi32>
  %sn = splat %N : <2xi32>
  %mask = cmp %offs, %sn {pred = "lt"} : <2xi1>
  %m1 = cmp %lane, %N {pred = "lt"} : i1
  %pb = addptr %b, %lane : ptr<i1>
  %t = constant {value = 1} : i1
  %vb = ld_global %pb, %m1, %t {vec = 1} : i1
  %nb = not %vb : i1
  st_global %pb, %nb, %m1 {vec = 1}
  %ph = addptr %h, %lane : ptr<f16>
  %vh = ld_global %ph, %m1 {vec = 1} : f16
  %dh = add %vh, %vh : f16
  st_global %ph, %dh, %m1 {vec = 1}
  %sq = splat %q : <2xptr<i64>>
  %pq = addptr %sq, %offs : <2xptr<i64>>
  %vq = ld_global %pq, %mask {vec = 2} : <2xi64>
  %q1 = ld_global %pq, %mask {vec = 1} : <2xi64>
  %sum = add %vq, %q1 : <2xi64>
  st_global %pq, %sum, %mask {vec = 2}
  return
}
)");
  EXPECT_TRUE(contains(r.ptx, "ld.global.u8")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.global.u8")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.global.b16")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.global.v2.b64")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.global.v2.b64")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.global.b64")) << r.ptx;
}

TEST(CodegenOps, LoopsAndDivergentIfs) {
  PtxResult r = compileAndAssemble(R"(thread_func @loop(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %c5 = constant {value = 5} : i32
  %lo = rem %lane, %c5 : i32
  %c1 = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %sum, %n = for %i = %lo to %lane step %c1 iter_args(%acc = %zero, %cnt = %zero) : i32, i32 {
    %a = add %acc, %i : i32
    %odd = and %i, %c1 : i32
    %isodd = cmp %odd, %c1 {pred = "eq"} : i1
    %b = if %isodd : i32 {
      %c100 = constant {value = 100} : i32
      %x = add %a, %c100 : i32
      yield %x
    } else {
      yield %a
    }
    %cnt1 = add %cnt, %c1 : i32
    yield %b, %cnt1
  }
  %c1000 = constant {value = 1000} : i32
  %hi = mul %n, %c1000 : i32
  %r = add %sum, %hi : i32
  %p = addptr %out, %lane : ptr<i32>
  st_global %p, %r {vec = 1}
  return
}
)");
  EXPECT_TRUE(contains(r.llvmIR, "phi i32")) << r.llvmIR;
  EXPECT_TRUE(contains(r.ptx, "bra")) << r.ptx;
}

TEST(CodegenOps, MaskedSharedMemoryAndBarrier) {
  PtxResult r = compileAndAssemble(R"(thread_func @smem(%out: ptr<f32>, %a: f32) num_warps(2) shared_bytes(256) {
  %tid = thread_id : i32
  %c4 = constant {value = 4} : i32
  %addr = mul %tid, %c4 : i32
  %c32 = constant {value = 32} : i32
  %low = cmp %tid, %c32 {pred = "lt"} : i1
  st_shared %addr, %a, %low {vec = 1}
  barrier
  %v = ld_shared %addr, %low {vec = 1, dtype = "f32"} : f32
  %c0 = constant {value = 0} : i32
  %pair = ld_shared %c0 {vec = 1, dtype = "f32"} : f32
  %s = add %v, %pair : f32
  %p = addptr %out, %tid : ptr<f32>
  st_global %p, %s {vec = 1}
  return
}
)");
  EXPECT_TRUE(contains(r.ptx, ".shared .align 16 .b8 tl_shared[256]")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "st.shared.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "ld.shared.f32")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, "bar.sync 	0") || contains(r.ptx, "bar.sync 0")) << r.ptx;
  EXPECT_TRUE(contains(r.ptx, ".maxntid 64, 1, 1")) << r.ptx;
}

// At -O0 the register moves stay visible: shufflevector, extractelement, insertelement.
TEST(CodegenOps, RegisterMovesAndReductions) {
  PtxOptions o0;
  o0.optLevel = 0;
  PtxResult r = compileAndAssemble(R"(thread_func @regs(%out: ptr<i32>) num_warps(1) shared_bytes(0) {
  %lane = lane_id : i32
  %ri = reg_index : <4xi32>
  %sl = splat %lane : <4xi32>
  %v = mul %ri, %sl : <4xi32>
  %pv = permute %v {indices = [3, 2, 1, 0, 0, 1, 2, 3]} : <8xi32>
  %red = reg_reduce %pv {kind = "max", group = 4} : <2xi32>
  %e0 = extract %red {index = 0} : i32
  %e1 = extract %red {index = 1} : i32
  %pk = pack %e1, %e0 : <2xi32>
  %s = reg_reduce %pk {kind = "sum", group = 2} : i32
  %p = addptr %out, %lane : ptr<i32>
  st_global %p, %s {vec = 1}
  return
}
)", o0);
  EXPECT_TRUE(contains(r.llvmIR, "define ptx_kernel void @regs")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "shufflevector <4 x i32>")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "@llvm.smax.i32")) << r.llvmIR;
  EXPECT_TRUE(contains(r.llvmIR, "insertelement <2 x i32>")) << r.llvmIR;
}

// ----- errors ---------------------------------------------------------------------------------

TEST(CodegenErrors, BlockIRIsRejectedAtTheKernel) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath("vector_add"), {}, err);
  ASSERT_TRUE(k) << err.str();
  try {
    compileToPTX(*k->ir);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_TRUE(contains(e.what(), "needs thread IR")) << e.what();
    EXPECT_EQ(e.loc, k->ir->loc);
    EXPECT_TRUE(e.loc.known());
  }
}

TEST(CodegenErrors, UnsupportedArchIsRejected) {
  ThreadCompilation tc = kernelToThreadIR("vector_add", 4);
  PtxOptions opts;
  opts.arch = "sm_75";
  try {
    compileToPTX(*tc.threadIR, opts);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_TRUE(contains(e.what(), "sm_75")) << e.what();
    EXPECT_TRUE(e.loc.known());
  }
  EXPECT_FALSE(isSupportedArch("sm_75"));
  EXPECT_TRUE(isSupportedArch("sm_86"));
}

// Shared memory used by a function that declares none: located at the offending op.
TEST(CodegenErrors, SharedAccessWithoutSharedMemoryIsLocated) {
  auto fn = parseThreadIR(R"(thread_func @nosmem(%out: ptr<f32>, %a: f32) num_warps(1) shared_bytes(0) loc(1:1) {
  %c0 = constant {value = 0} : i32 loc(2:3)
  st_shared %c0, %a {vec = 1} loc(7:9)
  return loc(8:1)
}
)");
  ASSERT_TRUE(fn);
  try {
    compileToPTX(*fn);
    FAIL() << "expected an IRError";
  } catch (const IRError& e) {
    EXPECT_EQ(e.loc.line, 7u) << e.what();
    EXPECT_EQ(e.loc.col, 9u) << e.what();
    EXPECT_TRUE(contains(e.what(), "shared")) << e.what();
  }
}

TEST(Ptxas, ReportsRejectedPtxWithItsLog) {
  TL_REQUIRE_PTXAS();
  PtxasInfo info = runPtxas(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n", "sm_90");
  EXPECT_TRUE(info.ran);
  EXPECT_FALSE(info.ok);
  EXPECT_TRUE(contains(info.log, "error")) << info.log;
}

TEST(Ptxas, MissingPtxasIsSkippedWithAReason) {
  const char* old = std::getenv("TL_PTXAS");
  std::string saved = old ? old : "";
  setenv("TL_PTXAS", "/nonexistent/ptxas", 1);
  PtxasInfo info = runPtxas("", "sm_90");
  if (old) setenv("TL_PTXAS", saved.c_str(), 1);
  else unsetenv("TL_PTXAS");
  EXPECT_FALSE(info.ran);
  EXPECT_TRUE(contains(info.skipped, "/nonexistent/ptxas")) << info.skipped;
}

TEST(Ptxas, CubinIsReturned) {
  TL_REQUIRE_PTXAS();
  PtxResult r = kernelToPTX("vector_add", 4);
  std::string cubin;
  PtxasInfo info = runPtxas(r.ptx, "sm_90", &cubin);
  ASSERT_TRUE(info.ok) << info.log;
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f" "ELF"));
}

}  // namespace
}  // namespace tl::ptxtest
