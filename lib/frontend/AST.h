// The abstract syntax tree of a .tl file: plain structs, each node with the Loc of its
// representative token (chibicc style), so every later error can point into the source.
//
//   Module               imports, module-level constants, functions
//    └ Kernel            one `def`: decorators (@launch keywords with their expressions, @jit),
//       │                params (with defaults), body; the entry kernel or a @jit helper
//       └ Stmt ...        x = e, a, b = e, x += e, e, for, while, if/elif/else, return, pass
//          └ Expr ...     names, literals, unary/binary/boolean ops, calls, attributes,
//                         x[:, None], tuples and lists, `a if c else b`
//
// The parser builds it; the launch evaluator reads the @launch expressions; semantic analysis
// walks the kernel body. Nothing here knows about types: that is Sema's job.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Type.h"

namespace tl::ast {

// The deepest a kernel's syntax tree may be: the blocks a statement sits in (a for/if body, each
// elif) plus its expression's levels (each operator, call, subscript, attribute, tuple and
// parenthesis is one; `a + b + c` is two). The parser reports anything deeper as a located
// error and builds nothing deeper, so every recursive walk of the AST (the parser itself, launch
// evaluation, sema, the AST's destructors) stays within this many levels. 256 is clang's
// bracket-depth default; it is far beyond what a kernel needs (split a longer chain into
// statements) and keeps those walks within a few hundred KB of stack.
constexpr int kMaxNesting = 256;

enum class ExprKind {
  Int,        // integer literal: ival
  Float,      // float literal: fval
  String,     // string literal: str (only meaningful in @launch, e.g. file("x.npy"))
  Bool,       // True / False: ival is 1 / 0
  None,       // None
  Name,       // identifier: str
  Unary,      // unaryOp applied to lhs
  Binary,     // lhs binOp rhs; loc is the operator's
  Call,       // lhs(items..., keywords...); loc is the callee's
  Attribute,  // lhs.str (only `x.to` is meaningful); loc is the attribute name's
  Subscript,  // lhs[items...]; loc is the '['
  Slice,      // a bare ':' inside a subscript
  Tuple,      // (items...) or [items...] (isList): Triton's list shapes are tuples here
  IfExp,      // lhs if items[0] else rhs; loc is the `if`
  BoolOp,     // lhs and/or rhs (boolOp); loc is the keyword's
};

enum class BoolOpKind { And, Or };

enum class UnaryOp {
  Neg,     // -x
  Pos,     // +x
  Invert,  // ~x
  Not,     // not x
};

enum class BinOp {
  Add, Sub, Mul, Div, FloorDiv, Mod,  // + - * / // %
  BitAnd, BitOr, BitXor,              // & | ^
  Shl, Shr,                           // << >>
  Pow,                                // ** (compile-time numbers only)
  Lt, Le, Gt, Ge, Eq, Ne,             // < <= > >= == !=
};

const char* spelling(BinOp op);   // "+", "//", "<=" ...
bool isComparison(BinOp op);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// `name=value` in a call or decorator.
struct Keyword {
  std::string name;
  Loc loc;  // the name's location
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::None;
  Loc loc;
  int64_t ival = 0;
  double fval = 0;
  std::string str;               // Name / Attribute / String
  UnaryOp unaryOp = UnaryOp::Neg;
  BinOp binOp = BinOp::Add;
  ExprPtr lhs, rhs;              // operands; the callee of a Call; the base of Attribute/Subscript
  std::vector<ExprPtr> items;    // Tuple elements, Call positional arguments, Subscript indices
  std::vector<Keyword> keywords; // Call keyword arguments
  BoolOpKind boolOp = BoolOpKind::And;
  bool isList = false;           // a Tuple written with brackets
  int height = 1;                // levels of this subtree (a leaf is 1); the parser bounds it

  const Keyword* keyword(const std::string& name) const {
    for (const auto& k : keywords)
      if (k.name == name) return &k;
    return nullptr;
  }
};

enum class StmtKind {
  Assign,     // target = value
  AugAssign,  // target augOp= value
  ExprStmt,   // value (a call such as store(...))
  For,        // for target in value: body
  While,      // while value: body
  If,         // if value: body else: orelse  (elif is an If alone in orelse)
  Return,     // return [value]  (value may be a Tuple)
  Pass,       // pass
  Assert,     // assert value [, msg]  (a device assertion, like tl.device_assert)
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind = StmtKind::Pass;
  Loc loc;              // the statement's first token
  std::string target;   // assigned name / loop variable
  Loc targetLoc;
  std::vector<std::string> targets;  // `a, b = value`: every name assigned (target is empty)
  std::vector<Loc> targetLocs;
  ExprPtr targetTree;                // `(a, b), c = value`: the target as written (Tuples of Names)
  bool constexprAnnot = false;       // `x: tl.constexpr = value`
  BinOp augOp = BinOp::Add;
  Loc opLoc;            // the `+=` of an AugAssign
  ExprPtr value;        // right-hand side / expression / range(...) / condition
  ExprPtr msg;          // Assert: the message, or null
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
};

enum class AnnotKind {
  None,       // `x`: pointer or scalar, decided by the launch
  Constexpr,  // `BLOCK: constexpr`
  Scalar,     // `n: i32`
  Pointer,    // `x: *f32`
};

struct Param {
  std::string name;
  Loc loc;
  AnnotKind annot = AnnotKind::None;
  DType dtype = DType::F32;  // for Scalar / Pointer
  Loc annotLoc;
  ExprPtr defaultValue;      // `BLOCK: tl.constexpr = 128`
};

struct Decorator {
  std::string name;  // "launch", "jit" ("@triton.jit" is "jit"), "autotune", "heuristics"
  std::string spelled;  // as written: "triton.jit"
  Loc loc;           // the name after '@'
  bool called = false;                 // written with parentheses
  std::vector<ExprPtr> args;           // positional arguments (none are valid today)
  std::vector<Keyword> keywords;
};

struct Kernel {
  std::string name;
  Loc loc;  // the name after `def`
  std::vector<Decorator> decorators;
  std::vector<Param> params;
  std::vector<StmtPtr> body;

  const Decorator* decorator(const std::string& n) const {
    for (const auto& d : decorators)
      if (d.name == n) return &d;
    return nullptr;
  }
};

// `import triton.language as tl` binds tl to "triton.language"; `from triton.language import
// load as ld` binds ld to "triton.language.load".
struct Import {
  std::string name;  // the name bound in the file
  std::string path;  // the dotted path it stands for
  Loc loc;
};

struct Module {
  std::vector<Kernel> kernels;    // every `def`, in file order
  std::vector<Import> imports;
  std::vector<StmtPtr> constants; // module-level `NAME = expr` (Assign statements), in order
  std::string entryName;          // set by --kernel NAME; empty: the rule below

  // The kernel a .tl file means: the one named by entryName; else the function with @launch;
  // else the first @jit function (or the first function).
  const Kernel* mainKernel() const {
    if (!entryName.empty()) {
      for (const auto& k : kernels)
        if (k.name == entryName) return &k;
      return nullptr;
    }
    for (const auto& k : kernels)
      if (k.decorator("launch")) return &k;
    for (const auto& k : kernels)
      if (k.decorator("jit")) return &k;
    return kernels.empty() ? nullptr : &kernels.front();
  }
  const Kernel* function(const std::string& n) const {
    for (const auto& k : kernels)
      if (k.name == n) return &k;
    return nullptr;
  }
  // True when the file imports triton: names then mean what they mean in Triton (min/max are
  // Python's built-ins, i.e. minimum/maximum).
  bool tritonSpelling() const {
    for (const auto& i : imports)
      if (i.path == "triton" || i.path.rfind("triton.", 0) == 0) return true;
    return false;
  }
};

}  // namespace tl::ast
