// Running tl-cpu's programs over the grid (contract in CpuRuntime.h), and the helpers the
// generated code calls (CpuAbi.h).
#include "cpu/CpuRuntime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include "runtime/Arguments.h"
#include "runtime/Budget.h"
#include "runtime/Fp8.h"

namespace tl::cpu {

namespace {

// What the helpers of one run share (CpuContext::run points here).
struct RunState {
  const CpuKernel& kernel;
  Memory& memory;
  std::array<int64_t, 3> grid{1, 1, 1};
  int64_t maxIterations = 0;
  bool collectPrints = true;
  std::mutex mu;
  int64_t failedAt = std::numeric_limits<int64_t>::max();  // linear index of the first failing program
  std::optional<RuntimeError> error;
  std::atomic<int64_t> stopAt{std::numeric_limits<int64_t>::max()};
  std::map<int64_t, std::vector<std::string>> lines;  // device_print, per program

  RunState(const CpuKernel& k, Memory& m) : kernel(k), memory(m) {}

  int64_t linear(int64_t p0, int64_t p1, int64_t p2) const { return p0 + grid[0] * (p1 + grid[1] * p2); }
  void record(int64_t p0, int64_t p1, int64_t p2, RuntimeError e) {
    const int64_t at = linear(p0, p1, p2);
    std::lock_guard<std::mutex> lock(mu);
    if (at >= failedAt) return;
    failedAt = at;
    error = std::move(e);
    stopAt.store(at);
  }
};

RunState& stateOf(const CpuContext* ctx) { return *static_cast<RunState*>(ctx->run); }

// " in program (x, y, z), element [i, j]" (no element for a scalar or element < 0), as tl-block.
std::string where(int64_t p0, int64_t p1, int64_t p2, const Shape& shape, int64_t element) {
  std::string s = " in program (" + std::to_string(p0) + ", " + std::to_string(p1) + ", " + std::to_string(p2) + ")";
  if (shape.empty() || element < 0) return s;
  std::vector<int64_t> idx = elementIndex(shape, element);
  s += ", element [";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

const char* accessName(OpKind k) { return k == OpKind::Load ? "load" : k == OpKind::Store ? "store" : "atomic"; }

}  // namespace

int defaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// A pool of threads that each run a function once per generation (one run of the grid). The
// calling thread is worker 0, so one thread runs with no hand-off at all; the others spin for a
// short while before they sleep, so back-to-back runs (timing) do not pay a wake-up each.
class WorkerPool {
 public:
  explicit WorkerPool(int n) {
    for (int t = 1; t < n; ++t) threads_.emplace_back([this, t] { work(t); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs job(t) on every thread t (the caller is t = 0) and waits for all of them.
  void run(const std::function<void(int)>& job) {
    if (threads_.empty()) return job(0);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      pending_.store(static_cast<int>(threads_.size()));
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    job(0);
    for (int spin = 0; spin < kSpins && pending_.load() != 0; ++spin) __builtin_ia32_pause();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_.load() == 0; });
  }

 private:
  static constexpr int kSpins = 200000;  // ~0.1 ms of pause instructions
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<int> pending_{0};
  std::atomic<int64_t> generation_{0};
  bool quit_ = false;

  void work(int t) {
    int64_t seen = 0;
    for (;;) {
      for (int spin = 0; spin < kSpins && generation_.load() == seen; ++spin) __builtin_ia32_pause();
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
        if (quit_) return;
        job = job_;
      }
      (*job)(t);
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_all();
      }
    }
  }
};

// One 64-bit word per parameter (CpuAbi.h): the scalar converted to the parameter's dtype as
// `convert` would, f16 / bf16 / fp8 kept as their f32 value.
static uint64_t scalarWord(DType dtype, const ScalarValue& v) {
  const double f = isFloat(v.dtype) ? v.f : double(float(v.i));
  const int64_t i = isInt(v.dtype) ? v.i : floatToInt(v.f, isInt(dtype) ? dtype : DType::I64);
  switch (dtype) {
    case DType::I1: return i != 0;
    case DType::I32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(i))));
    case DType::I64: return static_cast<uint64_t>(i);
    default: {
      const float x = static_cast<float>(roundToDType(f, dtype));
      uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      return bits;
    }
  }
}

RunStats runKernel(const CpuKernel& kernel, const Function& fn, const LaunchConfig& launch, Memory& memory,
                   const RunOptions& opts) {
  const auto& g = launch.grid;
  if (g[0] <= 0 || g[1] <= 0 || g[2] <= 0)
    throw RuntimeError(fn.loc, "grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
                                   ") must be positive");
  RunState state(kernel, memory);
  state.grid = {g[0], g[1], g[2]};
  const int64_t total = g[0] * g[1] * g[2];

  // The host arena: the virtual address space from Memory::kBaseAddress, guards included.
  uint64_t span = 4096;
  for (const Buffer& b : memory.buffers()) span = std::max(span, b.end() + Memory::kGuardBytes - Memory::kBaseAddress);
  span = (span + 4095) / 4096 * 4096;
  auto freeArena = [](uint8_t* p) { std::free(p); };
  std::unique_ptr<uint8_t, decltype(freeArena)> arena(static_cast<uint8_t*>(std::aligned_alloc(4096, span)), freeArena);
  std::unique_ptr<uint8_t, decltype(freeArena)> shadow(
      kernel.tracksStores ? static_cast<uint8_t*>(std::calloc(span, 1)) : nullptr, freeArena);
  if (!arena || (kernel.tracksStores && !shadow))
    throw RuntimeError(fn.loc, "tl-cpu: cannot allocate " + std::to_string(span >> 20) + " MiB for the launch's buffers");
  std::memset(arena.get(), 0, span);
  for (const Buffer& b : memory.buffers())
    if (!b.bytes.empty()) std::memcpy(arena.get() + (b.base - Memory::kBaseAddress), b.bytes.data(), b.bytes.size());

  CpuContext ctx;
  ctx.hostDelta = static_cast<int64_t>(reinterpret_cast<uint64_t>(arena.get()) - Memory::kBaseAddress);
  ctx.shadowDelta = shadow ? static_cast<int64_t>(reinterpret_cast<uint64_t>(shadow.get()) - Memory::kBaseAddress) : 0;
  for (int d = 0; d < 3; ++d) ctx.grid[d] = g[static_cast<size_t>(d)];
  ctx.maxIterations = opts.maxIterations > 0 ? opts.maxIterations
                      : workLimits().maxSteps > 0 ? workLimits().maxSteps
                                                  : kDefaultMaxIterations;
  state.maxIterations = ctx.maxIterations;
  ctx.run = &state;

  std::vector<uint64_t> args;
  for (const KernelArgument& a : bindArguments(fn, launch, memory))
    args.push_back(a.buffer ? a.buffer->base : scalarWord(a.type->dtype, a.value));

  RunStats stats;
  stats.programs = total;
  stats.threads = static_cast<int>(std::min<int64_t>(opts.threads > 0 ? opts.threads : defaultThreads(), total));
  // device_print's lines are collected per program and printed in grid order afterwards.
  const int64_t chunk = std::max<int64_t>(1, total / (int64_t(stats.threads) * 16));
  std::atomic<int64_t> next{0};
  const size_t scratchBytes =
      static_cast<size_t>((kernel.scratchBytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment);
  std::vector<std::unique_ptr<uint8_t, decltype(freeArena)>> scratch;
  for (int t = 0; t < stats.threads; ++t) {
    scratch.emplace_back(static_cast<uint8_t*>(std::aligned_alloc(static_cast<size_t>(kScratchAlignment), scratchBytes)), freeArena);
    if (!scratch.back()) throw RuntimeError(fn.loc, "tl-cpu: cannot allocate " + std::to_string(scratchBytes >> 10) + " KiB of tiles per thread");
  }
  const std::function<void(int)> job = [&](int t) {
    uint8_t* tiles = scratch[static_cast<size_t>(t)].get();
    for (;;) {
      const int64_t first = next.fetch_add(chunk);
      if (first >= total || first > state.stopAt.load(std::memory_order_relaxed)) return;
      const int64_t last = std::min(total, first + chunk);
      for (int64_t p = first; p < last; ++p) {
        const int64_t p0 = p % g[0], p1 = (p / g[0]) % g[1], p2 = p / (g[0] * g[1]);
        if (kernel.program(args.data(), &ctx, p0, p1, p2, tiles) != 0) return;
      }
    }
  };
  {
    WorkerPool pool(stats.threads);
    for (int r = 0; r < std::max(1, opts.repeat); ++r) {
      state.collectPrints = r == 0;
      next.store(0);
      const auto t0 = std::chrono::steady_clock::now();
      pool.run(job);
      stats.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (state.error) break;
      if (opts.budgetMs > 0 && std::accumulate(stats.ms.begin(), stats.ms.end(), 0.0) >= opts.budgetMs) break;
    }
  }
  if (opts.print)
    for (auto& [program, lines] : state.lines)
      for (const std::string& line : lines) opts.print->line(line);
  if (state.error) throw *state.error;

  for (Buffer& b : memory.buffers()) {
    if (b.bytes.empty()) continue;
    const uint64_t off = b.base - Memory::kBaseAddress;
    std::memcpy(b.bytes.data(), arena.get() + off, b.bytes.size());
    if (!shadow || b.stored.empty()) continue;
    const uint64_t size = static_cast<uint64_t>(dtypeBytes(b.dtype));
    for (uint64_t e = 0; e < b.bytes.size(); e += size)
      if (shadow.get()[off + e]) b.markStored(e);
  }
  return stats;
}

}  // namespace tl::cpu

// --- the helpers (CpuAbi.h) ----------------------------------------------------------------------

using tl::cpu::CpuContext;
using tl::cpu::RunState;

int32_t tl_cpu_quick_check(const CpuContext* ctx, int32_t op, uint64_t lo, uint64_t hiEnd, uint64_t misaligned) {
  if (lo >= hiEnd) return 0;
  RunState& s = tl::cpu::stateOf(ctx);
  const tl::Type& pt = s.kernel.ops[static_cast<size_t>(op)]->operand(0)->type;
  const tl::Buffer* b = s.memory.resolve(lo, hiEnd - lo);
  return b && b->dtype == pt.dtype && misaligned == 0 ? 0 : 1;
}

int32_t tl_cpu_check_access(const CpuContext* ctx, int32_t op, uint64_t lo, uint64_t hiEnd, uint64_t misaligned,
                            const uint64_t* ptrs, const uint8_t* mask, int64_t n, int64_t pid0, int64_t pid1, int64_t pid2) {
  if (tl_cpu_quick_check(ctx, op, lo, hiEnd, misaligned) == 0) return 0;
  RunState& s = tl::cpu::stateOf(ctx);
  const tl::Op& o = *s.kernel.ops[static_cast<size_t>(op)];
  const tl::Type& pt = o.operand(0)->type;
  const uint64_t size = static_cast<uint64_t>(tl::dtypeBytes(pt.dtype));
  // Element by element, in order: the first bad one is reported (tl-block's messages).
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    const uint64_t addr = ptrs[i];
    const tl::Buffer* at = s.memory.resolve(addr, size);
    const int64_t element = pt.isScalar() ? -1 : i;
    if (!at) {
      const bool store = o.kind == tl::OpKind::Store;
      // The operand count with a mask: load (p, mask), store and atomic_rmw (p, v, mask), atomic_cas (p, cmp, v, mask).
      const size_t withMask = o.kind == tl::OpKind::Load ? 2 : o.kind == tl::OpKind::AtomicCAS ? 4 : 3;
      const bool masked = o.numOperands() >= withMask;
      s.record(pid0, pid1, pid2,
               tl::RuntimeError(o.loc, std::string(tl::cpu::accessName(o.kind)) + " out of bounds: " + s.memory.describeAddress(addr, size) +
                                           tl::cpu::where(pid0, pid1, pid2, pt.shape, element) +
                                           tl::outOfBoundsHint(store, masked, o.strAttrIf("unchecked"))));
      return 1;
    }
    if (at->dtype != pt.dtype || (addr - at->base) % size != 0) {
      std::ostringstream os;
      os << tl::cpu::accessName(o.kind) << " of " << tl::dtypeName(pt.dtype) << " at address 0x" << std::hex << addr << std::dec
         << " is not aligned to an element of buffer '" << at->name << "' (" << at->describe() << ")"
         << tl::cpu::where(pid0, pid1, pid2, pt.shape, element);
      s.record(pid0, pid1, pid2, tl::RuntimeError(o.loc, os.str()));
      return 1;
    }
  }
  return 0;
}

int32_t tl_cpu_fail(const CpuContext* ctx, int32_t op, int32_t fault, int64_t element, int64_t pid0, int64_t pid1,
                    int64_t pid2) {
  RunState& s = tl::cpu::stateOf(ctx);
  const tl::Op& o = *s.kernel.ops[static_cast<size_t>(op)];
  std::string msg;
  switch (static_cast<tl::cpu::CpuFault>(fault)) {
    case tl::cpu::CpuFault::DivByZero:
      msg = "integer division by zero" + tl::cpu::where(pid0, pid1, pid2, o.result()->type.shape, element);
      break;
    case tl::cpu::CpuFault::StepZero: msg = "range() step is zero" + tl::cpu::where(pid0, pid1, pid2, {}, -1); break;
    case tl::cpu::CpuFault::Budget:
      msg = "the program ran more than " + std::to_string(s.maxIterations) +
            " loop iterations, tl-cpu's budget (--max-steps N raises it)" + tl::cpu::where(pid0, pid1, pid2, {}, -1) +
            ": does the loop end?";
      break;
    case tl::cpu::CpuFault::AssertFailed: {
      const tl::Shape& shape = o.operand(0)->type.shape;
      msg = tl::assertMessage(o.strAttr("msg"), {pid0, pid1, pid2}, "", tl::elementIndex(shape, std::max<int64_t>(element, 0)), shape);
      break;
    }
  }
  s.record(pid0, pid1, pid2, tl::RuntimeError(o.loc, msg));
  return 1;
}

namespace {

template <class T, class F>
T atomicUpdate(T* at, F next) {
  T old = __atomic_load_n(at, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(at, &old, next(old), false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}

template <class T>
void atomicElements(const CpuContext* ctx, const std::string& kind, bool cas, const uint64_t* ptrs, const T* vals,
                    const T* cmp, const uint8_t* mask, T* out, int64_t n) {
  using U = std::make_unsigned_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) {
      out[i] = T(0);
      continue;
    }
    T* at = reinterpret_cast<T*>(ptrs[i] + static_cast<uint64_t>(ctx->hostDelta));
    const T v = vals[i];
    if (cas) {
      T expected = cmp[i];
      __atomic_compare_exchange_n(at, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      out[i] = expected;  // the old value either way
    } else if (kind == "add") {
      out[i] = atomicUpdate(at, [&](T o) { return T(U(o) + U(v)); });
    } else if (kind == "max") {
      out[i] = atomicUpdate(at, [&](T o) { return std::max(o, v); });
    } else if (kind == "min") {
      out[i] = atomicUpdate(at, [&](T o) { return std::min(o, v); });
    } else if (kind == "and") {
      out[i] = __atomic_fetch_and(at, v, __ATOMIC_SEQ_CST);
    } else if (kind == "or") {
      out[i] = __atomic_fetch_or(at, v, __ATOMIC_SEQ_CST);
    } else if (kind == "xor") {
      out[i] = __atomic_fetch_xor(at, v, __ATOMIC_SEQ_CST);
    } else {  // xchg
      out[i] = __atomic_exchange_n(at, v, __ATOMIC_SEQ_CST);
    }
    if (ctx->shadowDelta) *reinterpret_cast<uint8_t*>(ptrs[i] + static_cast<uint64_t>(ctx->shadowDelta)) = 1;
  }
}

}  // namespace

void tl_cpu_atomic(const CpuContext* ctx, int32_t op, const uint64_t* ptrs, const void* vals, const void* cmp,
                   const uint8_t* mask, void* out, int64_t n) {
  RunState& s = tl::cpu::stateOf(ctx);
  const tl::Op& o = *s.kernel.ops[static_cast<size_t>(op)];
  const bool cas = o.kind == tl::OpKind::AtomicCAS;
  const std::string kind = cas ? "cas" : o.strAttr("kind");
  switch (o.operand(0)->type.dtype) {
    case tl::DType::I32:
      atomicElements(ctx, kind, cas, ptrs, static_cast<const int32_t*>(vals), static_cast<const int32_t*>(cmp), mask,
                     static_cast<int32_t*>(out), n);
      return;
    case tl::DType::I64:
      atomicElements(ctx, kind, cas, ptrs, static_cast<const int64_t*>(vals), static_cast<const int64_t*>(cmp), mask,
                     static_cast<int64_t*>(out), n);
      return;
    default: {  // f32: add and xchg (the verifier allows no other)
      const float* v = static_cast<const float*>(vals);
      float* y = static_cast<float*>(out);
      for (int64_t i = 0; i < n; ++i) {
        if (mask && !mask[i]) {
          y[i] = 0;
          continue;
        }
        uint32_t* at = reinterpret_cast<uint32_t*>(ptrs[i] + static_cast<uint64_t>(ctx->hostDelta));
        const float add = v[i];
        const uint32_t old = atomicUpdate(at, [&](uint32_t bits) {
          float f;
          std::memcpy(&f, &bits, sizeof f);
          const float r = kind == "add" ? f + add : add;
          uint32_t rb;
          std::memcpy(&rb, &r, sizeof rb);
          return rb;
        });
        std::memcpy(&y[i], &old, sizeof old);
        if (ctx->shadowDelta) *reinterpret_cast<uint8_t*>(ptrs[i] + static_cast<uint64_t>(ctx->shadowDelta)) = 1;
      }
      return;
    }
  }
}

void tl_cpu_print(const CpuContext* ctx, int32_t op, const void* const* values, int64_t pid0, int64_t pid1, int64_t pid2) {
  RunState& s = tl::cpu::stateOf(ctx);
  if (!s.collectPrints) return;
  const tl::Op& o = *s.kernel.ops[static_cast<size_t>(op)];
  const std::array<int64_t, 3> pid{pid0, pid1, pid2};
  const std::string& prefix = o.strAttr("prefix");
  const bool hex = o.intAttr("hex") != 0;
  std::vector<std::string> out;
  if (o.numOperands() == 0) out.push_back(tl::printPid(pid) + prefix);
  for (size_t k = 0; k < o.numOperands(); ++k) {
    const tl::Type& t = o.operand(k)->type;
    const int operand = o.numOperands() > 1 ? static_cast<int>(k) : -1;
    for (int64_t e = 0; e < t.numel(); ++e) {
      std::string text;
      if (t.isPtr) text = tl::printPointer(static_cast<const uint64_t*>(values[k])[e]);
      else if (tl::isFloat(t.dtype)) text = tl::printFloat(t.dtype, static_cast<const float*>(values[k])[e], hex);
      else if (t.dtype == tl::DType::I1) text = tl::printInt(t.dtype, static_cast<const uint8_t*>(values[k])[e], hex);
      else if (t.dtype == tl::DType::I32) text = tl::printInt(t.dtype, static_cast<const int32_t*>(values[k])[e], hex);
      else text = tl::printInt(t.dtype, static_cast<const int64_t*>(values[k])[e], hex);
      out.push_back(tl::printLine(pid, "", tl::elementIndex(t.shape, e), t.shape, prefix, operand, text));
    }
  }
  std::lock_guard<std::mutex> lock(s.mu);
  auto& lines = s.lines[s.linear(pid0, pid1, pid2)];
  lines.insert(lines.end(), out.begin(), out.end());
}

float tl_cpu_fp8_to_float(uint8_t bits, int32_t dtype) { return tl::fp8ToFloat(static_cast<tl::DType>(dtype), bits); }

uint8_t tl_cpu_float_to_fp8(float v, int32_t dtype) { return tl::floatToFp8(static_cast<tl::DType>(dtype), v); }
