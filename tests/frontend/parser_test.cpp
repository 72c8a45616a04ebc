// Parser tests: AST shapes for each grammar rule, precedence, and recovery from several
// syntax errors in one run.
#include <gtest/gtest.h>

#include "frontend/AST.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "FrontendTestUtil.h"

namespace tl {
namespace {

using namespace ast;

std::unique_ptr<Module> parseText(const std::string& text, DiagEngine& diag) {
  SourceFile f("t.tl", text);
  return parseModule(lex(f, diag), diag);
}

ExprPtr parseExpr(const std::string& text, DiagEngine& diag) {
  SourceFile f("t.tl", text);
  return parseExpression(lex(f, diag), diag);
}

// A compact rendering of an expression tree: (op lhs rhs), call(args), ...
std::string show(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return std::to_string(e.ival);
    case ExprKind::Float: return "f";
    case ExprKind::Name: return e.str;
    case ExprKind::None: return "None";
    case ExprKind::Bool: return e.ival ? "True" : "False";
    case ExprKind::String: return "\"" + e.str + "\"";
    case ExprKind::Slice: return ":";
    case ExprKind::Unary:
      return std::string("(") +
             (e.unaryOp == UnaryOp::Neg ? "-" : e.unaryOp == UnaryOp::Pos ? "+" : e.unaryOp == UnaryOp::Not ? "not " : "~") +
             show(*e.lhs) + ")";
    case ExprKind::IfExp: return "(if " + show(*e.items[0]) + " " + show(*e.lhs) + " " + show(*e.rhs) + ")";
    case ExprKind::BoolOp: return std::string("(") + (e.boolOp == BoolOpKind::And ? "and " : "or ") + show(*e.lhs) + " " + show(*e.rhs) + ")";
    case ExprKind::Binary: return std::string("(") + spelling(e.binOp) + " " + show(*e.lhs) + " " + show(*e.rhs) + ")";
    case ExprKind::Attribute: return show(*e.lhs) + "." + e.str;
    case ExprKind::Tuple:
    case ExprKind::Call:
    case ExprKind::Subscript: {
      std::string s = e.kind == ExprKind::Tuple ? "tuple(" : e.kind == ExprKind::Call ? show(*e.lhs) + "(" : show(*e.lhs) + "[";
      for (size_t k = 0; k < e.items.size(); ++k) s += (k ? " " : "") + show(*e.items[k]);
      for (const auto& kw : e.keywords) s += " " + kw.name + "=" + show(*kw.value);
      return s + (e.kind == ExprKind::Subscript ? "]" : ")");
    }
  }
  return "?";
}

TEST(Parser, Precedence) {
  DiagEngine diag;
  EXPECT_EQ(show(*parseExpr("a + b * c - d", diag)), "(- (+ a (* b c)) d)");
  EXPECT_EQ(show(*parseExpr("-a * b", diag)), "(* (-a) b)");
  EXPECT_EQ(show(*parseExpr("a < b & c >= d | e ^ f", diag)), "(| (& (< a b) (>= c d)) (^ e f))");
  EXPECT_EQ(show(*parseExpr("a // b % c", diag)), "(% (// a b) c)");
  EXPECT_EQ(show(*parseExpr("~m & (x == 1)", diag)), "(& (~m) (== x 1))");
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
}

TEST(Parser, PostfixForms) {
  DiagEngine diag;
  EXPECT_EQ(show(*parseExpr("load(p + o, mask=m, other=-inf)", diag)), "load((+ p o) mask=m other=(-inf))");
  EXPECT_EQ(show(*parseExpr("x[:, None] * y[None, :]", diag)), "(* x[: None] y[None :])");
  EXPECT_EQ(show(*parseExpr("x.to(f16)", diag)), "x.to(f16)");
  EXPECT_EQ(show(*parseExpr("zeros((M, N), dtype=f32)", diag)), "zeros(tuple(M N) dtype=f32)");
  EXPECT_EQ(show(*parseExpr("(M,)", diag)), "tuple(M)");
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
}

TEST(Parser, KernelShape) {
  DiagEngine diag;
  auto m = parseText(test::kSoftmax, diag);
  ASSERT_FALSE(diag.hasErrors()) << diag.renderAll();
  ASSERT_EQ(m->kernels.size(), 1u);
  const Kernel& k = m->kernels[0];
  EXPECT_EQ(k.name, "softmax_kernel");
  EXPECT_EQ(k.loc, (Loc{4, 5}));
  ASSERT_EQ(k.decorators.size(), 2u);
  const Decorator* launch = k.decorator("launch");
  ASSERT_NE(launch, nullptr);
  ASSERT_EQ(launch->keywords.size(), 8u);
  EXPECT_EQ(launch->keywords[3].name, "BLOCK_N");
  EXPECT_EQ(show(*launch->keywords[3].value), "next_pow2(N)");
  ASSERT_EQ(k.params.size(), 5u);
  EXPECT_EQ(k.params[4].annot, AnnotKind::Constexpr);
  EXPECT_EQ(k.params[0].annot, AnnotKind::None);
  ASSERT_EQ(k.body.size(), 8u);
  EXPECT_EQ(k.body[0]->kind, StmtKind::Assign);
  EXPECT_EQ(k.body[0]->target, "row");
  EXPECT_EQ(k.body[7]->kind, StmtKind::ExprStmt);
  EXPECT_EQ(k.body[7]->value->loc, (Loc{12, 5}));
}

TEST(Parser, Annotations) {
  DiagEngine diag;
  auto m = parseText("@jit\ndef k(a: *f16, n: i64, B: constexpr, c):\n    pass\n", diag);
  ASSERT_FALSE(diag.hasErrors()) << diag.renderAll();
  const auto& p = m->kernels[0].params;
  EXPECT_EQ(p[0].annot, AnnotKind::Pointer);
  EXPECT_EQ(p[0].dtype, DType::F16);
  EXPECT_EQ(p[1].annot, AnnotKind::Scalar);
  EXPECT_EQ(p[1].dtype, DType::I64);
  EXPECT_EQ(p[2].annot, AnnotKind::Constexpr);
  EXPECT_EQ(p[3].annot, AnnotKind::None);
}

TEST(Parser, ControlFlowShapes) {
  DiagEngine diag;
  auto m = parseText(
      "@jit\ndef k(n):\n    acc = 0\n    for i in range(0, n, 2):\n        acc += i\n"
      "    if acc > 3:\n        x = 1\n    elif acc > 1:\n        x = 2\n    else:\n        x = 3\n",
      diag);
  ASSERT_FALSE(diag.hasErrors()) << diag.renderAll();
  const auto& body = m->kernels[0].body;
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(body[1]->kind, StmtKind::For);
  EXPECT_EQ(body[1]->target, "i");
  EXPECT_EQ(show(*body[1]->value), "range(0 n 2)");
  ASSERT_EQ(body[1]->body.size(), 1u);
  EXPECT_EQ(body[1]->body[0]->kind, StmtKind::AugAssign);
  EXPECT_EQ(body[1]->body[0]->augOp, BinOp::Add);
  const Stmt& ifs = *body[2];
  EXPECT_EQ(ifs.kind, StmtKind::If);
  ASSERT_EQ(ifs.orelse.size(), 1u);
  EXPECT_EQ(ifs.orelse[0]->kind, StmtKind::If);  // elif
  EXPECT_EQ(ifs.orelse[0]->orelse.size(), 1u);
}

TEST(Parser, TritonExpressionForms) {
  DiagEngine diag;
  EXPECT_EQ(show(*parseExpr("a if c else b", diag)), "(if c a b)");
  EXPECT_EQ(show(*parseExpr("a if c else b if d else e", diag)), "(if c a (if d b e))");
  EXPECT_EQ(show(*parseExpr("a or b and not c", diag)), "(or a (and b (not c)))");
  EXPECT_EQ(show(*parseExpr("x < y and y < z", diag)), "(and (< x y) (< y z))");
  EXPECT_EQ(show(*parseExpr("1 << k + 1", diag)), "(<< 1 (+ k 1))");  // shifts bind looser than +
  EXPECT_EQ(show(*parseExpr("a >> 2 < b", diag)), "(< (>> a 2) b)");
  EXPECT_EQ(show(*parseExpr("x is None", diag)), "(== x None)");
  EXPECT_EQ(show(*parseExpr("x is not None", diag)), "(!= x None)");
  ExprPtr list = parseExpr("[BLOCK_M, BLOCK_N]", diag);
  ASSERT_EQ(list->kind, ExprKind::Tuple);
  EXPECT_TRUE(list->isList);
  EXPECT_EQ(list->items.size(), 2u);
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
}

TEST(Parser, TritonFileStructure) {
  DiagEngine diag;
  auto m = parseText(
      "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice as ld, cuda\n"
      "\"\"\"Module\ndocstring.\"\"\"\nBLOCK = 128\nK: tl.constexpr = 4\n"
      "@triton.autotune(configs=[triton.Config({'B': 1}, num_warps=4)], key=['n'])\n"
      "@triton.jit(do_not_specialize=['n'])\n"
      "def k(x_ptr, n, B: tl.constexpr = 64, eps=1e-5) -> None:\n"
      "    '''doc'''\n    a, b = f(x_ptr)\n    (c, d) = b, a\n    while n > 0:\n        n -= 1\n"
      "    n <<= 2\n    return\n",
      diag);
  ASSERT_FALSE(diag.hasErrors()) << diag.renderAll();
  ASSERT_EQ(m->imports.size(), 4u);
  EXPECT_EQ(m->imports[0].name, "triton");
  EXPECT_EQ(m->imports[1].name, "tl");
  EXPECT_EQ(m->imports[1].path, "triton.language");
  EXPECT_EQ(m->imports[2].name, "ld");
  EXPECT_EQ(m->imports[2].path, "triton.language.extra.libdevice");
  EXPECT_EQ(m->imports[3].path, "triton.language.extra.cuda");
  ASSERT_EQ(m->constants.size(), 2u);
  EXPECT_TRUE(m->constants[1]->constexprAnnot);
  ASSERT_EQ(m->kernels.size(), 1u);
  const Kernel& k = m->kernels[0];
  ASSERT_EQ(k.decorators.size(), 2u);
  EXPECT_EQ(k.decorators[0].name, "autotune");
  EXPECT_EQ(k.decorators[1].name, "jit");
  EXPECT_EQ(k.decorators[1].spelled, "triton.jit");
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[2].annot, AnnotKind::Constexpr);
  EXPECT_TRUE(k.params[2].defaultValue);
  EXPECT_TRUE(k.params[3].defaultValue);
  ASSERT_EQ(k.body.size(), 6u);  // the docstring is an expression statement
  EXPECT_EQ(k.body[1]->targets, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(k.body[2]->targets, (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(k.body[2]->value->kind, ExprKind::Tuple);
  EXPECT_EQ(k.body[3]->kind, StmtKind::While);
  EXPECT_EQ(k.body[4]->augOp, BinOp::Shl);
  EXPECT_EQ(k.body[5]->kind, StmtKind::Return);
  EXPECT_FALSE(k.body[5]->value);
}

TEST(Parser, RecoversAndReportsSeveralErrors) {
  DiagEngine diag;
  auto m = parseText(
      "@jit\ndef k(x_ptr, N):\n    a = 1 +\n    b = 2\n    c = lambda: b\n    for i in :\n        d = 1\n    e = 3 3\n    f = 4\n",
      diag);
  // '1 +' at the end of a line; 'lambda'; 'for i in :'; '3 3'
  EXPECT_GE(diag.numErrors(), 3) << diag.renderAll();
  ASSERT_EQ(m->kernels.size(), 1u);
  // The last, valid statement was still parsed.
  ASSERT_FALSE(m->kernels[0].body.empty());
  EXPECT_EQ(m->kernels[0].body.back()->target, "f");
  bool sawLambda = false;
  for (const auto& d : diag.diagnostics()) sawLambda |= d.message.find("'lambda' is not supported") != std::string::npos;
  EXPECT_TRUE(sawLambda) << diag.renderAll();
}

TEST(Parser, ChainedComparisonAndUnsupportedSyntax) {
  DiagEngine diag;
  // (`assert a` is a statement: a device assertion, SemaDebug.cpp)
  parseText("@jit\ndef k(a):\n    x = 0 < a < 3\n    while a:\n        break\n    y = lambda: 1\n    assert a, \"m\"\n", diag);
  ASSERT_EQ(diag.numErrors(), 3) << diag.renderAll();
  EXPECT_NE(diag.diagnostics()[0].message.find("chained comparisons"), std::string::npos);
  EXPECT_NE(diag.diagnostics()[1].message.find("'break'"), std::string::npos);
  EXPECT_NE(diag.diagnostics()[2].message.find("'lambda'"), std::string::npos);
}

TEST(Parser, UnclosedBracketIsReportedAtTheBracket) {
  DiagEngine diag;
  parseText("@jit\ndef k(a):\n    x = load(a\n    y = 2\n", diag);
  ASSERT_GE(diag.numErrors(), 1);
  EXPECT_NE(diag.diagnostics()[0].message.find("'(' was never closed"), std::string::npos) << diag.renderAll();
  EXPECT_EQ(diag.diagnostics()[0].loc, (Loc{3, 13}));
}

TEST(Parser, MissingIndentedBlock) {
  DiagEngine diag;
  parseText("@jit\ndef k(a):\nx = 1\n", diag);
  ASSERT_GE(diag.numErrors(), 1);
  EXPECT_NE(diag.diagnostics()[0].message.find("indented block"), std::string::npos);
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  DiagEngine diag;
  std::string deep(5000, '(');
  parseExpr(deep + "1" + std::string(5000, ')'), diag);
  EXPECT_TRUE(diag.hasErrors());
}

}  // namespace
}  // namespace tl
