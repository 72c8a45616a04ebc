// The mask probe (see MaskProbe.h): copy the block IR, store every load's and store's mask into
// a buffer of its own, run the copy in tl-block's interpreter, read the masks back.
#include "viz/model/MaskProbe.h"

#include <algorithm>
#include <functional>

#include "block/BlockInterpreter.h"
#include "ir/Builder.h"
#include "ir/Printer.h"
#include "runtime/Memory.h"

namespace tl::viz {

namespace {

// The masked loads and stores of `fn`, in pre-order (the op and whether it is in a for or a while).
struct MaskedOp {
  Op* op = nullptr;
  bool inLoop = false;
};

std::vector<MaskedOp> maskedOps(const Function& fn) {
  std::vector<MaskedOp> out;
  std::function<void(const Region&, bool)> visit = [&](const Region& r, bool inLoop) {
    for (const auto& op : r.ops) {
      bool masked = (op->kind == OpKind::Load && op->numOperands() >= 2) || (op->kind == OpKind::Store && op->numOperands() >= 3);
      if (masked && op->operand(op->kind == OpKind::Load ? 1 : 2)->type.isTile()) out.push_back({op.get(), inLoop});
      for (const auto& sub : op->regions) visit(*sub, inLoop || op->kind == OpKind::For || op->kind == OpKind::While);
    }
  };
  visit(fn.body, false);
  return out;
}

Value* maskOf(const Op& op) { return op.operand(op.kind == OpKind::Load ? 1 : 2); }

// The linear program id (x fastest), as the executor numbers blocks.
Value* linearProgramId(Builder& b) {
  Value* id = b.programId(2);
  id = b.binary(OpKind::Add, b.binary(OpKind::Mul, id, b.numPrograms(1)), b.programId(1));
  return b.binary(OpKind::Add, b.binary(OpKind::Mul, id, b.numPrograms(0)), b.programId(0));
}

// Row-major element index of every element of a 1-D or 2-D tile.
Value* elementIndex(Builder& b, const Shape& shape) {
  if (shape.size() == 1) return b.arange(0, shape[0]);
  Value* rows = b.expandDims(b.arange(0, shape[0]), 1);  // <R x 1>
  rows = b.binary(OpKind::Mul, rows, b.constInt(Type::tile(DType::I32, {shape[0], 1}), shape[1]));
  Value* cols = b.expandDims(b.arange(0, shape[1]), 0);  // <1 x C>
  return b.binary(OpKind::Add, b.broadcast(rows, shape), b.broadcast(cols, shape));
}

}  // namespace

int64_t ValueMask::liveCount(int64_t block) const {
  if (block < 0 || block >= blocks) return -1;
  auto first = live.begin() + static_cast<std::ptrdiff_t>(block * numel);
  return std::count(first, first + static_cast<std::ptrdiff_t>(numel), int8_t(1));
}

MaskProbeResult probeMasks(const Function& blockIR, const Function& withLayouts, const LaunchConfig& launch,
                           int64_t blocks) {
  MaskProbeResult result;
  try {
    std::vector<MaskedOp> original = maskedOps(withLayouts);
    if (original.empty()) return result;  // nothing masked: nothing to draw differently
    std::unique_ptr<Function> fn = cloneFunction(blockIR);
    std::vector<MaskedOp> ops = maskedOps(*fn);
    if (ops.size() != original.size()) {
      result.note = "the masks are not shown: the layouts snapshot has " + std::to_string(original.size()) +
                    " masked loads/stores, the block IR " + std::to_string(ops.size());
      return result;
    }
    const int64_t gridBlocks = launch.grid[0] * launch.grid[1] * launch.grid[2];
    blocks = std::clamp<int64_t>(blocks, 1, std::max<int64_t>(gridBlocks, 1));
    Memory memory = Memory::fromLaunch(launch);
    const auto names = printedValueNames(withLayouts);
    for (size_t i = 0; i < ops.size(); ++i) {
      Op* op = ops[i].op;
      const Op* lop = original[i].op;
      if (op->kind != lop->kind || !(maskOf(*op)->type.shape == maskOf(*lop)->type.shape)) {
        result.note = "the masks are not shown: the masked loads/stores of the block IR and the layouts snapshot differ";
        return result;
      }
      const Shape shape = maskOf(*op)->type.shape;
      if (shape.size() > 2) continue;
      ValueMask m;
      const Value* drawn = lop->kind == OpKind::Load ? lop->result() : lop->operand(1);
      auto it = names.find(drawn);
      if (it == names.end()) continue;
      m.value = "%" + it->second;
      m.store = op->kind == OpKind::Store;
      m.loc = op->loc;
      m.inLoop = ops[i].inLoop;
      m.shape = shape;
      m.numel = 1;
      for (int64_t d : shape) m.numel *= d;
      m.blocks = blocks;

      // The buffer, -1 (all bytes 0xFF) where no program wrote.
      const std::string param = "__viz_mask_" + std::to_string(i);
      Buffer& buf = memory.add(param, DType::I32, {blocks * m.numel}, true);
      std::fill(buf.bytes.begin(), buf.bytes.end(), uint8_t(0xFF));
      fn->params.push_back(Param{param, Param::Kind::Pointer, op->loc});
      Value* base = fn->body.addArg(Type::ptr(DType::I32), param);

      // After the op: store(base + pid * numel + index, i32(mask), mask = pid < blocks).
      Region* region = op->parent;
      size_t at = 0;
      while (region->ops[at].get() != op) ++at;
      Builder b;
      b.setInsertionPoint(region, at + 1);
      b.setLoc(op->loc);
      Value* pid = linearProgramId(b);
      Value* offset = b.binary(OpKind::Mul, pid, b.constInt(Type::scalar(DType::I32), m.numel));
      Value* index = b.binary(OpKind::Add, b.splat(offset, shape), elementIndex(b, shape));
      Value* ptrs = b.addptr(b.splat(base, shape), index);
      Value* guard = b.cmp("lt", b.splat(pid, shape), b.constInt(Type::tile(DType::I32, shape), blocks));
      b.store(ptrs, b.convert(maskOf(*op), DType::I32), guard);
      result.masks.push_back(std::move(m));
    }
    runBlock(*fn, launch, memory);
    for (size_t i = 0, k = 0; i < ops.size() && k < result.masks.size(); ++i) {
      const Buffer* buf = memory.find("__viz_mask_" + std::to_string(i));
      if (!buf) continue;
      ValueMask& m = result.masks[k++];
      m.live.resize(static_cast<size_t>(m.blocks * m.numel));
      for (int64_t e = 0; e < m.blocks * m.numel; ++e) {
        int64_t v = buf->getI(e);
        m.live[static_cast<size_t>(e)] = static_cast<int8_t>(v < 0 ? -1 : v != 0 ? 1 : 0);
      }
    }
  } catch (const std::exception& e) {
    result.masks.clear();
    result.note = std::string("the masks are not shown: running the block IR to find them failed (") + e.what() + ")";
  }
  return result;
}

}  // namespace tl::viz
