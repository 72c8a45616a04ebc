// The rules of BlockOps.def, checked. Each case reads like the comment in the master list.
#include "ir/Verifier.h"

#include "ir/Builder.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"

#include <unordered_set>

namespace tl {

namespace {

std::string str(const Type& t) { return t.str(); }

// Returns an error message or "" — small helpers so each rule is one line below.
struct Check {
  const Op& op;
  std::string err;

  bool fail(const std::string& msg) {
    if (err.empty()) err = std::string(mnemonic(op.kind)) + ": " + msg;
    return false;
  }
  bool operands(size_t lo, size_t hi) {
    if (op.numOperands() < lo || op.numOperands() > hi)
      return fail("expected " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi)) +
                  " operands, got " + std::to_string(op.numOperands()));
    for (Value* v : op.operands)
      if (!v) return fail("null operand");
    return true;
  }
  bool results(size_t n) {
    if (op.numResults() != n)
      return fail("expected " + std::to_string(n) + " results, got " + std::to_string(op.numResults()));
    return true;
  }
  bool sameType(const Type& a, const Type& b, const char* what) {
    if (a != b) return fail(std::string(what) + " types differ: " + str(a) + " vs " + str(b));
    return true;
  }
  bool sameShape(const Type& a, const Type& b, const char* what) {
    if (a.shape != b.shape) return fail(std::string(what) + " shapes differ: " + str(a) + " vs " + str(b));
    return true;
  }
  // Both without layouts, or both with equal layouts.
  bool sameLayout(const Type& a, const Type& b, const char* what) {
    bool equal = (!a.layout && !b.layout) || (a.layout && b.layout && *a.layout == *b.layout);
    if (!equal) return fail(std::string(what) + " layouts differ: " + str(a) + " vs " + str(b));
    return true;
  }
  bool isMask(const Type& t) {
    if (t.isPtr || t.dtype != DType::I1) return fail("mask must have dtype i1, got " + str(t));
    return true;
  }
  bool intAttrIn(const char* name, int64_t lo, int64_t hi) {
    const Attr* a = op.attr(name);
    if (!a || !std::holds_alternative<int64_t>(*a)) return fail(std::string("missing integer attribute '") + name + "'");
    int64_t v = std::get<int64_t>(*a);
    if (v < lo || v > hi) return fail(std::string("attribute '") + name + "' = " + std::to_string(v) + " out of range");
    return true;
  }
  bool strAttrIn(const char* name, std::initializer_list<const char*> allowed) {
    const Attr* a = op.attr(name);
    if (!a || !std::holds_alternative<std::string>(*a)) return fail(std::string("missing string attribute '") + name + "'");
    for (const char* s : allowed)
      if (std::get<std::string>(*a) == s) return true;
    return fail(std::string("attribute '") + name + "' has unknown value '" + std::get<std::string>(*a) + "'");
  }
};

bool validShape(const Type& t) {
  for (int64_t d : t.shape)
    if (!isPowerOfTwo(d)) return false;
  if (t.layout && (t.isScalar() || t.layout->rank() != t.rank())) return false;
  return t.rank() <= kMaxTileRank;
}

// An atomic's attributes (BlockOps.def, atomic_rmw / atomic_cas) and which dtypes its kind takes.
bool atomicAttrs(const Op& op, Check& c, DType d) {
  const bool cas = op.kind == OpKind::AtomicCAS || op.kind == OpKind::AtomCasGlobal;
  if (!c.strAttrIn("sem", {"acq_rel", "acquire", "release", "relaxed"}) || !c.strAttrIn("scope", {"gpu", "cta", "sys"}))
    return false;
  const bool integer = d == DType::I32 || d == DType::I64;
  if (cas) return integer || c.fail(std::string("compare-and-swap needs i32 or i64 values, got ") + dtypeName(d));
  if (!c.strAttrIn("kind", {"add", "max", "min", "and", "or", "xor", "xchg"})) return false;
  const std::string& kind = op.strAttr("kind");
  if (kind == "add" || kind == "xchg") {
    if (integer || d == DType::F32) return true;
    return c.fail("atomic " + kind + " needs i32, i64 or f32 values, got " + dtypeName(d));
  }
  return integer || c.fail("atomic " + kind + " needs i32 or i64 values, got " + dtypeName(d));
}

// Thread IR: a register vector <Nx...> or a scalar.
bool isRegs(const Type& t) { return t.rank() <= 1 && !t.layout; }

// The rules of ThreadOps.def; `c` collects the first failure.
void verifyDebugOp(const Op& op, Check& c);

void verifyThreadOp(const Op& op, Check& c) {
  auto res = [&](size_t i = 0) -> const Type& { return op.result(i)->type; };
  auto opd = [&](size_t i) -> const Type& { return op.operand(i)->type; };
  auto vecAttr = [&](const Type& elem) {
    if (!c.intAttrIn("vec", 1, 16)) return false;
    int64_t v = op.intAttr("vec");
    if (!isPowerOfTwo(v) || v * elem.elemBytes() > 16) return c.fail("vec = " + std::to_string(v) + " must be a power of two with vec x element bytes <= 16");
    if (elem.numel() % v != 0) return c.fail("vec = " + std::to_string(v) + " must divide the register count " + std::to_string(elem.numel()));
    return true;
  };
  for (const auto& r : op.results)
    if (!isRegs(r->type)) { c.fail("thread values are scalars or register vectors, got " + str(r->type)); return; }
  switch (op.kind) {
    case OpKind::ThreadId: case OpKind::LaneId: case OpKind::WarpId:
      c.operands(0, 0) && c.results(1) && c.sameType(res(), Type::scalar(DType::I32), "result");
      break;
    case OpKind::BlockId: case OpKind::NumBlocks:
      c.operands(0, 0) && c.results(1) && c.sameType(res(), Type::scalar(DType::I32), "result") && c.intAttrIn("axis", 0, 2);
      break;
    case OpKind::RegIndex:
      if (c.operands(0, 0) && c.results(1) && (res().rank() != 1 || res().dtype != DType::I32 || res().isPtr))
        c.fail("result must be <Nxi32>, got " + str(res()));
      break;
    case OpKind::Extract:
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (opd(0).rank() != 1) { c.fail("operand must be a register vector"); break; }
      if (c.intAttrIn("index", 0, opd(0).shape[0] - 1)) c.sameType(res(), opd(0).scalarType(), "result");
      break;
    case OpKind::Pack:
      if (!(c.operands(1, 1u << 16) && c.results(1))) break;
      for (size_t i = 0; i < op.numOperands(); ++i)
        if (!opd(i).isScalar() || !c.sameType(opd(i), opd(0), "operand")) { if (c.err.empty()) c.fail("operands must be scalars"); break; }
      if (c.err.empty()) c.sameType(res(), opd(0).withShape({int64_t(op.numOperands())}), "result");
      break;
    case OpKind::Permute: {
      if (!(c.operands(1, 1) && c.results(1))) break;
      const Attr* a = op.attr("indices");
      if (!a || !std::holds_alternative<std::vector<int64_t>>(*a)) { c.fail("missing integer-list attribute 'indices'"); break; }
      const auto& idx = std::get<std::vector<int64_t>>(*a);
      int64_t n = opd(0).numel();
      for (int64_t i : idx)
        if (i < 0 || i >= n) { c.fail("index " + std::to_string(i) + " out of range for " + str(opd(0))); break; }
      if (c.err.empty()) c.sameType(res(), idx.size() == 1 ? opd(0).scalarType() : opd(0).withShape({int64_t(idx.size())}), "result");
      break;
    }
    case OpKind::RegReduce: {
      if (!(c.operands(1, 1) && c.results(1) && c.strAttrIn("kind", {"sum", "max", "min"}))) break;
      int64_t n = opd(0).numel();
      if (!c.intAttrIn("group", 1, n)) break;
      int64_t g = op.intAttr("group");
      if (n % g) { c.fail("group must divide the register count"); break; }
      if (opd(0).isPtr || opd(0).dtype == DType::I1) { c.fail("needs int or float registers"); break; }
      c.sameType(res(), n == g ? opd(0).scalarType() : opd(0).withShape({n / g}), "result");
      break;
    }
    case OpKind::ShflXor:
      if (c.operands(1, 1) && c.results(1) && c.sameType(opd(0), res(), "operand/result")) c.intAttrIn("offset", 1, 31);
      break;
    case OpKind::ShflIdx:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), res(), "operand/result"))
        c.sameType(opd(1), Type::scalar(DType::I32), "source lane");
      break;
    case OpKind::LdGlobal: {
      if (!(c.operands(1, 3) && c.results(1))) break;
      if (!opd(0).isPtr) { c.fail("operand must be pointers, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(res(), elem, "result") || !vecAttr(res())) break;
      if (op.numOperands() >= 2 && c.isMask(opd(1))) c.sameShape(opd(1), res(), "mask/result");
      if (op.numOperands() == 3) c.sameType(opd(2), res(), "other/result");
      break;
    }
    case OpKind::StGlobal: {
      if (!(c.operands(2, 3) && c.results(0))) break;
      if (!opd(0).isPtr) { c.fail("operand must be pointers, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(opd(1), elem, "value/pointee") || !vecAttr(opd(1))) break;
      if (op.numOperands() == 3 && c.isMask(opd(2))) c.sameShape(opd(2), opd(1), "mask/value");
      break;
    }
    case OpKind::Mma: {
      if (!(c.operands(3, 3) && c.results(1))) break;
      const Type &a = opd(0), &b = opd(1);
      auto instr = a.isPtr || a.rank() != 1 ? std::nullopt : mmaInstrOf(a.dtype, static_cast<int>(a.numel()));
      if (!instr) { c.fail("a must be an mma A fragment (<8xf16>, <8xbf16>, <4xf32>, <16xf8e4m3>, <16xf8e5m2>), got " + str(a)); break; }
      if (!c.sameType(b, Type::tile(a.dtype, {instr->regs(MmaOperand::B)}), "b fragment")) break;
      // f32 accumulators, or f16 ones for f16 inputs (mma ...f16.f16.f16.f16).
      const DType cd = a.dtype == DType::F16 && opd(2).dtype == DType::F16 ? DType::F16 : DType::F32;
      if (c.sameType(opd(2), Type::tile(cd, {instr->regs(MmaOperand::C)}), "c fragment"))
        c.sameType(res(), opd(2), "result");
      break;
    }
    case OpKind::Wgmma: {
      if (!(c.operands(3, 3) && c.results(1) && c.intAttrIn("n", 8, 256) && c.intAttrIn("trans_b", 0, 1))) break;
      const int64_t n = op.intAttr("n");
      if (n % 8) { c.fail("n must be a multiple of 8"); break; }
      const Attr* d = op.attr("dtype");
      const auto dt = d && std::holds_alternative<std::string>(*d) ? parseDType(std::get<std::string>(*d)) : std::nullopt;
      if (!dt || (*dt != DType::F16 && *dt != DType::BF16 && *dt != DType::F32 && !isFp8(*dt))) {
        c.fail("dtype must be \"f16\", \"bf16\", \"f32\" (read as tf32), \"f8e4m3\" or \"f8e5m2\"");
        break;
      }
      const bool half = *dt == DType::F16 || *dt == DType::BF16;
      bool ok = true;
      // a: a shared-memory address (its layout in a_swizzle, a_sbo), or this warp's A fragment in
      // registers (<8 x dtype>, the m16n8k16 A table; 16-bit inputs only).
      const bool aRegs = opd(0).isTile();
      if (aRegs && !half) ok = c.fail("a in registers is built for f16 / bf16 inputs only");
      else if (aRegs) ok = c.sameType(opd(0), Type::tile(*dt, {8}), "a fragment (registers)");
      if (ok && !half && op.intAttr("trans_b")) ok = c.fail("trans_b must be 0 for tf32 and fp8 inputs (the ISA reads them K-major only)");
      for (const char* s : {"a_swizzle", "b_swizzle"})
        if (ok && !(aRegs && s[0] == 'a') && !(c.intAttrIn(s, 32, 128) && (op.intAttr(s) == 32 || op.intAttr(s) == 64 || op.intAttr(s) == 128)))
          ok = c.fail(std::string(s) + " must be 32, 64 or 128");
      for (const char* s : {"a_sbo", "b_lbo", "b_sbo"})
        if (ok && !(aRegs && s[0] == 'a') && !(c.intAttrIn(s, 0, 0x3FFFF) && op.intAttr(s) % 16 == 0))
          ok = c.fail(std::string(s) + " must be a multiple of 16 below 2^18");
      if (!ok || (!aRegs && !c.sameType(opd(0), Type::scalar(DType::I32), "a address")) ||
          !c.sameType(opd(1), Type::scalar(DType::I32), "b address"))
        break;
      // f32 accumulators, or f16 ones for f16 inputs (wgmma ...f16.f16.f16).
      const DType cd = *dt == DType::F16 && opd(2).dtype == DType::F16 ? DType::F16 : DType::F32;
      if (c.sameType(opd(2), Type::tile(cd, {n / 2}), "c (n/2 accumulator registers)")) c.sameType(res(), opd(2), "result");
      break;
    }
    case OpKind::WgmmaWait: {
      if (!c.intAttrIn("pending", 0, 7)) break;
      if (op.numResults() != op.numOperands()) {
        c.fail("needs one result per operand (the accumulators it waits for), got " + std::to_string(op.numOperands()) +
               " operands and " + std::to_string(op.numResults()) + " results");
        break;
      }
      bool ok = true;
      for (size_t i = 0; ok && i < op.numOperands(); ++i) {
        const Type& t = op.operand(i)->type;
        if (t.isPtr || (t.dtype != DType::F32 && t.dtype != DType::F16))
          ok = c.fail("operand " + std::to_string(i) + " must be f32 or f16 accumulator registers, got " + str(t));
        else ok = c.sameType(op.result(i)->type, t, "result/operand");
      }
      break;
    }
    case OpKind::WgmmaFence: case OpKind::WgmmaCommit: case OpKind::FenceProxyAsync: case OpKind::CpAsyncCommit:
      if (c.operands(0, 0)) c.results(0);
      break;
    case OpKind::CpAsyncWait:
      if (c.operands(0, 0) && c.results(0)) c.intAttrIn("pending", 0, 63);
      break;
    case OpKind::CpAsync: {
      if (!(c.operands(2, 3) && c.results(0))) break;
      if (opd(0).isPtr || opd(0).dtype != DType::I32) { c.fail("destinations must be i32 shared byte offsets, got " + str(opd(0))); break; }
      if (!opd(1).isPtr) { c.fail("sources must be pointers, got " + str(opd(1))); break; }
      Type elem = opd(1);
      elem.isPtr = false;
      if (!c.sameShape(opd(0), opd(1), "destination/source") || !vecAttr(elem)) break;
      const int64_t bytes = op.intAttr("vec") * dtypeBytes(elem.dtype);
      if (bytes != 4 && bytes != 8 && bytes != 16) { c.fail("vec x element bytes must be 4, 8 or 16 (cp.async's sizes), got " + std::to_string(bytes)); break; }
      if (op.numOperands() == 3 && c.isMask(opd(2))) c.sameShape(opd(2), opd(1), "mask/source");
      break;
    }
    case OpKind::Ldmatrix: {
      if (!(c.operands(1, 1) && c.results(1) && c.intAttrIn("count", 1, 4) && c.intAttrIn("trans", 0, 1))) break;
      const int64_t count = op.intAttr("count");
      if (count == 3) { c.fail("count must be 1, 2 or 4"); break; }
      if (!c.sameType(opd(0), Type::scalar(DType::I32), "address")) break;
      if (res().isPtr || (res().dtype != DType::F16 && res().dtype != DType::BF16) || res().rank() != 1 || res().numel() != 2 * count)
        c.fail("result must be <" + std::to_string(2 * count) + "xf16> or <" + std::to_string(2 * count) + "xbf16>, got " + str(res()));
      break;
    }
    case OpKind::CvtTf32:
      if (!(c.operands(1, 1) && c.results(1) && c.sameType(res(), opd(0), "result/operand"))) break;
      if (opd(0).isPtr || opd(0).dtype != DType::F32) c.fail("needs f32 registers, got " + str(opd(0)));
      break;
    case OpKind::LdShared:
      if (!(c.operands(1, 2) && c.results(1))) break;
      if (opd(0).isPtr || opd(0).dtype != DType::I32) { c.fail("addresses must be i32 byte offsets, got " + str(opd(0))); break; }
      if (!c.sameShape(opd(0), res(), "address/result") || !vecAttr(res())) break;
      if (res().isPtr) { c.fail("shared memory holds no pointers"); break; }
      if (op.numOperands() == 2 && c.isMask(opd(1))) c.sameShape(opd(1), res(), "mask/result");
      break;
    case OpKind::StShared:
      if (!(c.operands(2, 3) && c.results(0))) break;
      if (opd(0).isPtr || opd(0).dtype != DType::I32) { c.fail("addresses must be i32 byte offsets, got " + str(opd(0))); break; }
      if (!c.sameShape(opd(0), opd(1), "address/value") || !vecAttr(opd(1))) break;
      if (opd(1).isPtr) { c.fail("shared memory holds no pointers"); break; }
      if (op.numOperands() == 3 && c.isMask(opd(2))) c.sameShape(opd(2), opd(1), "mask/value");
      break;
    case OpKind::AtomGlobal:
    case OpKind::AtomCasGlobal: {
      const size_t values = op.kind == OpKind::AtomCasGlobal ? 2 : 1;
      if (!(c.operands(1 + values, 2 + values) && c.results(1))) break;
      if (!opd(0).isPtr) { c.fail("operand must be pointers, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(res(), elem, "result/pointee")) break;
      for (size_t k = 1; k <= values; ++k)
        if (!c.sameType(opd(k), elem, "value/pointee")) break;
      if (!c.err.empty() || !atomicAttrs(op, c, elem.dtype)) break;
      if (op.numOperands() == 2 + values && c.isMask(opd(1 + values))) c.sameShape(opd(1 + values), res(), "mask/result");
      break;
    }
    case OpKind::Barrier:
      c.operands(0, 0) && c.results(0);
      break;
    case OpKind::PrintRegs: case OpKind::AssertRegs:
      verifyDebugOp(op, c);
      break;
    default:
      c.fail("not a thread op");
      break;
  }
}

// fp8 values are stored and converted, never computed with (docs/language.md): no arithmetic,
// math, comparison, reduction or scan takes them; dot does (it widens them to f32).
bool isArith(const Type& t) { return !t.isPtr && t.dtype != DType::I1 && !isFp8(t.dtype); }
bool isMathFloat(const Type& t) { return !t.isPtr && isFloat(t.dtype) && !isFp8(t.dtype); }

// device_print / device_assert (BlockOps.def) and print_regs / assert_regs (ThreadOps.def).
void verifyDebugOp(const Op& op, Check& c) {
  auto opd = [&](size_t i) -> const Type& { return op.operand(i)->type; };
  auto strAttr = [&](const char* name) {
    const Attr* a = op.attr(name);
    return (a && std::holds_alternative<std::string>(*a)) || c.fail(std::string("missing string attribute '") + name + "'");
  };
  auto isI1 = [&](const Type& t, const char* what) {
    return (!t.isPtr && t.dtype == DType::I1) || c.fail(std::string(what) + " must have dtype i1, got " + str(t));
  };
  if (!c.results(0) || !c.operands(op.kind == OpKind::DevicePrint ? 0 : 1, 1u << 16)) return;
  if (op.kind == OpKind::DevicePrint) {
    strAttr("prefix") && c.intAttrIn("hex", 0, 1);
    return;
  }
  if (op.kind == OpKind::DeviceAssert) {
    c.operands(1, 1) && isI1(opd(0), "condition") && strAttr("msg");
    return;
  }
  // Thread ops: registers of one count, the element's coordinates in a tile of `shape`.
  const Attr* sa = op.attr("shape");
  if (!sa || !std::holds_alternative<std::vector<int64_t>>(*sa)) { c.fail("missing integer-list attribute 'shape'"); return; }
  const auto& shape = std::get<std::vector<int64_t>>(*sa);
  if (shape.size() > static_cast<size_t>(kMaxTileRank)) { c.fail("shape has rank > " + std::to_string(kMaxTileRank)); return; }
  const size_t head = op.kind == OpKind::PrintRegs ? 2 : 1;  // mask + value, or cond
  const bool prefixOnly = op.kind == OpKind::PrintRegs && op.numOperands() == 1;
  if (prefixOnly ? !shape.empty() : op.numOperands() != head + shape.size()) {
    c.fail("expected " + std::to_string(head + shape.size()) + " operands for shape rank " + std::to_string(shape.size()) +
           ", got " + std::to_string(op.numOperands()));
    return;
  }
  if (!isI1(opd(0), op.kind == OpKind::PrintRegs ? "mask" : "condition")) return;
  for (size_t i = 1; i < op.numOperands(); ++i)
    if (!c.sameShape(opd(i), opd(0), "operand")) return;
  for (size_t i = head; i < op.numOperands(); ++i)
    if (opd(i).isPtr || opd(i).dtype != DType::I32) { c.fail("indices must be i32, got " + str(opd(i))); return; }
  if (op.kind == OpKind::PrintRegs) strAttr("prefix") && c.intAttrIn("hex", 0, 1) && c.intAttrIn("operand", -1, 1 << 16);
  else strAttr("msg");
}


}  // namespace

// A trans's permutation: its `order` attribute, or [1, 0] when absent (rank 2 only).
std::vector<int> transOrder(const Op& op) {
  const Attr* a = op.attr("order");
  const auto* list = a ? std::get_if<std::vector<int64_t>>(a) : nullptr;
  if (!list) return op.numOperands() == 1 && op.operand(0)->type.rank() == 2 ? std::vector<int>{1, 0} : std::vector<int>{};
  return std::vector<int>(list->begin(), list->end());
}

std::optional<std::string> verifyOp(const Op& op) {
  Check c{op, {}};
  for (const auto& r : op.results)
    if (!validShape(r->type)) c.fail("result type " + str(r->type) + " must have rank <= " + std::to_string(kMaxTileRank) + " and power-of-two dims");
  if (!c.err.empty()) return c.err;

  auto res = [&](size_t i = 0) -> const Type& { return op.result(i)->type; };
  auto opd = [&](size_t i) -> const Type& { return op.operand(i)->type; };

  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      c.operands(0, 0) && c.results(1) && c.sameType(res(), Type::scalar(DType::I32), "result") &&
          c.intAttrIn("axis", 0, 2);
      break;
    case OpKind::Constant: {
      if (!(c.operands(0, 0) && c.results(1))) break;
      const Attr* v = op.attr("value");
      if (res().isPtr) c.fail("constants cannot be pointers");
      else if (!v) c.fail("missing attribute 'value'");
      else if (isInt(res().dtype) && !std::holds_alternative<int64_t>(*v))
        c.fail("integer constant needs an integer value");
      else if (std::holds_alternative<std::string>(*v)) c.fail("value must be a number");
      // An integer constant lies inside its dtype's range: i1 is 0 or 1, i32 fits 32 bits.
      else if (isInt(res().dtype)) {
        const int64_t x = std::get<int64_t>(*v);
        if (res().dtype == DType::I1 && x != 0 && x != 1)
          c.fail("i1 constant must be 0 or 1, got " + std::to_string(x));
        else if (res().dtype == DType::I32 && (x < INT32_MIN || x > INT32_MAX))
          c.fail("i32 constant " + std::to_string(x) + " is outside i32's range");
      }
      break;
    }
    case OpKind::Arange: {
      if (!(c.operands(0, 0) && c.results(1))) break;
      // The values are i32, so start and end must fit in i32 (this also keeps end - start exact).
      if (!(c.intAttrIn("start", INT32_MIN, INT32_MAX) && c.intAttrIn("end", INT32_MIN, INT32_MAX))) break;
      int64_t s = op.intAttr("start"), e = op.intAttr("end");
      if (!isPowerOfTwo(e - s)) c.fail("end - start must be a power of two");
      else c.sameType(res().withoutLayout(), Type::tile(DType::I32, {e - s}), "result");
      break;
    }
    case OpKind::Splat:
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (!opd(0).isScalar()) c.fail("operand must be a scalar, got " + str(opd(0)));
      else if (!res().isTile()) c.fail("result must be a tile");
      else c.sameType(res().scalarType(), opd(0), "element");
      break;
    case OpKind::ConvertLayout:
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (!opd(0).layout || !res().layout) c.fail("operand and result need layouts");
      else c.sameType(res().withoutLayout(), opd(0).withoutLayout(), "operand/result");
      break;
    case OpKind::Trans: {
      // (tile x) -> x with dims permuted by `order` (result dim j = operand dim order[j]); with
      // layouts, the result's is the operand's (blocked) permuted the same way.
      if (!(c.operands(1, 1) && c.results(1))) break;
      const Type &a = opd(0), &r = res();
      if (!a.isTile()) { c.fail("operand must be a tile, got " + str(a)); break; }
      const std::vector<int> order = transOrder(op);
      if (order.empty()) { c.fail("operand must be a rank-2 tile without attribute 'order', got " + str(a)); break; }
      std::vector<int> seen(static_cast<size_t>(a.rank()), 0);
      bool perm = static_cast<int>(order.size()) == a.rank();
      for (int d : order) perm = perm && d >= 0 && d < a.rank() && !seen[static_cast<size_t>(d)]++;
      if (!perm) { c.fail("attribute 'order' must be a permutation of the operand's " + std::to_string(a.rank()) + " dims"); break; }
      Shape s;
      for (int d : order) s.push_back(a.shape[static_cast<size_t>(d)]);
      if (!c.sameType(r.withoutLayout(), a.withoutLayout().withShape(s), "result")) break;
      if (a.layout || r.layout) {
        if (!a.layout || !r.layout || a.layout->kind() != Layout::Kind::Blocked || !(*permutedLayout(*a.layout, order) == *r.layout))
          c.fail("result layout must be the operand's (blocked) with dims permuted: " + str(a) + " vs " + str(r));
      }
      break;
    }
    case OpKind::Reshape:
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (!opd(0).isTile() || !res().isTile()) c.fail("operand and result must be tiles");
      else if (opd(0).numel() != res().numel()) c.fail("cannot reshape " + str(opd(0)) + " to " + str(res()) + ": element counts differ");
      else c.sameType(res().scalarType(), opd(0).scalarType(), "element");
      break;
    case OpKind::Join: {
      if (!(c.operands(2, 2) && c.results(1))) break;
      if (!opd(0).isTile() || !c.sameType(opd(1).withoutLayout(), opd(0).withoutLayout(), "operand")) {
        if (c.err.empty()) c.fail("operands must be tiles");
        break;
      }
      Shape s = opd(0).shape;
      s.push_back(2);
      c.sameType(res().withoutLayout(), opd(0).withoutLayout().withShape(s), "result");
      break;
    }
    case OpKind::Split: {
      if (!(c.operands(1, 1) && c.results(1) && c.intAttrIn("index", 0, 1))) break;
      const Type& a = opd(0);
      if (a.rank() < 2 || a.shape.back() != 2) { c.fail("operand's last dim must be 2 (and rank >= 2), got " + str(a)); break; }
      Shape s = a.shape;
      s.pop_back();
      c.sameType(res().withoutLayout(), a.withoutLayout().withShape(s), "result");
      break;
    }
    case OpKind::Broadcast: {
      if (!(c.operands(1, 1) && c.results(1))) break;
      const Type &a = opd(0), &r = res();
      if (!a.isTile() || a.rank() != r.rank()) { c.fail("operand and result must be tiles of equal rank"); break; }
      if (!c.sameType(a.scalarType(), r.scalarType(), "element") || !c.sameLayout(a, r, "operand/result")) break;
      for (int i = 0; i < a.rank(); ++i)
        if (a.shape[i] != r.shape[i] && a.shape[i] != 1) { c.fail("cannot broadcast " + str(a) + " to " + str(r)); break; }
      break;
    }
    case OpKind::ExpandDims: {
      if (!(c.operands(1, 1) && c.results(1) && c.intAttrIn("axis", 0, opd(0).rank()))) break;
      Shape s = opd(0).shape;
      s.insert(s.begin() + op.intAttr("axis"), 1);
      if (!c.sameType(res().withoutLayout(), opd(0).withShape(s), "result")) break;
      // With layouts: the operand is a slice of the result's layout along `axis`.
      if (opd(0).layout || res().layout) {
        const auto &in = opd(0).layout, &out = res().layout;
        if (!in || !out || in->kind() != Layout::Kind::Slice || in->sliceDim() != op.intAttr("axis") ||
            !(*in->parent() == *out))
          c.fail("operand layout must be #slice<dim=axis> of the result's layout: " + str(opd(0)) + " vs " + str(res()));
      }
      break;
    }
    case OpKind::Convert:
      if (c.operands(1, 1) && c.results(1) && c.sameShape(opd(0), res(), "operand/result") &&
          c.sameLayout(opd(0), res(), "operand/result"))
        if (opd(0).isPtr || res().isPtr) c.fail("cannot convert pointers");
      break;
    case OpKind::Neg: case OpKind::Abs:
      if (c.operands(1, 1) && c.results(1) && c.sameType(opd(0), res(), "operand/result"))
        if (!isArith(res())) c.fail("needs an int or float operand, got " + str(res()));
      break;
    case OpKind::Not:
      if (c.operands(1, 1) && c.results(1) && c.sameType(opd(0), res(), "operand/result"))
        if (res().isPtr || !isInt(res().dtype)) c.fail("needs an integer or i1 operand, got " + str(res()));
      break;
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Log: case OpKind::Sqrt: case OpKind::Rsqrt:
    case OpKind::Sigmoid: case OpKind::Log2: case OpKind::Cos: case OpKind::Sin: case OpKind::Floor:
    case OpKind::Ceil: case OpKind::Erf:
    case OpKind::Asin: case OpKind::Acos: case OpKind::Atan: case OpKind::Tan: case OpKind::Sinh: case OpKind::Cosh:
    case OpKind::Tanh: case OpKind::Log10: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Exp10:
    case OpKind::Cbrt: case OpKind::Rcp: case OpKind::Trunc: case OpKind::Round: case OpKind::Rint:
      if (c.operands(1, 1) && c.results(1) && c.sameType(opd(0), res(), "operand/result"))
        if (!isMathFloat(res())) c.fail("needs a float operand (f16, bf16 or f32: fp8 is converted first), got " + str(res()));
      break;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Maximum: case OpKind::Minimum:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), opd(1), "operand") &&
          c.sameType(opd(0), res(), "operand/result"))
        if (!isArith(res())) c.fail("needs int or float operands, got " + str(res()));
      if (op.kind == OpKind::Div && op.hasAttr("rounding") && c.strAttrIn("rounding", {"rn"}) && !isFloat(res().dtype))
        c.fail("rounding applies to float division only, got " + str(res()));
      break;
    case OpKind::And: case OpKind::Or: case OpKind::Xor:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), opd(1), "operand") &&
          c.sameType(opd(0), res(), "operand/result"))
        if (res().isPtr || !isInt(res().dtype)) c.fail("needs integer or i1 operands, got " + str(res()));
      break;
    case OpKind::Shl: case OpKind::Shr: case OpKind::Umulhi:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), opd(1), "operand") &&
          c.sameType(opd(0), res(), "operand/result"))
        if (res().isPtr || (res().dtype != DType::I32 && res().dtype != DType::I64))
          c.fail("needs i32 or i64 operands, got " + str(res()));
      break;
    case OpKind::Atan2: case OpKind::Pow: case OpKind::Hypot:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), opd(1), "operand") &&
          c.sameType(opd(0), res(), "operand/result"))
        if (!isMathFloat(res())) c.fail("needs float operands (f16, bf16 or f32: fp8 is converted first), got " + str(res()));
      break;
    case OpKind::Fma:
      if (c.operands(3, 3) && c.results(1) && c.sameType(opd(0), opd(1), "operand") && c.sameType(opd(0), opd(2), "operand") &&
          c.sameType(opd(0), res(), "operand/result"))
        if (!isMathFloat(res())) c.fail("needs float operands (f16, bf16 or f32: fp8 is converted first), got " + str(res()));
      break;
    case OpKind::Cmp:
      if (c.operands(2, 2) && c.results(1) && c.sameType(opd(0), opd(1), "operand") &&
          c.sameType(res(), opd(0).withDType(DType::I1), "result") && c.strAttrIn("pred", {"lt", "le", "gt", "ge", "eq", "ne"})) {
        if (opd(0).isPtr) c.fail("cannot compare pointers");
        else if (isFp8(opd(0).dtype)) c.fail("cannot compare fp8 values (convert them to f16 or f32 first), got " + str(opd(0)));
      }
      break;
    case OpKind::Select:
      if (c.operands(3, 3) && c.results(1) && c.isMask(opd(0)) && c.sameShape(opd(0), opd(1), "condition/value") &&
          c.sameLayout(opd(0), opd(1), "condition/value") &&
          c.sameType(opd(1), opd(2), "value"))
        c.sameType(opd(1), res(), "value/result");
      break;
    case OpKind::AddPtr:
      if (!(c.operands(2, 2) && c.results(1))) break;
      if (!opd(0).isPtr) c.fail("first operand must be a pointer, got " + str(opd(0)));
      else if (opd(1).isPtr || (opd(1).dtype != DType::I32 && opd(1).dtype != DType::I64))
        c.fail("offset must be i32 or i64, got " + str(opd(1)));
      else if (c.sameShape(opd(0), opd(1), "pointer/offset") && c.sameLayout(opd(0), opd(1), "pointer/offset"))
        c.sameType(res(), opd(0), "result");
      break;
    case OpKind::PtrCast:
      if (c.operands(1, 1) && c.results(1) && c.sameShape(opd(0), res(), "operand/result") &&
          c.sameLayout(opd(0), res(), "operand/result")) {
        auto isI64 = [](const Type& t) { return !t.isPtr && t.dtype == DType::I64; };
        if (!(opd(0).isPtr || isI64(opd(0))) || !(res().isPtr || isI64(res())) || (!opd(0).isPtr && !res().isPtr))
          c.fail("casts between i64 and pointers (or two pointer types), got " + str(opd(0)) + " -> " + str(res()));
      }
      break;
    case OpKind::Load: {
      if (!(c.operands(1, 3) && c.results(1))) break;
      if (!opd(0).isPtr) { c.fail("operand must be a pointer, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(res(), elem, "result")) break;
      if (op.numOperands() >= 2 && c.isMask(opd(1)) && c.sameShape(opd(1), res(), "mask/result"))
        c.sameLayout(opd(1), res(), "mask/result");
      if (op.numOperands() == 3) c.sameType(opd(2), res(), "other/result");
      break;
    }
    case OpKind::Store: {
      if (!(c.operands(2, 3) && c.results(0))) break;
      if (!opd(0).isPtr) { c.fail("operand must be a pointer, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(opd(1), elem, "value/pointee")) break;
      if (op.numOperands() == 3 && c.isMask(opd(2)) && c.sameShape(opd(2), opd(1), "mask/value"))
        c.sameLayout(opd(2), opd(1), "mask/value");
      break;
    }
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS: {
      const size_t values = op.kind == OpKind::AtomicCAS ? 2 : 1;
      if (!(c.operands(1 + values, 2 + values) && c.results(1))) break;
      if (!opd(0).isPtr) { c.fail("operand must be a pointer, got " + str(opd(0))); break; }
      Type elem = opd(0);
      elem.isPtr = false;
      if (!c.sameType(res(), elem, "result/pointee")) break;
      for (size_t k = 1; k <= values; ++k)
        if (!c.sameType(opd(k), elem, "value/pointee")) break;
      if (!c.err.empty() || !atomicAttrs(op, c, elem.dtype)) break;
      if (op.numOperands() == 2 + values && c.isMask(opd(1 + values)) && c.sameShape(opd(1 + values), res(), "mask/result"))
        c.sameLayout(opd(1 + values), res(), "mask/result");
      break;
    }
    case OpKind::DebugBarrier:
      c.operands(0, 0) && c.results(0);
      break;
    case OpKind::DevicePrint:
    case OpKind::DeviceAssert:
      verifyDebugOp(op, c);
      break;
    case OpKind::Reduce:
    case OpKind::Argmax: {
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (!opd(0).isTile() || !isArith(opd(0))) { c.fail("operand must be an int or float tile, got " + str(opd(0))); break; }
      if (!c.intAttrIn("axis", 0, opd(0).rank() - 1)) break;
      int axis = static_cast<int>(op.intAttr("axis"));
      if (op.kind == OpKind::Reduce) {
        if (!c.strAttrIn("kind", {"sum", "max", "min"}) ||
            !c.sameType(res().withoutLayout(), opd(0).withShape(reducedShape(opd(0).shape, axis)), "result"))
          break;
      } else if (!c.sameType(res().withoutLayout(), Type::tile(DType::I32, reducedShape(opd(0).shape, axis)), "result")) {
        break;
      }
      // With layouts: a tile result has the operand's layout sliced along `axis`.
      if (res().isTile() && (opd(0).layout || res().layout)) {
        const auto &in = opd(0).layout, &out = res().layout;
        if (!in || !out || out->kind() != Layout::Kind::Slice || out->sliceDim() != axis || !(*out->parent() == *in))
          c.fail("result layout must be #slice<dim=axis> of the operand's layout: " + str(opd(0)) + " vs " + str(res()));
      }
      break;
    }
    case OpKind::Scan:  // BlockOps.def: the operand's type, layout included
      if (!(c.operands(1, 1) && c.results(1))) break;
      if (!opd(0).isTile() || !isArith(opd(0))) { c.fail("operand must be an int or float tile, got " + str(opd(0))); break; }
      if (c.strAttrIn("kind", {"sum", "prod", "max", "min"}) && c.intAttrIn("axis", 0, opd(0).rank() - 1) &&
          c.intAttrIn("reverse", 0, 1))
        c.sameType(res(), opd(0), "result/operand");
      break;
    case OpKind::Dot: {
      // 2-D, or batched: one leading batch dim on all three.
      if (!(c.operands(3, 3) && c.results(1))) break;
      const Type &a = opd(0), &b = opd(1), &acc = opd(2);
      const int r = a.rank();
      if ((r != 2 && r != 3) || b.rank() != r || acc.rank() != r) { c.fail("operands must be 2-D tiles, or 3-D (batched) tiles"); break; }
      if (a.isPtr || b.isPtr || !isFloat(a.dtype) || a.dtype != b.dtype) { c.fail("a and b must be float tiles of one dtype, got " + str(a) + " and " + str(b)); break; }
      if (r == 3 && a.shape[0] != b.shape[0]) { c.fail("batch dimensions differ: " + str(a) + " @ " + str(b)); break; }
      if (a.shape[r - 1] != b.shape[r - 2]) { c.fail("inner dimensions differ: " + str(a) + " @ " + str(b)); break; }
      Shape cs = {a.shape[r - 2], b.shape[r - 1]};
      if (r == 3) cs.insert(cs.begin(), a.shape[0]);
      // f32 accumulators, or f16 for f16 inputs (out_dtype=tl.float16).
      const DType accDtype = acc.dtype == DType::F16 && a.dtype == DType::F16 ? DType::F16 : DType::F32;
      if (c.sameType(acc.withoutLayout(), Type::tile(accDtype, cs), "accumulator"))
        c.sameType(res(), acc, "result");
      if (op.hasAttr("precision") && c.strAttrIn("precision", {"ieee", "tf32", "tf32x3"}) && a.dtype != DType::F32)
        c.fail("precision applies to f32 inputs only, got " + str(a));
      if (op.hasAttr("max_imprecise_acc")) {
        const int64_t v = op.intAttr("max_imprecise_acc");
        if (a.dtype != DType::F8E4M3 && a.dtype != DType::F8E5M2) c.fail("max_imprecise_acc applies to fp8 inputs only, got " + str(a));
        else if (v < 1 || v > a.shape[r - 1]) c.fail("max_imprecise_acc must be in [1, K = " + std::to_string(a.shape[r - 1]) + "], got " + std::to_string(v));
      }
      break;
    }
    case OpKind::For: {
      if (op.numOperands() < 3) { c.fail("needs lo, hi and step operands"); break; }
      if (!c.operands(3, 1u << 20)) break;
      const Type& it = opd(0);
      if (!it.isScalar() || it.isPtr || (it.dtype != DType::I32 && it.dtype != DType::I64)) { c.fail("bounds must be i32 or i64 scalars"); break; }
      if (!(c.sameType(opd(1), it, "bound") && c.sameType(opd(2), it, "step"))) break;
      if (op.numResults() != op.numOperands() - 3) { c.fail("needs one result per carried value"); break; }
      for (size_t i = 0; i < op.numResults(); ++i)
        if (!c.sameType(res(i), opd(3 + i), "carried value/result")) break;
      if (!c.err.empty()) break;
      if (op.regions.size() != 1) { c.fail("needs exactly one region"); break; }
      const Region& body = op.region(0);
      if (body.args.size() != op.numResults() + 1) { c.fail("body needs the iv and one argument per carried value"); break; }
      if (!c.sameType(body.arg(0)->type, it, "iv")) break;
      for (size_t i = 0; i < op.numResults(); ++i)
        if (!c.sameType(body.arg(i + 1)->type, res(i), "body argument/result")) break;
      break;
    }
    case OpKind::If:
      if (!(c.operands(1, 1))) break;
      if (opd(0) != Type::scalar(DType::I1)) { c.fail("condition must be an i1 scalar, got " + str(opd(0))); break; }
      if (op.regions.size() != 2) { c.fail("needs a then and an else region"); break; }
      for (const auto& r : op.regions)
        if (!r->args.empty()) c.fail("branches take no arguments");
      break;
    case OpKind::While: {
      if (!c.operands(0, 1u << 20)) break;
      if (op.numResults() != op.numOperands()) { c.fail("needs one result per carried value"); break; }
      for (size_t i = 0; i < op.numResults(); ++i)
        if (!c.sameType(res(i), opd(i), "carried value/result")) break;
      if (!c.err.empty()) break;
      if (op.regions.size() != 2) { c.fail("needs a cond and a body region"); break; }
      for (const auto& r : op.regions) {
        if (r->args.size() != op.numResults()) { c.fail("cond and body need one argument per carried value"); break; }
        for (size_t i = 0; i < op.numResults(); ++i)
          if (!c.sameType(r->arg(i)->type, res(i), "region argument/result")) break;
        if (!c.err.empty()) break;
      }
      break;
    }
    case OpKind::Condition:
      if (c.operands(1, 1) && c.results(0) && opd(0) != Type::scalar(DType::I1))
        c.fail("condition must be an i1 scalar, got " + str(opd(0)));
      break;
    case OpKind::Yield:
      c.results(0);
      break;
    case OpKind::Return:
      c.operands(0, 0) && c.results(0);
      break;
    case OpKind::NumKinds:
      c.fail("invalid op kind");
      break;
    default:
      verifyThreadOp(op, c);
      break;
  }
  if (c.err.empty()) return std::nullopt;
  return c.err;
}

namespace {

struct FunctionVerifier {
  const Function& fn;
  std::string out{};
  std::vector<std::unordered_set<const Value*>> scopes{};

  void error(Loc loc, const std::string& msg) {
    out += renderDiagnostic(fn.source.get(), Severity::Error, loc, "IR verifier: " + msg);
  }

  // Block IR: either no tile has a layout, or (after layout assignment) every tile has one, for
  // the function's num_warps.
  int tilesWithLayout = 0, tilesWithout = 0;
  bool mixReported = false;
  void checkLayout(const Op& op, const Type& t) {
    if (fn.level != IRLevel::Block || !t.isTile()) return;
    (t.layout ? tilesWithLayout : tilesWithout)++;
    if (t.layout && fn.numWarps > 0 && t.layout->numWarps() != fn.numWarps)
      error(op.loc, std::string(mnemonic(op.kind)) + ": layout " + t.layout->str() + " is for " +
                        std::to_string(t.layout->numWarps()) + " warps, the function has " + std::to_string(fn.numWarps));
    if (tilesWithLayout && tilesWithout && !mixReported) {
      error(op.loc, std::string(mnemonic(op.kind)) + ": some tiles have layouts and some do not");
      mixReported = true;
    }
  }

  bool visible(const Value* v) const {
    for (const auto& s : scopes)
      if (s.count(v)) return true;
    return false;
  }

  // Checks a region whose terminator must be `term`, yielding `yieldTypes` when it is a yield.
  void region(const Region& r, OpKind term, const std::vector<Type>* yieldTypes) {
    scopes.emplace_back();
    for (const auto& a : r.args) scopes.back().insert(a.get());
    if (r.ops.empty() || r.ops.back()->kind != term) {
      error(r.parentOp ? r.parentOp->loc : fn.loc,
            std::string("region must end with '") + mnemonic(term) + "'");
    }
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const Op& op = *r.ops[i];
      if (op.parent != &r) error(op.loc, std::string(mnemonic(op.kind)) + ": wrong parent region");
      if (op.info().category == OpCategory::Terminator && i + 1 != r.ops.size())
        error(op.loc, std::string(mnemonic(op.kind)) + " must be the last op of its region");
      for (Value* v : op.operands)
        if (v && !visible(v))
          error(op.loc, std::string(mnemonic(op.kind)) + ": operand used before it is defined (or out of scope)");
      for (size_t k = 0; k < op.numOperands(); ++k) {  // a wgmma's registers are in flight until its wait
        const Value* v = op.operand(k);
        if (v && !v->isRegionArg() && v->def && v->def->kind == OpKind::Wgmma &&
            !((op.kind == OpKind::Wgmma && k == 2) || op.kind == OpKind::WgmmaWait))
          error(op.loc, std::string(mnemonic(op.kind)) + ": reads a wgmma's accumulator registers before a wgmma_wait "
                                                         "hands them on (only another wgmma's c or a wgmma_wait may)");
      }
      if (!op.info().allowedIn(fn.level))
        error(op.loc, std::string(mnemonic(op.kind)) + " is not allowed in " +
                          (fn.level == IRLevel::Thread ? "thread" : "block") + " IR");
      if (auto e = verifyOp(op)) error(op.loc, *e);
      for (const auto& res : op.results) checkLayout(op, res->type);
      if (op.kind == OpKind::Yield && yieldTypes) {
        if (op.numOperands() != yieldTypes->size()) {
          error(op.loc, "yield: expected " + std::to_string(yieldTypes->size()) + " values, got " +
                            std::to_string(op.numOperands()));
        } else {
          for (size_t k = 0; k < op.numOperands(); ++k)
            if (op.operand(k) && op.operand(k)->type != (*yieldTypes)[k])
              error(op.loc, "yield: value " + std::to_string(k) + " has type " + op.operand(k)->type.str() +
                                ", expected " + (*yieldTypes)[k].str());
        }
      }
      if (op.kind == OpKind::For || op.kind == OpKind::If) {
        std::vector<Type> types;
        for (const auto& res : op.results) types.push_back(res->type);
        for (const auto& sub : op.regions) region(*sub, OpKind::Yield, &types);
      } else if (op.kind == OpKind::While && op.regions.size() == 2) {
        std::vector<Type> types;
        for (const auto& res : op.results) types.push_back(res->type);
        region(op.region(0), OpKind::Condition, nullptr);
        region(op.region(1), OpKind::Yield, &types);
      } else if (!op.regions.empty()) {
        error(op.loc, std::string(mnemonic(op.kind)) + " cannot have regions");
      }
      for (const auto& res : op.results) scopes.back().insert(res.get());
    }
    scopes.pop_back();
  }
};

}  // namespace

std::string verifyFunction(const Function& fn) {
  FunctionVerifier v{fn};
  if (fn.params.size() != fn.body.args.size())
    v.error(fn.loc, "function has " + std::to_string(fn.params.size()) + " params but " +
                        std::to_string(fn.body.args.size()) + " body arguments");
  for (size_t i = 0; i < fn.params.size() && i < fn.body.args.size(); ++i)
    if ((fn.params[i].kind == Param::Kind::Pointer) != fn.body.arg(i)->type.isPtr ||
        !fn.body.arg(i)->type.isScalar())
      v.error(fn.params[i].loc, "parameter '" + fn.params[i].name + "' has type " + fn.body.arg(i)->type.str());
  v.region(fn.body, OpKind::Return, nullptr);
  return v.out;
}

}  // namespace tl
