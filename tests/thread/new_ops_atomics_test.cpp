// Atomics in every CPU engine (issue 12), against C++ references of the final memory and the old
// values: tests/thread/kernels/atomic_counter.tl (every element of every program adds to ONE
// counter: the old values must be a permutation of 0..N-1, exactly 0..N-1 in tl-scalar's order;
// max/min/and/or/xor/f32 add into shared slots; xchg; masked-off lanes give 0) and
// atomic_lock.tl (a spin lock from atomic_cas/atomic_xchg around plain loads and stores: every
// program enters once, the count and the tile come out whole). Also: the thread IR's atomics
// are done by one owner per element (never twice by replicas), scalar atomics by thread 0 with
// the old value broadcast, and the executor counts atomic element operations.
#include <algorithm>
#include <fstream>
#include <numeric>

#include "../common/TempDir.h"
#include "new_ops_util.h"

namespace tl::newops {
namespace {

TEST(NewAtomics, CounterAndCombinersEveryEngine) {
  int checked = 0;
  forEachEngine("atomic_counter", {}, nullptr, [&](const Memory& m, const std::string& engine) {
    const Buffer& x = *m.find("x_ptr");
    const int64_t N = x.numel(), B = 64, P = (N + B - 1) / B;
    EXPECT_EQ(m.find("counter_ptr")->getI(0), N) << engine;
    EXPECT_EQ(m.find("programs_ptr")->getI(0), P) << engine;
    std::vector<int64_t> olds;
    for (int64_t i = 0; i < N; ++i) olds.push_back(m.find("old_ptr")->getI(i));
    if (engine == "tl-scalar" || engine == "tl-block") {  // programs in order, elements in row-major order
      for (int64_t i = 0; i < N; ++i) EXPECT_EQ(olds[size_t(i)], i) << engine << " old[" << i << "]";
    }
    std::sort(olds.begin(), olds.end());
    std::vector<int64_t> want(static_cast<size_t>(N));
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(olds, want) << engine << ": the old values of one counter must be 0..N-1, each once";
    for (int s = 0; s < 4; ++s) {
      int64_t mx = -100000, mn = 100000, a = -1, o = 0, xr = 0;
      double fs = 0;
      for (int64_t i = s; i < N; i += 4) {
        const int64_t v = x.getI(i);
        mx = std::max(mx, v);
        mn = std::min(mn, v);
        a &= v | 1;
        o |= v & 0xff;
        xr ^= v;
        fs += double(v) * 0.5;
      }
      EXPECT_EQ(m.find("max_ptr")->getI(s), mx) << engine << " slot " << s;
      EXPECT_EQ(m.find("min_ptr")->getI(s), mn) << engine << " slot " << s;
      EXPECT_EQ(m.find("and_ptr")->getI(s), a) << engine << " slot " << s;
      EXPECT_EQ(m.find("or_ptr")->getI(s), o) << engine << " slot " << s;
      EXPECT_EQ(m.find("xor_ptr")->getI(s), xr) << engine << " slot " << s;
      EXPECT_EQ(m.find("fsum_ptr")->getF(s), fs) << engine << " slot " << s;  // half-integers: exact
    }
    for (int64_t p = 0; p < 16; ++p) {
      EXPECT_EQ(m.find("slot_ptr")->getI(p), p + 100) << engine;
      EXPECT_EQ(m.find("xold_ptr")->getI(p), 7) << engine;  // the initial value
    }
    // masked atomic: 3 lanes per program add 5; the other lanes' old values are 0
    EXPECT_EQ(m.find("m_ptr")->getI(0), 5 * 3 * P) << engine;
    std::vector<int64_t> active;
    for (int64_t i = 0; i < 1024; ++i) {
      const int64_t v = m.find("mold_ptr")->getI(i);
      if (i % B >= 3) EXPECT_EQ(v, 0) << engine << " masked-off lane " << i;
      else active.push_back(v);
    }
    std::sort(active.begin(), active.end());
    for (size_t k = 0; k < active.size(); ++k) EXPECT_EQ(active[k], int64_t(5 * k)) << engine;
    ++checked;
  });
  EXPECT_EQ(checked, 6);
}

TEST(NewAtomics, SpinLockAroundPlainMemory) {
  int checked = 0;
  forEachEngine("atomic_lock", {}, nullptr, [&](const Memory& m, const std::string& engine) {
    const int64_t P = 24, B = 128;
    EXPECT_EQ(m.find("count_ptr")->getI(0), P) << engine;
    EXPECT_EQ(m.find("lock_ptr")->getI(0), 0) << engine << ": released";
    std::vector<int64_t> order;
    for (int64_t i = 0; i < P; ++i) order.push_back(m.find("order_ptr")->getI(i));
    std::vector<int64_t> sorted = order, want(static_cast<size_t>(P));
    std::sort(sorted.begin(), sorted.end());
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(sorted, want) << engine << ": every program enters the critical section once";
    for (int64_t c = 0; c < B; ++c) {
      double acc = 0;
      for (int64_t p = 0; p < P; ++p) acc += double(p * B + c);
      EXPECT_EQ(m.find("acc_ptr")->getF(c), acc) << engine << " acc[" << c << "]";
    }
    // Programs run one after another here, so the lock is always free: no program spins.
    for (int64_t p = 0; p < P; ++p) EXPECT_EQ(m.find("spins_ptr")->getI(p), 0) << engine;
    ++checked;
  });
  EXPECT_EQ(checked, 6);
}

// Replicated elements and scalars: one atomic per element per program in the thread IR, and the
// executor's count of atomic element operations says so.
TEST(NewAtomics, OneOwnerPerElementInTheThreadIR) {
  auto k = compileNewOpsKernel("atomic_counter");
  ASSERT_TRUE(k);
  for (int nw : {1, 8}) {  // 8 warps: 256 threads for 64 elements, each held 4 times
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, nw);
    int atoms = 0;
    walk(tc.threadIR->body, [&](Op& op) {
      if (op.kind != OpKind::AtomGlobal && op.kind != OpKind::AtomCasGlobal) return;
      ++atoms;
      EXPECT_EQ(op.numOperands(), 3u) << "every atomic is masked (owner, and the user's mask)";
    });
    EXPECT_EQ(atoms, 10);
    Memory mem = Memory::fromLaunch(k->launch);
    ExecResult r = runThreadIR(*tc.threadIR, k->launch, mem);
    const int64_t N = 1000, P = 16;
    // tile atomics: 1000 (counter) + 5 x 1000 (max..xor) + 1000 (fsum); scalars: 16 + 16; masked: 3 x 16
    EXPECT_EQ(r.stats.atomics, 7 * N + 2 * P + 3 * P) << "num_warps " << nw;
    int atomicRecords = 0;
    for (const WarpAccess& a : r.accesses) atomicRecords += a.atomic;
    EXPECT_GT(atomicRecords, 0);
  }
}

TEST(NewAtomics, FrontEndErrors) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"atomic_add(x_ptr, 1.0, sem=\"seq_cst\")", "sem must be one of \"acq_rel\", \"acquire\", \"release\", \"relaxed\""},
      {"atomic_add(x_ptr, 1.0, scope=\"warp\")", "scope must be one of \"gpu\", \"cta\", \"sys\""},
      {"atomic_max(x_ptr, 1.0)", "atomic_max() on f32 is not supported"},
      {"atomic_cas(x_ptr, 0.0, 1.0)", "atomic_cas() on f32 is not supported"},
      {"atomic_add(n, 1)", "needs a pointer or a tile of pointers"},
      {"atomic_add(x_ptr + arange(0, 8), arange(0, 4).to(f32))", "cannot be broadcast to the pointers' shape"},
  };
  for (const Case& c : cases) {
    const std::string src = std::string("@launch(grid=(1,), x_ptr=zeros(8, output=True), n=3)\n@jit\ndef k(x_ptr, n):\n    ") +
                            c.body + "\n";
    const std::string path = test::uniqueTempFile("atomic_error");
    {
      std::ofstream out(path);
      out << src;
    }
    std::ostringstream err;
    auto k = compileKernelFile(path, {}, err);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(err.str().find(c.message), std::string::npos) << c.body << "\n" << err.str();
    EXPECT_NE(err.str().find("atomic_error.tl:4:"), std::string::npos) << err.str();  // located
  }
}

// An atomic outside every buffer stops every engine with a located "atomic out of bounds" error
// (the elements before it have been applied: atomics are not checked ahead like a store).
TEST(NewAtomics, OutOfBoundsIsALocatedError) {
  const std::string path = test::uniqueTempFile("atomic_oob");
  {
    std::ofstream out(path);
    out << "@launch(grid=(1,), c_ptr=zeros(8, dtype=i32, output=True))\n@jit\ndef k(c_ptr):\n"
           "    offs = arange(0, 16)\n    atomic_add(c_ptr + offs, 1)\n";
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  ASSERT_TRUE(k) << err.str();
  auto expectOob = [&](const std::string& engine, const std::function<void(Memory&)>& run) {
    Memory m = Memory::fromLaunch(k->launch);
    try {
      run(m);
      ADD_FAILURE() << engine << ": no error";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("atomic out of bounds"), std::string::npos) << engine << ": " << e.what();
      EXPECT_EQ(e.loc.line, 5u) << engine;
    }
  };
  expectOob("tl-scalar", [&](Memory& m) { runScalar(*k->ir, k->launch, m); });
  auto opt = cloneFunction(*k->ir);
  blockPipeline().run(*opt);
  expectOob("tl-block", [&](Memory& m) { runBlock(*opt, k->launch, m); });
  ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 1);
  expectOob("executor", [&](Memory& m) { runThreadIR(*tc.threadIR, k->launch, m); });
}

}  // namespace
}  // namespace tl::newops
