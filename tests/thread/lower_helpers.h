// Helpers for the lowering tests (tests/thread/lower_*.cpp): compile a kernel of kernels/ to
// optimized block IR, give every tile a layout without the layout passes (so the lowering is
// tested on its own, with many convert_layouts to exercise), lower it, and count ops.
//
//   auto k = compileTestKernel("softmax");            // block IR after blockPipeline()
//   assignTestLayouts(*k->ir, 4);                     // default layouts, num_warps 4
//   auto t = lowerToThreadIR(*k->ir, &report);
//   EXPECT_EQ(countOps(*t, OpKind::ShflXor), 10);
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Layout.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "runtime/Driver.h"
#include "thread/Lowering.h"

namespace tl::lowertest {

inline std::string kernelPath(const std::string& stem) { return std::string(TL_SOURCE_DIR) + "/kernels/" + stem + ".tl"; }

// Front end + block pipeline; fails the test (and returns nullptr) on errors.
inline std::unique_ptr<CompiledKernel> compileTestKernel(const std::string& stem,
                                                        const std::vector<LaunchOverride>& overrides = {}) {
  std::ostringstream err;
  auto k = compileKernelFile(kernelPath(stem), overrides, err);
  EXPECT_TRUE(k) << err.str();
  if (!k) return nullptr;
  blockPipeline().run(*k->ir);
  return k;
}

// A stand-in for the layout passes: every tile gets Triton's default blocked layout for its
// shape (vec 1), except where the verifier's rules fix it (broadcast keeps its operand's
// layout, reduce gives the slice of its operand's, expand_dims of a slice gives its parent, dot
// gives acc's, trans's operand is converted to the transpose of its result's); where an operand's layout differs from what its user needs, a convert_layout is
// inserted. Elementwise ops, loads and stores take the layout of their first tile operand.
class TestLayouts {
 public:
  explicit TestLayouts(int numWarps) : nw_(numWarps) {}

  void run(Function& fn) {
    fn.numWarps = nw_;
    region(fn.body);
  }

 private:
  LayoutPtr natural(const Shape& s) const { return defaultBlockedLayout(s, nw_, 1); }
  static void setLayout(Value* v, LayoutPtr l) {
    if (v->type.isTile()) v->type = v->type.withLayout(std::move(l));
  }
  // Makes operand k of the op at r.ops[i] have layout `want`; returns the op's new index.
  size_t convertOperand(Region& r, size_t i, size_t k, const LayoutPtr& want) {
    Op& op = *r.ops[i];
    Value* v = op.operand(k);
    if (!v->type.isTile() || *v->type.layout == *want) return i;
    Builder b;
    b.setInsertionPoint(&r, i);
    b.setLoc(op.loc);
    op.operands[k] = b.create(OpKind::ConvertLayout, {v}, {v->type.withLayout(want)})->result();
    return i + 1;
  }
  // The yield ending `r` must yield `types`' layouts.
  void fixYield(Region& r, const std::vector<Type>& types) {
    size_t i = r.ops.size() - 1;
    for (size_t k = 0; k < types.size(); ++k)
      if (types[k].isTile()) i = convertOperand(r, i, k, types[k].layout);
  }

  void region(Region& r) {
    for (size_t i = 0; i < r.ops.size(); ++i) {
      Op& op = *r.ops[i];
      switch (op.kind) {
        case OpKind::Yield:
        case OpKind::Return:
          break;
        case OpKind::For: {
          Region& body = op.region(0);
          std::vector<Type> types;
          for (size_t k = 0; k < op.numResults(); ++k) {
            op.result(k)->type = op.operand(3 + k)->type;
            body.arg(k + 1)->type = op.operand(3 + k)->type;
            types.push_back(op.result(k)->type);
          }
          region(body);
          fixYield(body, types);
          break;
        }
        case OpKind::If: {
          std::vector<Type> types;
          for (auto& res : op.results) {
            if (res->type.isTile()) setLayout(res.get(), natural(res->type.shape));
            types.push_back(res->type);
          }
          for (auto& reg : op.regions) {
            region(*reg);
            fixYield(*reg, types);
          }
          break;
        }
        case OpKind::ExpandDims: {
          int axis = static_cast<int>(op.intAttr("axis"));
          const LayoutPtr& in = op.operand(0)->type.layout;
          LayoutPtr out = in->kind() == Layout::Kind::Slice && in->sliceDim() == axis ? in->parent()
                                                                                      : natural(op.result()->type.shape);
          setLayout(op.result(), out);
          i = convertOperand(r, i, 0, Layout::slice(axis, out));
          break;
        }
        case OpKind::Broadcast:
          setLayout(op.result(), op.operand(0)->type.layout);
          break;
        case OpKind::Trans:  // the result's natural layout; the operand converts to its transpose
          setLayout(op.result(), natural(op.result()->type.shape));
          i = convertOperand(r, i, 0, transposedLayout(*op.result()->type.layout));
          break;
        case OpKind::Reduce:
        case OpKind::Argmax:
          setLayout(op.result(), Layout::slice(static_cast<int>(op.intAttr("axis")), op.operand(0)->type.layout));
          break;
        case OpKind::Dot:
          setLayout(op.result(), op.operand(2)->type.layout);
          break;
        default: {
          LayoutPtr anchor;
          for (Value* v : op.operands)
            if (v->type.isTile()) {
              anchor = v->type.layout;
              break;
            }
          if (!anchor && op.numResults() == 1 && op.result()->type.isTile()) anchor = natural(op.result()->type.shape);
          if (!anchor) break;
          for (size_t k = 0; k < op.numOperands(); ++k) i = convertOperand(r, i, k, anchor);
          for (auto& res : r.ops[i]->results) setLayout(res.get(), anchor);
          break;
        }
      }
    }
  }

  int nw_;
};

inline void assignTestLayouts(Function& fn, int numWarps) { TestLayouts(numWarps).run(fn); }

inline int countOps(const Function& fn, OpKind kind) {
  int n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

}  // namespace tl::lowertest
