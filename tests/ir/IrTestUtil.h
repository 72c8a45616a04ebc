// Helpers shared by the IR tests: a structural comparison of two functions, a parse helper and
// a "kitchen sink" kernel built with tl::Builder that uses every block op kind.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

namespace tl::test {

// Attributes equal, treating two NaNs as equal and telling -0.0 from 0.0 (exact round trip).
inline bool sameAttr(const Attr& a, const Attr& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    if (std::isnan(*x) || std::isnan(y)) return std::isnan(*x) && std::isnan(y);
    return *x == y && std::signbit(*x) == std::signbit(y);
  }
  return a == b;
}

// Compares two functions op by op (kinds, locations, attributes, result and argument types,
// which value each operand is, nesting). Returns "" when equal, else the first difference.
// Name hints are not compared (they are a printing detail); parameter locations are not
// printed, so they are not compared either.
class StructuralDiff {
 public:
  std::string run(const Function& a, const Function& b) {
    if (a.name != b.name) return "name " + a.name + " vs " + b.name;
    if (!(a.loc == b.loc)) return "function loc differs";
    if (a.constexprs != b.constexprs) return "constexprs differ";
    if (a.params.size() != b.params.size()) return "param count differs";
    for (size_t i = 0; i < a.params.size(); ++i)
      if (a.params[i].kind != b.params[i].kind) return "param kind differs at " + std::to_string(i);
    return region(a.body, b.body, "body");
  }

 private:
  std::unordered_map<const Value*, const Value*> map_;

  std::string region(const Region& a, const Region& b, const std::string& where) {
    if (a.args.size() != b.args.size()) return where + ": argument count differs";
    for (size_t i = 0; i < a.args.size(); ++i) {
      if (a.args[i]->type != b.args[i]->type) return where + ": argument type differs";
      map_[a.args[i].get()] = b.args[i].get();
    }
    if (a.ops.size() != b.ops.size()) return where + ": op count differs";
    for (size_t i = 0; i < a.ops.size(); ++i) {
      const Op &x = *a.ops[i], &y = *b.ops[i];
      std::string at = where + " op " + std::to_string(i) + " (" + mnemonic(x.kind) + ")";
      if (x.kind != y.kind) return at + ": kind differs";
      if (!(x.loc == y.loc)) return at + ": loc differs";
      if (y.parent != &b) return at + ": wrong parent";
      if (x.attrs.size() != y.attrs.size()) return at + ": attribute count differs";
      for (size_t k = 0; k < x.attrs.size(); ++k)
        if (x.attrs[k].name != y.attrs[k].name || !sameAttr(x.attrs[k].value, y.attrs[k].value))
          return at + ": attribute " + x.attrs[k].name + " differs";
      if (x.numOperands() != y.numOperands()) return at + ": operand count differs";
      for (size_t k = 0; k < x.numOperands(); ++k)
        if (map_[x.operand(k)] != y.operand(k)) return at + ": operand " + std::to_string(k) + " differs";
      if (x.numResults() != y.numResults()) return at + ": result count differs";
      for (size_t k = 0; k < x.numResults(); ++k) {
        if (x.result(k)->type != y.result(k)->type) return at + ": result type differs";
        map_[x.result(k)] = y.result(k);
      }
      if (x.regions.size() != y.regions.size()) return at + ": region count differs";
      for (size_t k = 0; k < x.regions.size(); ++k) {
        if (y.regions[k]->parentOp != &y) return at + ": region parent differs";
        std::string d = region(*x.regions[k], *y.regions[k], at + " region " + std::to_string(k));
        if (!d.empty()) return d;
      }
    }
    return "";
  }
};

inline std::string structuralDiff(const Function& a, const Function& b) { return StructuralDiff().run(a, b); }

// Parses `text` with a fresh DiagEngine; `diag` receives the engine (for error checks).
inline std::unique_ptr<Function> parseText(const std::string& text, DiagEngine& diag) {
  diag.setFile(std::make_shared<SourceFile>("test.ir", text));
  return parseFunction(text, diag);
}

// A kernel touching every block op kind, every dtype, 1-D and 2-D tiles, special float
// constants, odd name hints, a for nested in a for, and ifs (with and without results) in a for.
inline std::unique_ptr<Function> buildKitchenSink() {
  auto fn = std::make_unique<Function>();
  fn->name = "kitchen_sink";
  fn->loc = {1, 1};
  fn->constexprs = {{"BLOCK", 64}, {"NEG", -3}};
  auto param = [&](const char* name, Type t) {
    fn->params.push_back({name, t.isPtr ? Param::Kind::Pointer : Param::Kind::Scalar, Loc{1, 10}});
    return fn->body.addArg(t, name);
  };
  Value* xPtr = param("x_ptr", Type::ptr(DType::F32));
  Value* hPtr = param("h_ptr", Type::ptr(DType::F16));
  Value* bPtr = param("b_ptr", Type::ptr(DType::BF16));
  Value* lPtr = param("l_ptr", Type::ptr(DType::I64));
  Value* mPtr = param("m_ptr", Type::ptr(DType::I1));
  Value* n = param("N", Type::scalar(DType::I32));
  Value* big = param("BIG", Type::scalar(DType::I64));
  Value* alpha = param("alpha", Type::scalar(DType::F32));

  Builder b(&fn->body);
  uint32_t line = 2;
  auto at = [&](Builder& bb) { bb.setLoc({line++, 5}); };
  const Type f32 = Type::scalar(DType::F32), i32 = Type::scalar(DType::I32);
  const Shape sq{64, 64};

  // leaves and special constants
  at(b); Value* pid = b.programId(0);
  at(b); b.numPrograms(2);
  at(b); Value* cols = b.arange(0, 64);
  cols->name = "cols";
  at(b); b.arange(-8, 8);
  at(b); b.constFloat(f32, std::numeric_limits<double>::infinity());
  at(b); Value* ninf = b.constFloat(Type::tile(DType::F32, sq), -std::numeric_limits<double>::infinity());
  at(b); b.constFloat(f32, std::numeric_limits<double>::quiet_NaN());
  at(b); b.constFloat(f32, 1e-30);
  at(b); b.constFloat(f32, -0.0);
  at(b); b.constFloat(f32, 0.1);
  at(b); b.constFloat(f32, 5e-324);
  at(b); b.constFloat(f32, 1.7976931348623157e308);
  at(b); b.constFloat(Type::scalar(DType::F16), 1.5);
  at(b); b.constFloat(Type::tile(DType::BF16, {4}), -2.5);
  at(b); b.constInt(Type::scalar(DType::I64), std::numeric_limits<int64_t>::min());
  at(b); b.constInt(Type::scalar(DType::I64), std::numeric_limits<int64_t>::max());
  at(b); Value* yes = b.constInt(Type::scalar(DType::I1), 1);
  at(b); b.constInt(Type::tile(DType::I32, {2, 2}), -7);
  at(b); b.create(OpKind::Constant, {}, {f32}, {{"value", int64_t(3)}});  // a float constant with an int value

  // shapes, masks, pointers, loads
  at(b); Value* nTile = b.splat(n, {64});
  at(b); Value* mask = b.cmp("lt", cols, nTile);
  mask->name = "mask";
  at(b); Value* row = b.expandDims(cols, 1);
  at(b); Value* col = b.expandDims(cols, 0);
  at(b); Value* rowB = b.broadcast(row, sq);
  at(b); Value* colB = b.broadcast(col, sq);
  at(b); b.create(OpKind::Trans, {row}, {row->type.withShape({1, 64})});  // trans: <64x1> -> <1x64>
  // rank 3: reshape, trans with an order, join, split
  at(b); Value* r3 = b.create(OpKind::Reshape, {rowB}, {rowB->type.withShape({64, 2, 32})})->result();
  at(b); b.create(OpKind::Trans, {r3}, {r3->type.withShape({64, 32, 2})}, {{"order", std::vector<int64_t>{0, 2, 1}}});
  at(b); Value* j3 = b.create(OpKind::Join, {rowB, colB}, {rowB->type.withShape({64, 64, 2})})->result();
  at(b); b.create(OpKind::Split, {j3}, {rowB->type}, {{"index", int64_t(1)}});
  at(b); Value* strideT = b.splat(n, sq);
  at(b); Value* off = b.binary(OpKind::Add, b.binary(OpKind::Mul, rowB, strideT), colB);
  off->name = "off";
  at(b); Value* ptrs = b.addptr(b.splat(xPtr, sq), off);
  at(b); Value* mask2 = b.broadcast(b.expandDims(mask, 0), sq);
  at(b); Value* x = b.load(ptrs, mask2, ninf);
  x->name = "x";
  at(b); Value* x2 = b.load(ptrs, mask2);
  x2->name = "x";  // duplicate hint: prints as %x.1
  at(b); Value* xs = b.load(b.addptr(xPtr, pid));
  xs->name = "bad name!";  // sanitized to %bad_name_
  at(b); b.load(hPtr);
  at(b); b.load(bPtr);
  at(b); b.load(lPtr)->name = "7up";  // sanitized to %_7up
  at(b); b.load(mPtr);

  // elementwise
  Value* u = x;
  for (OpKind k : {OpKind::Neg, OpKind::Exp, OpKind::Exp2, OpKind::Log, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Abs,
                   OpKind::Sigmoid, OpKind::Log2, OpKind::Cos, OpKind::Sin, OpKind::Floor, OpKind::Ceil, OpKind::Erf,
                   OpKind::Asin, OpKind::Acos, OpKind::Atan, OpKind::Tan, OpKind::Sinh, OpKind::Cosh, OpKind::Tanh,
                   OpKind::Log10, OpKind::Log1p, OpKind::Expm1, OpKind::Exp10, OpKind::Cbrt, OpKind::Rcp, OpKind::Trunc,
                   OpKind::Round, OpKind::Rint}) {
    at(b); u = b.unary(k, u);
  }
  at(b); u = b.fma(u, x2, x);
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Maximum,
                   OpKind::Minimum, OpKind::Atan2, OpKind::Pow, OpKind::Hypot}) {
    at(b); u = b.binary(k, u, x2);
  }
  Value* iv = off;
  for (OpKind k : {OpKind::Not, OpKind::Neg, OpKind::Abs}) {
    at(b); iv = b.unary(k, iv);
  }
  for (OpKind k : {OpKind::Div, OpKind::Rem, OpKind::And, OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr,
                   OpKind::Umulhi}) {
    at(b); iv = b.binary(k, iv, off);
  }
  at(b); Value* notMask = b.unary(OpKind::Not, mask2);
  at(b); b.binary(OpKind::Xor, notMask, mask2);
  Value* c = nullptr;
  for (const char* pred : {"lt", "le", "gt", "ge", "eq", "ne"}) {
    at(b); c = b.cmp(pred, u, x);
  }
  at(b); Value* sel = b.select(c, u, x);
  for (DType d : {DType::F16, DType::BF16, DType::I32, DType::I64, DType::I1}) {
    at(b); b.convert(sel, d);
  }
  at(b); b.convert(mask2, DType::F32);

  // reductions
  at(b); Value* rowSum = b.reduce("sum", sel, 1);
  at(b); b.reduce("max", sel, 0);
  at(b); Value* total = b.reduce("min", rowSum, 0);
  at(b); b.argmax(sel, 1);
  at(b); b.scan("sum", sel, 1, false);
  at(b); b.scan("max", rowSum, 0, true);
  at(b); b.argmax(rowSum, 0);
  at(b); Value* a16 = b.convert(sel, DType::F16);
  at(b); Value* zero = b.constFloat(Type::tile(DType::F32, sq), 0.0);
  zero->name = "acc";
  at(b); Value* d = b.dot(a16, a16, zero);

  // loops and branches
  at(b); Value* c0 = b.constInt(i32, 0);
  at(b); Value* c1 = b.constInt(i32, 1);
  at(b); Value* c4 = b.constInt(i32, 4);
  at(b); Value* m0 = b.constFloat(f32, -std::numeric_limits<double>::infinity());
  m0->name = "m";
  at(b); Op* outer = b.forOp(c0, n, c1, {d, m0});
  outer->result(0)->name = "acc";
  outer->result(1)->name = "m";
  {
    Region& body = outer->region(0);
    Builder ib(&body);
    Value* k = body.arg(0);
    k->name = "k";
    at(ib); Op* inner = ib.forOp(c0, c4, c1, {body.arg(1)});
    {
      Builder jb(&inner->region(0));
      at(jb); Value* dd = jb.dot(a16, a16, inner->region(0).arg(1));
      at(jb); jb.yield({dd});
    }
    at(ib); Value* cond = ib.cmp("gt", k, c0);
    at(ib); Op* ifv = ib.ifOp(cond, {f32});
    {
      Builder tb(&ifv->region(0));
      at(tb); tb.yield({body.arg(2)});
      Builder eb(&ifv->region(1));
      at(eb); Value* mx = eb.binary(OpKind::Maximum, body.arg(2), xs);
      at(eb); eb.yield({mx});
    }
    at(ib); Op* ifs = ib.ifOp(yes, {});
    {
      Builder tb(&ifs->region(0));
      at(tb); tb.store(xPtr, alpha);
      at(tb); tb.yield({});
      Builder eb(&ifs->region(1));
      at(eb); eb.yield({});
    }
    at(ib); ib.yield({inner->result(0), ifv->result(0)});
  }
  at(b); Value* l0 = b.constInt(Type::scalar(DType::I64), 0);
  at(b); Value* l1 = b.constInt(Type::scalar(DType::I64), 1);
  at(b); Op* plain = b.forOp(l0, big, l1, {});
  {
    Builder pb(&plain->region(0));
    at(pb); pb.yield({});
  }
  // a while loop carrying an i32 and a tile; atomics
  at(b); Op* loop = b.whileOp({c0, d});
  loop->result(0)->name = "i";
  {
    Builder cb(&loop->region(0));
    at(cb); Value* go = cb.cmp("lt", loop->region(0).arg(0), n);
    at(cb); cb.condition(go);
    Builder wb(&loop->region(1));
    at(wb); Value* next = wb.binary(OpKind::Add, loop->region(1).arg(0), c1);
    at(wb); wb.yield({next, loop->region(1).arg(1)});
  }
  at(b); Op* none = b.whileOp({});
  {
    Builder cb(&none->region(0));
    at(cb); cb.condition(yes);
    Builder wb(&none->region(1));
    at(wb); wb.yield({});
  }
  at(b); Value* lptrs = b.addptr(b.splat(lPtr, sq), off);
  at(b); Value* lvals = b.convert(off, DType::I64);
  at(b); b.atomicRMW("add", ptrs, outer->result(0), mask2);
  at(b); b.atomicRMW("max", lptrs, lvals, nullptr, "relaxed", "cta");
  at(b); b.atomicRMW("xchg", xPtr, alpha, nullptr, "release", "sys");
  at(b); b.atomicCAS(lPtr, l0, l1, nullptr, "acquire", "gpu");
  at(b); b.atomicCAS(lptrs, lvals, lvals, mask2);
  at(b); b.debugBarrier();
  at(b); b.create(OpKind::DevicePrint, {outer->result(0), alpha, ptrs}, {}, {{"prefix", " x: "}, {"hex", int64_t(0)}});
  at(b); b.create(OpKind::DevicePrint, {}, {}, {{"prefix", " 100% \"done\""}, {"hex", int64_t(1)}});
  at(b); b.create(OpKind::DeviceAssert, {mask2}, {}, {{"msg", "mask must hold"}});
  // ptrcast: an address loaded from memory as a pointer, a tile of pointers as addresses
  at(b); Value* addr = b.load(lPtr);
  at(b); Value* viaAddr = b.ptrcast(addr, true, DType::F32);
  at(b); b.store(lptrs, b.ptrcast(ptrs, false));
  at(b); b.store(b.ptrcast(viaAddr, true, DType::I64), l1);
  at(b); b.store(ptrs, outer->result(0), mask2);
  at(b); b.store(ptrs, sel);
  at(b); b.store(xPtr, b.binary(OpKind::Add, outer->result(1), total));
  at(b); b.ret();
  return fn;
}

}  // namespace tl::test
