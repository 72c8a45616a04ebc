// Sema, the atomics (docs/language.md, "Atomics"; issue 12): atomic_add, atomic_max,
// atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg and atomic_cas on global memory,
// and debug_barrier.
//
//   old = atomic_add(ptr, val, mask=None, sem="acq_rel", scope="gpu")    (Triton's signature)
//   old = atomic_cas(ptr, cmp, val, sem="acq_rel", scope="gpu")          (mask= too, as an extra)
//
// `ptr` is a pointer or a tile of pointers; `val` (and `cmp`) broadcast to its shape and are
// converted to the pointee's dtype, as store() does; `mask` broadcasts to it. The result is the
// old values; a masked-off element gives 0 (Triton leaves it undefined). sem is "acq_rel"
// (default), "acquire", "release" or "relaxed"; scope is "gpu" (default), "cta" or "sys"; both
// are recorded on the op. dtypes: add and xchg take i32, i64 and f32; max, min, and, or, xor
// and cas take i32 and i64; anything else is a located error here (not a verifier failure).
#include "frontend/CallArgs.h"
#include "frontend/Sema.h"

namespace tl {

using namespace ast;

namespace {

// A string-valued keyword's value, or "" when it is not one of `allowed` (reported by the caller).
bool stringChoice(const PyVal& v, const std::vector<std::string>& allowed, std::string& out) {
  if (v.kind != PyVal::Kind::String) return false;
  for (const auto& s : allowed)
    if (v.s == s) {
      out = s;
      return true;
    }
  return false;
}

std::string joined(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::string("\"") + xs[i] + "\"";
  return s;
}

}  // namespace

// `v` as an operand of an atomic through `ptr`: a constant materialized in the pointee dtype,
// or a tile broadcast to the pointers' shape and converted to the pointee dtype.
Value* Sema::atomicOperand(const PyVal& v, Value* ptr, Loc loc, const std::string& fname, const char* what) {
  const Shape& shape = ptr->type.shape;
  if (v.isConst()) return materialize(v, ptr->type.dtype, shape, loc);
  if (!v.isValue() || v.v->type.isPtr) {
    error(loc, fname + "() " + what + " must be a number or a tile, got " + describe(v));
    return nullptr;
  }
  auto s = broadcastShape(v.v->type.shape, shape);
  if (!s || *s != shape) {
    error(loc, fname + "() " + what + " of shape " + v.v->type.str() + " cannot be broadcast to the pointers' shape " +
                   ptr->type.str());
    return nullptr;
  }
  return broadcastTo(convert(v.v, ptr->type.dtype, loc), shape, loc);
}

PyVal Sema::builtinAtomic(const Expr& e, const std::string& f) {
  const bool cas = f == "atomic_cas";
  const std::string kind = cas ? "cas" : f.substr(std::string("atomic_").size());
  Args a;
  const std::vector<std::string> sig = cas ? std::vector<std::string>{"pointer", "cmp", "val", "sem", "scope", "mask"}
                                           : std::vector<std::string>{"pointer", "val", "mask", "sem", "scope"};
  if (!bindArgs(e, f, sig, cas ? 3 : 2, a)) return PyVal::poison();
  const size_t semK = 3, scopeK = 4, maskK = cas ? 5 : 2;  // the slots of `sig`
  const PyVal& p = a.vals[0];
  if (!p.isValue() || !p.v->type.isPtr)
    return fail(a.locs[0], f + "() needs a pointer or a tile of pointers (e.g. ptr + offsets), got " + describe(p));
  Value* ptr = p.v;
  const DType d = ptr->type.dtype;
  const bool integer = d == DType::I32 || d == DType::I64;
  const bool floatOk = kind == "add" || kind == "xchg";
  if (!integer && !(floatOk && d == DType::F32))
    return fail(a.locs[0], f + "() on " + std::string(dtypeName(d)) + " is not supported: it takes " +
                               (floatOk ? "i32, i64 or f32" : "i32 or i64") + " memory, got a pointer to " + dtypeName(d));
  std::string sem = "acq_rel", scope = "gpu";
  static const std::vector<std::string> kSems = {"acq_rel", "acquire", "release", "relaxed"};
  static const std::vector<std::string> kScopes = {"gpu", "cta", "sys"};
  if (a.has(semK) && !stringChoice(a.vals[semK], kSems, sem))
    return fail(a.locs[semK], f + "() sem must be one of " + joined(kSems) + ", got " + describe(a.vals[semK]));
  if (a.has(scopeK) && !stringChoice(a.vals[scopeK], kScopes, scope))
    return fail(a.locs[scopeK], f + "() scope must be one of " + joined(kScopes) + ", got " + describe(a.vals[scopeK]));
  Value* cmp = cas ? atomicOperand(a.vals[1], ptr, a.locs[1], f, "cmp") : nullptr;
  const size_t valK = cas ? 2 : 1;
  Value* val = atomicOperand(a.vals[valK], ptr, a.locs[valK], f, "val");
  if (!val || (cas && !cmp)) return PyVal::poison();
  Value* mask = nullptr;
  if (a.has(maskK)) {
    mask = maskArg(a.vals[maskK], ptr->type.shape, a.locs[maskK], f);
    if (!mask) return PyVal::poison();
  }
  Builder& B = at(e.loc);
  return PyVal::value(cas ? B.atomicCAS(ptr, cmp, val, mask, sem, scope) : B.atomicRMW(kind, ptr, val, mask, sem, scope));
}

// debug_barrier(): every thread of the program waits here (a barrier in thread IR).
PyVal Sema::builtinDebugBarrier(const Expr& e) {
  Args a;
  if (!bindArgs(e, "debug_barrier", {}, 0, a)) return PyVal::poison();
  at(e.loc).debugBarrier();
  return PyVal::none();
}

}  // namespace tl
