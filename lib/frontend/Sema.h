// Semantic analysis + IR generation (internal to the front end; the public entry point is
// compileKernel() in Frontend.h).
//
// Sema walks a kernel's AST with an environment of Python-level values (PyVal): compile-time
// constants (constexpr ints, weak literals, dtypes, tuples) are folded, everything else is an IR
// Value built through tl::Builder. Each op carries the Loc of the source expression that caused
// it. Promotion, broadcasting and conversions are made explicit (convert / splat / broadcast /
// expand_dims ops), so the block IR never relies on implicit rules.
//
// Expects: a parsed kernel and a Specialization giving every runtime parameter a type and every
// constexpr a value. Guarantees: either a Function that passes verifyFunction(), or nullptr with
// located errors in the DiagEngine. After an error, the offending value becomes "poison", which
// silences follow-up errors that depend on it, so several independent errors are reported.
//
// The code is split by topic: SemaExpr.cpp (operators, promotion, broadcasting),
// SemaBuiltins.cpp (load, store, reductions, dot, ...), SemaStmt.cpp (statements, for/if,
// compileKernel).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "ir/Builder.h"

namespace tl {

// A Python-level value during analysis.
struct PyVal {
  enum class Kind {
    Poison,  // the result of an error: every use is silently poison too
    Int,     // compile-time integer (constexpr parameter, int literal, folded expression): weak
    Float,   // compile-time float (float literal, inf): weak
    Bool,    // True / False, or a folded comparison
    Value,   // an IR value (scalar or tile, maybe a pointer)
    DType,   // a dtype name such as f16
    None,    // None
    Tuple,   // (a, b): shapes
    String,  // a string literal: s
    Module,  // an imported module: s is its dotted path ("triton.language")
    Function,  // a function: a @jit function of the file (fn), or the built-in named s
    BlockPtr,    // tl.make_block_ptr: items {base, shape, strides, offsets, block_shape, order}
    TensorDesc,  // tl.make_tensor_descriptor: items {base, shape, strides, block_shape}
  };
  Kind kind = Kind::Poison;
  int64_t i = 0;
  double f = 0;
  Value* v = nullptr;
  DType dtype = DType::F32;
  bool ptrTo = false;              // DType: the pointer type to `dtype` (x_ptr.dtype)
  std::vector<PyVal> items;
  std::string s;                   // String contents; Module path; built-in Function name; a DType
                                   // tilelab does not have (tl.float8e5: comparable, refused when used)
  const ast::Kernel* fn = nullptr; // Function: a @jit function of the file

  static PyVal poison() { return PyVal{}; }
  static PyVal integer(int64_t x) { PyVal p; p.kind = Kind::Int; p.i = x; return p; }
  static PyVal real(double x) { PyVal p; p.kind = Kind::Float; p.f = x; return p; }
  static PyVal boolean(bool b) { PyVal p; p.kind = Kind::Bool; p.i = b; return p; }
  static PyVal value(Value* x) { PyVal p; p.kind = x ? Kind::Value : Kind::Poison; p.v = x; return p; }
  static PyVal dtypeVal(DType d) { PyVal p; p.kind = Kind::DType; p.dtype = d; return p; }
  static PyVal none() { PyVal p; p.kind = Kind::None; return p; }
  static PyVal tuple(std::vector<PyVal> xs) { PyVal p; p.kind = Kind::Tuple; p.items = std::move(xs); return p; }
  static PyVal str(std::string x) { PyVal p; p.kind = Kind::String; p.s = std::move(x); return p; }
  static PyVal module(std::string path) { PyVal p; p.kind = Kind::Module; p.s = std::move(path); return p; }
  static PyVal builtin(std::string name) { PyVal p; p.kind = Kind::Function; p.s = std::move(name); return p; }
  static PyVal function(const ast::Kernel* f) { PyVal p; p.kind = Kind::Function; p.fn = f; p.s = f->name; return p; }

  bool isPoison() const { return kind == Kind::Poison; }
  bool isConst() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool isIntConst() const { return kind == Kind::Int || kind == Kind::Bool; }
  bool isValue() const { return kind == Kind::Value; }
  double asDouble() const { return kind == Kind::Float ? f : static_cast<double>(i); }
};

bool sameVal(const PyVal& a, const PyVal& b);

// A variable: its value and where it was last assigned.
struct Binding {
  PyVal val;
  Loc loc;
};
using Env = std::map<std::string, Binding>;

// The largest tile (elements) a kernel may build: keeps the interpreters' memory bounded.
constexpr int64_t kMaxTileElems = int64_t(1) << 20;
// The most iterations tl.static_range unrolls, and the deepest chain of inlined @jit calls.
constexpr int64_t kMaxStaticTrips = 4096;
constexpr size_t kMaxInlineDepth = 64;

class Sema {
 public:
  Sema(const ParsedKernel& pk, const Specialization& spec, DiagEngine& diag)
      : pk_(pk), spec_(spec), diag_(diag) {}
  std::unique_ptr<Function> run();

 private:
  const ParsedKernel& pk_;
  const Specialization& spec_;
  DiagEngine& diag_;
  Builder b_;
  std::unique_ptr<Function> fn_;
  Env env_;
  Env globals_;  // imports, module-level constants and the file's functions: every function sees them
  std::map<std::string, std::string> scopeNotes_;  // why a name is not visible here any more
  std::set<const Value*> paramValues_;             // the runtime parameters' values
  // Inlined @jit calls, innermost last (for recursion checks and `return`).
  struct Frame {
    const ast::Kernel* fn;
    Loc callLoc;
  };
  std::vector<Frame> frames_;
  int loopDepth_ = 0;  // loops around the statement being compiled, in the current function
  bool triton_ = false;  // the file imports triton: Python's min/max are minimum/maximum
  // The rest of the enclosing blocks, innermost last, that runs after the current block falls
  // off its end; {nullptr, 0} is the end of the function (an implicit `return None`).
  using Cont = std::vector<std::pair<const std::vector<ast::StmtPtr>*, size_t>>;

  // ---- SemaExpr.cpp: expressions --------------------------------------------------------
 public:
  PyVal eval(const ast::Expr& e);
  PyVal binary(ast::BinOp op, const PyVal& a, const PyVal& b, Loc opLoc);

 private:
  PyVal evalName(const ast::Expr& e);
  PyVal evalUnary(const ast::Expr& e);
  PyVal evalSubscript(const ast::Expr& e);
  PyVal foldBinary(ast::BinOp op, const PyVal& a, const PyVal& b, Loc opLoc);
  PyVal pointerArith(ast::BinOp op, const PyVal& a, const PyVal& b, Loc opLoc);

  // Typing helpers.
  Builder& at(Loc loc) {
    b_.setLoc(loc);
    return b_;
  }
  void error(Loc loc, const std::string& msg) { diag_.error(loc, msg); }
  PyVal fail(Loc loc, const std::string& msg) {
    error(loc, msg);
    return PyVal::poison();
  }
  static DType promote(DType a, DType b);
  static DType weakDType(const PyVal& c);                 // a constant's dtype on its own
  static DType withWeak(DType typed, const PyVal& c);     // a constant next to a typed operand
  Value* materialize(const PyVal& c, DType dt, const Shape& shape, Loc loc);
  Value* toValue(const PyVal& p, Loc loc);                // constant -> its default dtype
  Value* convert(Value* v, DType dt, Loc loc);
  // fp8 is a storage type (docs/language.md): true, after a located error, when `what` (an
  // operator or a built-in) would compute on an fp8 value, i.e. when its computation dtype `dt`
  // is fp8, or an fp8 operand meets an integer tile (Triton rejects both).
  bool refuseFp8(const PyVal& a, const PyVal* b, DType dt, Loc loc, const std::string& what);
  std::optional<Shape> broadcastShape(const Shape& a, const Shape& b) const;
  Value* broadcastTo(Value* v, const Shape& shape, Loc loc);
  bool checkTileSize(const Shape& s, Loc loc);
  // Brings two operands to one dtype (promotion) and one shape (broadcasting).
  bool unify(const PyVal& a, const PyVal& b, Loc loc, Value*& va, Value*& vb);
  std::string describe(const PyVal& p) const;

  // ---- SemaBuiltins.cpp: built-in functions ---------------------------------------------
 public:
  struct Args {
    std::vector<PyVal> vals;   // Poison with given=false when absent
    std::vector<bool> given;
    std::vector<Loc> locs;
    std::vector<const ast::Expr*> exprs;
    bool has(size_t k) const { return given[k] && vals[k].kind != PyVal::Kind::None; }
  };

 private:
  bool fp8Argument(const std::string& fname, const Args& a);  // bindArgs' fp8 check (SemaBuiltins.cpp)
  PyVal evalCall(const ast::Expr& e);
  // Calls the built-in `f` (after any module prefix: tl.load is "load"); `self` is the tensor of
  // a method call (x.sum(0)), bound to the first parameter.
  PyVal callBuiltin(const ast::Expr& e, const std::string& f, const PyVal* self = nullptr);
  PyVal evalMethod(const ast::Expr& e, const PyVal& base);
  PyVal castValue(const PyVal& base, const Args& a, size_t first, Loc loc, const std::string& what);
  // x.to(tl.pointer_type(d)) and a pointer's .to(tl.int64 | tl.int1 | another pointer type):
  // `to` is a dtype value (a pointer type, or any dtype when x is a pointer). SemaTriton.cpp.
  PyVal pointerCast(const PyVal& x, const PyVal& to, Loc toLoc, Loc loc, const std::string& what);
  PyVal builtinPointerType(const ast::Expr& e);
  PyVal evalAttribute(const ast::Expr& e);
  const PyVal* self_ = nullptr;  // the method call's tensor while its built-in binds arguments
  // A call of a name that is no built-in (SemaExpr.cpp): print-like calls are refused with a
  // debugging alternative, anything else is an unknown function with a "did you mean".
  PyVal unknownFunction(const ast::Expr& call, const std::string& f, Loc loc);
  PyVal refusePrint(const std::string& f, Loc loc);
  bool bindArgs(const ast::Expr& call, const std::string& fname, const std::vector<std::string>& sig,
                size_t required, Args& out);
  std::optional<int64_t> constInt(const PyVal& p, const ast::Expr* e, Loc loc, const std::string& what);
  std::optional<Shape> constShape(const PyVal& p, const ast::Expr* e, Loc loc, const std::string& fname);
  std::optional<DType> dtypeArg(const Args& a, size_t k, DType dflt, const std::string& fname);
  Value* maskArg(const PyVal& m, const Shape& shape, Loc loc, const std::string& fname);
  PyVal builtinProgramId(const ast::Expr& e, const std::string& f);
  PyVal builtinArange(const ast::Expr& e);
  PyVal builtinZerosFull(const ast::Expr& e, const std::string& f);
  PyVal builtinLoad(const ast::Expr& e);
  PyVal builtinStore(const ast::Expr& e);
  PyVal builtinReduce(const ast::Expr& e, const std::string& f);
  PyVal builtinArgmax(const ast::Expr& e);
  PyVal builtinScan(const ast::Expr& e, const std::string& f);  // SemaScan.cpp (engineer H): cumsum, cumprod, associative_scan
  PyVal builtinUserReduce(const ast::Expr& e);                   // SemaScan.cpp: tl.reduce
  std::string combineFnKind(const PyVal& fn, Loc loc, const std::string& f);
  PyVal builtinMath(const ast::Expr& e, const std::string& f);
  PyVal builtinWhere(const ast::Expr& e);
  PyVal builtinMinMaximum(const ast::Expr& e, const std::string& f);
  // SemaMath.cpp (engineer A): fma, umulhi, clamp; the typing of << and >> (SemaExpr.cpp's
  // binary operators call shift for BinOp::Shl / BinOp::Shr).
  PyVal builtinFma(const ast::Expr& e);
  PyVal builtinUmulhi(const ast::Expr& e);
  PyVal builtinClamp(const ast::Expr& e);
  PyVal shift(ast::BinOp op, const PyVal& a, const PyVal& b, Loc opLoc);
  // SemaAtomics.cpp (engineer A): atomic_add ... atomic_xchg, atomic_cas; debug_barrier.
  PyVal builtinAtomic(const ast::Expr& e, const std::string& f);
  PyVal builtinDebugBarrier(const ast::Expr& e);
  // SemaDebug.cpp: device_print / print, device_assert / assert, static_print.
  PyVal builtinDevicePrint(const ast::Expr& e, const std::string& f);
  PyVal builtinDeviceAssert(const ast::Expr& e);
  PyVal builtinStaticPrint(const ast::Expr& e);
  void genAssert(const ast::Stmt& s);
  Value* assertCondition(const PyVal& c, Loc loc, const std::string& what, const std::string& msg);
  void emitAssert(Value* cond, const std::string& msg, Loc loc);
  std::string staticText(const PyVal& p) const;
  Value* atomicOperand(const PyVal& v, Value* ptr, Loc loc, const std::string& fname, const char* what);
  PyVal builtinDot(const ast::Expr& e);
  // trans(x) and x.T: one trans op at `loc`, or a located error naming `what` for a non-2-D operand.
  PyVal transpose(const PyVal& x, Loc argLoc, Loc loc, const char* what, std::vector<int> order = {});
  PyVal builtinCdiv(const ast::Expr& e);
  Value* reduceAll(const std::string& kind, Value* x, Loc loc);

  // ---- SemaTriton.cpp: Triton built-ins composed of tilelab's ops ------------------------------
  PyVal builtinRandom(const ast::Expr& e, const std::string& f);
  PyVal u32Const(uint32_t c, Loc loc);
  PyVal builtinHint(const ast::Expr& e, const std::string& f);
  PyVal builtinAssume(const ast::Expr& e);
  PyVal builtinShape(const ast::Expr& e, const std::string& f);
  PyVal joinOrSplit(const ast::Expr& e, const std::string& f);  // join(a, b), split(x)
  PyVal builtinTritonMath(const ast::Expr& e, const std::string& f);
  // SemaSort.cpp: sort, topk, flip, gather, histogram, swizzle2d (compositions) and their parts.
  PyVal builtinSort(const ast::Expr& e, const std::string& f);
  Value* axisIndex(int64_t n, int axis, int rank, Loc loc);
  Value* pickAlong(Value* sel, Value* values, int axis, Loc loc);
  Value* sortRanks(Value* x, bool descending, Loc loc);
  Value* sortedPrefix(Value* x, bool descending, int64_t k, Loc loc);
  Value* gatherLast(Value* src, Value* idx, Loc loc);

  // ---- SemaBlockPtr.cpp: block pointers and tensor descriptors -----------------------------
  bool intTuple(const PyVal& v, size_t n, Loc loc, const std::string& what, bool constOnly);
  PyVal builtinMakeBlockPtr(const ast::Expr& e, const std::string& f);
  PyVal builtinAdvance(const ast::Expr& e);
  bool blockAddress(const PyVal& base, const PyVal& shape, const PyVal& strides, const std::vector<PyVal>& offsets,
                    const Shape& block, const std::vector<bool>& checked, Loc loc, Value*& ptrs, Value*& mask);
  std::optional<std::vector<bool>> boundaryCheck(const Args& a, size_t k, size_t rank);
  PyVal loadBlockPtr(const ast::Expr& e, const Args& a);
  PyVal storeBlockPtr(const ast::Expr& e, const Args& a);
  PyVal descriptorAccess(const ast::Expr& e, const std::string& f, const PyVal* self);
  // store(ptrs, value, mask) once the pointers are known: the value converted and broadcast.
  PyVal storeTile(Value* ptrs, const PyVal& value, Loc valueLoc, Value* mask, Loc loc);

  // ---- SemaCall.cpp: modules, @jit functions, Python's built-ins ------------------------------
  void bindGlobals();                                 // imports, constants, functions
  PyVal moduleMember(const PyVal& mod, const std::string& name, Loc loc);
  PyVal inlineCall(const ast::Kernel& f, const ast::Expr& call);
  PyVal pythonBuiltin(const ast::Expr& e, const std::string& f, bool& handled);
  PyVal evalIfExp(const ast::Expr& e);
  PyVal evalBoolOp(const ast::Expr& e);
  PyVal builtinStaticAssert(const ast::Expr& e);

  // ---- SemaStmt.cpp: statements ----------------------------------------------------------
  // Compiles body[from..], then the continuation `cont`; returns true when every path ended in
  // a `return` or the end of the function (nothing runs after the block).
  bool genBlock(const std::vector<ast::StmtPtr>& body, size_t from = 0, const Cont& cont = {});
  void genStmt(const ast::Stmt& s);
  void genReturn(const ast::Stmt& s);
  void assign(const std::string& name, PyVal v, Loc loc);
  void assignTargets(const ast::Stmt& s, PyVal v);
  void unpack(const ast::Expr& target, const PyVal& v, Loc valueLoc,
              const std::function<void(const std::string&, const PyVal&, Loc)>& bind);
  std::string loopKind(const ast::Expr& iter);
  void genFor(const ast::Stmt& s);
  void genStaticFor(const ast::Stmt& s);
  void genWhile(const ast::Stmt& s);
  // A block pointer or tuple a loop carries: its parts travel as the hidden variables `leaves`.
  struct Composite {
    std::string name;
    PyVal tmpl;  // the value before the loop
    std::vector<std::string> leaves;
  };
  std::vector<Composite> splitComposites(std::vector<std::string>& assigned);
  void rebuildComposite(const Composite& c);
  void flattenComposite(const Composite& c);
  void collectCarried(const std::vector<std::string>& assigned, const std::string& skip,
                      std::vector<std::string>& carried, std::vector<Value*>& inits);
  std::vector<bool> yieldCarried(const std::vector<std::string>& carried, const std::vector<Value*>& inits,
                                 Region& body, size_t argOffset, Loc loc);
  void endLoop(const ast::Stmt& s, Op* loop, const std::vector<std::string>& carried,
               const std::vector<bool>& broken, Env saved, const char* what);
  // Returns true when the if took over the continuation (a branch returns).
  bool genIf(const ast::Stmt& s, const Cont& cont);
  void mergeBranches(const ast::Stmt& s, Op* ifOp, Env branch[2]);
  bool bindParams(const ast::Kernel& k);
};

// The kernel built-ins' names (for "is a built-in function" and "did you mean" messages).
const std::vector<std::string>& kernelBuiltins();
bool isPrintFunction(const std::string& f);  // printf (C's spelling: refused with print's)
// Whether `stmts` holds a `return` (in nested if blocks too; loops are not looked into).
bool containsReturn(const std::vector<ast::StmtPtr>& stmts);
// The hidden variables a `return` assigns: kReturnCount holds -2 (None), -1 (one value in
// kReturnValue) or n (a tuple in kReturnValue0..n-1).
inline const char* const kReturnCount = "$return#";
inline const char* const kReturnValue = "$return";

// Names assigned anywhere in `body` (including nested blocks), in first-assignment order.
void collectAssigned(const std::vector<ast::StmtPtr>& body, std::vector<std::string>& out);

}  // namespace tl
