// Lowering of device_print and device_assert to print_regs / assert_regs (ThreadOps.def).
//
// Expects: block IR with layouts; device_print's operands in any layout (the layout pass puts no
// constraint on them), device_assert's condition an i1 tile or scalar.
// Guarantees:
//   device_print -> one print_regs per operand, in operand order (Triton prints operand by
//            operand), carrying each register's tile coordinates (the layout's index math, as
//            arange's lowering computes them) so the executor and the GPU print "idx (i, j)";
//            each element is printed once per program: its first owner's register is on in the
//            mask, replicas are off (LowerMemory.cpp's store rule), and a scalar is printed by
//            thread 0 only (Triton prints a scalar from every thread; tilelab once). With no
//            operands, one print_regs of the mask alone on thread 0 (the prefix line).
//   device_assert -> assert_regs of every register of every thread (replicas hold the same
//            values: a failing element fails in each of its owners; the executor reports the
//            first, in execution order), with the coordinates for the message.
#include "thread/LowerCommon.h"

namespace tl::lower {

namespace {

std::vector<int64_t> shapeAttr(const Type& t) { return std::vector<int64_t>(t.shape.begin(), t.shape.end()); }

}  // namespace

// The coordinates of every register of a value of tile type t, one <E x i32> per dim.
std::vector<Value*> Lowerer::registerCoords(const Type& t) {
  std::vector<Value*> idx;
  if (t.isScalar()) return idx;
  LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
  for (int d = 0; d < t.rank(); ++d) idx.push_back(splatTo(coord(g, d), g.numRegs));
  return idx;
}

void Lowerer::lowerPrint(const Op& op) {
  const std::string& prefix = op.strAttr("prefix");
  const int64_t hex = op.intAttr("hex");
  if (op.numOperands() == 0) {
    b_.create(OpKind::PrintRegs, {cmpC("eq", threadId_, 0)}, {},
              {{"prefix", prefix}, {"hex", hex}, {"shape", std::vector<int64_t>{}}, {"operand", int64_t(-1)}});
    return;
  }
  for (size_t k = 0; k < op.numOperands(); ++k) {
    const Type& t = op.operand(k)->type;
    Value* mask = nullptr;
    if (t.isScalar()) {
      mask = cmpC("eq", threadId_, 0);
    } else {
      LayoutGeom g = LayoutGeom::of(*t.layout, t.shape);
      mask = ownerMask(g);
      if (!mask) mask = constOf(Type::scalar(DType::I1), 0, 1, g.numRegs);
    }
    std::vector<Value*> operands{mask, get(op.operand(k))};
    for (Value* c : registerCoords(t)) operands.push_back(c);
    const int64_t operand = op.numOperands() > 1 ? int64_t(k) : -1;
    b_.create(OpKind::PrintRegs, operands, {},
              {{"prefix", prefix}, {"hex", hex}, {"shape", shapeAttr(t)}, {"operand", operand}});
  }
}

void Lowerer::lowerAssert(const Op& op) {
  const Type& t = op.operand(0)->type;
  std::vector<Value*> operands{get(op.operand(0))};
  for (Value* c : registerCoords(t)) operands.push_back(c);
  b_.create(OpKind::AssertRegs, operands, {}, {{"msg", op.strAttr("msg")}, {"shape", shapeAttr(t)}});
}

}  // namespace tl::lower
