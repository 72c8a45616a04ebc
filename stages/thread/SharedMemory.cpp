// Shared memory for the lowering: the buffers lowerings ask for, the linear-scan allocator that
// places them, and the thread ops that touch them (ld_shared, st_shared, barrier).
//
// Expects: each request names its size and the block op that needs it; a buffer is live only
// while that op's lowering runs (every user ends with a barrier, so the next user may reuse the
// space), i.e. its lifetime is the op's pre-order index [i, i]. Buffers of one op (dot's a and
// b operands, argmax's values and indices) are live together and never share space.
// Guarantees: every buffer gets a 16-byte-aligned offset (1024 where asked: wgmma operands); two buffers whose lifetimes overlap
// never overlap in memory; Function::sharedBytes is the peak (the end of the highest buffer).
// The base address of each buffer is an i32 `constant` in the IR, written after allocation.
//
// The limit: the plan must fit the shared memory one block may use on the target GPU
// (sim/Gpu.h targetGpu(): the tool's --gpu, else h200; GpuSpec::maxSharedPerBlock, the opt-in
// maximum, 227 KB on the H200). A plan that does not is reported at the first op (in program
// order) whose buffers end past the limit, as a RuntimeError (`file:line:col: error: ...`, exit
// 1 in every tool that runs this pipeline: tl-thread, tl-sim, tl-ptx, tl-viz) that gives the
// bytes that op needs, its buffers, the limit and the GPU. Up to 48 KB tl-ptx declares the
// memory statically, above it as dynamic shared memory (stages/ptx/DynamicShared.h).
#include <algorithm>
#include <cstdio>

#include "sim/Gpu.h"
#include "thread/LowerCommon.h"

namespace tl {

namespace {
constexpr int64_t kSharedAlign = 16;  // the widest vector access
int64_t alignUp(int64_t v, int64_t align = kSharedAlign) { return (v + align - 1) / align * align; }
}  // namespace

namespace {

// "232448 bytes (227 KB)" for whole kilobytes, else "1000 bytes".
std::string bytesText(int64_t bytes) {
  return std::to_string(bytes) + " bytes" + (bytes % 1024 == 0 ? " (" + std::to_string(bytes / 1024) + " KB)" : "");
}

// Throws the located error when the placed buffers end past what one block may use on the
// target GPU (see the top of this file).
void checkFitsTargetGpu(const std::vector<SharedBuffer>& buffers, int64_t peak) {
  if (peak == 0) return;
  const GpuSpec gpu = targetGpu();
  const int64_t limit = gpu.maxSharedPerBlock;
  if (peak <= limit) return;
  // The first op (lowest lifetime start) with a buffer ending past the limit.
  const SharedBuffer* culprit = nullptr;
  for (const SharedBuffer& b : buffers)
    if (b.offset + b.bytes > limit && (!culprit || b.firstOp < culprit->firstOp)) culprit = &b;
  // Everything that op asked for, and where its buffers end.
  int64_t needed = 0;
  std::string parts;
  int count = 0;
  for (const SharedBuffer& b : buffers) {
    if (b.firstOp != culprit->firstOp || b.op != culprit->op || !(b.loc == culprit->loc)) continue;
    needed = std::max(needed, b.offset + b.bytes);
    parts += (count++ ? " + " : "") + b.purpose + " " + std::to_string(b.bytes);
  }
  // One buffer: "(one buffer: reduce across warps)"; several: "(a 100 + b 200 bytes, live together)".
  if (count == 1) parts = "one buffer: " + culprit->purpose;
  else parts += " bytes, live together";
  std::string msg = culprit->op + " needs " + bytesText(needed) + " of shared memory per block (" + parts +
                    "), more than the " + bytesText(limit) + " one block may use on " + gpu.key + " (" + gpu.name +
                    ", maxSharedPerBlock); use smaller tiles";
  throw RuntimeError(culprit->loc, msg);
}

}  // namespace

int64_t allocateSharedMemory(std::vector<SharedBuffer>& buffers) {
  // Visit by lifetime start (larger buffers first on ties: they are harder to place).
  std::vector<size_t> byStart(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) byStart[i] = i;
  std::stable_sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) {
    if (buffers[a].firstOp != buffers[b].firstOp) return buffers[a].firstOp < buffers[b].firstOp;
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<size_t> active;  // placed buffers whose lifetime may still overlap
  int64_t peak = 0;
  for (size_t i : byStart) {
    SharedBuffer& buf = buffers[i];
    // Expire buffers that ended before this one starts.
    std::erase_if(active, [&](size_t a) { return buffers[a].lastOp < buf.firstOp; });
    // Lowest aligned offset that fits between the live buffers (sorted by offset).
    std::vector<size_t> live = active;
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return buffers[a].offset < buffers[b].offset; });
    int64_t offset = 0;
    for (size_t a : live) {
      if (offset + buf.bytes <= buffers[a].offset) break;  // fits in the gap before `a`
      offset = std::max(offset, alignUp(buffers[a].offset + buffers[a].bytes, std::max(kSharedAlign, buf.align)));
    }
    buf.offset = offset;
    peak = std::max(peak, offset + buf.bytes);
    active.push_back(i);
  }
  checkFitsTargetGpu(buffers, peak);
  return peak;
}

std::string SharedMemoryReport::str() const {
  std::string s = "shared memory: " + std::to_string(peakBytes) + " bytes peak, " +
                  std::to_string(buffers.size()) + " buffer" + (buffers.size() == 1 ? "" : "s") + "\n";
  if (buffers.empty()) return s;
  s += "  offset   bytes  live (ops)  requested by        purpose\n";
  char line[256];
  for (const auto& b : buffers) {
    std::string where = b.op + " " + std::to_string(b.loc.line) + ":" + std::to_string(b.loc.col);
    std::snprintf(line, sizeof line, "  %6lld  %6lld  %4lld..%-4lld  %-18s  %s\n", static_cast<long long>(b.offset),
                  static_cast<long long>(b.bytes), static_cast<long long>(b.firstOp), static_cast<long long>(b.lastOp),
                  where.c_str(), b.purpose.c_str());
    s += line;
  }
  return s;
}

namespace lower {

Value* Lowerer::sharedBase(int64_t bytes, const std::string& purpose, int64_t align) {
  SharedBuffer buf;
  buf.align = align;
  buf.purpose = purpose;
  buf.op = mnemonic(cur_->kind);
  buf.loc = cur_->loc;
  buf.bytes = bytes;
  buf.firstOp = buf.lastOp = curIndex_;
  buffers_.push_back(buf);
  // A placeholder value until allocation (not 0, so no helper mistakes it for a known zero).
  Op* c = b_.create(OpKind::Constant, {}, {Type::scalar(DType::I32)}, {{"value", int64_t(-1)}});
  baseConsts_.push_back(c);
  return c->result();
}

Value* Lowerer::sharedBaseForLoop(int64_t bytes, const std::string& purpose, const LoopFrame& loop, int64_t align) {
  Value* base = sharedBase(bytes, purpose, align);
  buffers_.back().firstOp = std::min(loop.firstIndex, curIndex_);
  buffers_.back().lastOp = std::max(loop.lastIndex, curIndex_);
  return base;
}

void Lowerer::patchSharedBases() {
  for (size_t i = 0; i < buffers_.size(); ++i) baseConsts_[i]->setAttr("value", buffers_[i].offset);
}

Value* Lowerer::sharedAddr(Value* elementIndex, int elemBytes, Value* base) {
  return bin(OpKind::Add, mulC(elementIndex, elemBytes), base);
}

Value* Lowerer::ldShared(Value* addr, DType dtype, Value* mask, int64_t vec) {
  std::vector<Value*> operands{addr};
  if (mask) operands.push_back(splatTo(mask, regsOf(addr)));
  Type t = addr->type.isScalar() ? Type::scalar(dtype) : Type::tile(dtype, addr->type.shape);
  return b_.create(OpKind::LdShared, operands, {t}, {{"vec", vec}, {"dtype", std::string(dtypeName(dtype))}})->result();
}

void Lowerer::stShared(Value* addr, Value* value, Value* mask, int64_t vec) {
  int64_t n = regsOf(value);
  std::vector<Value*> operands{splatTo(addr, n), value};
  if (mask) operands.push_back(splatTo(mask, n));
  b_.create(OpKind::StShared, operands, {}, {{"vec", vec}});
}

void Lowerer::barrier() { b_.create(OpKind::Barrier, {}, {}); }

}  // namespace lower
}  // namespace tl
