// The recursive-descent parser (contract in Parser.h). Each parse function is named after the
// grammar rule it implements and carries that rule in a comment.
//
// Error handling: a function that finds a syntax error reports it and throws SyntaxError; the
// statement loop catches it and skips to the next statement (synchronize()).
#include "frontend/Parser.h"
#include "frontend/Suggest.h"

#include <algorithm>
#include <string>

namespace tl {

using namespace ast;

const char* ast::spelling(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::FloorDiv: return "//";
    case BinOp::Mod: return "%";
    case BinOp::BitAnd: return "&";
    case BinOp::BitOr: return "|";
    case BinOp::BitXor: return "^";
    case BinOp::Shl: return "<<";
    case BinOp::Shr: return ">>";
    case BinOp::Pow: return "**";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
  }
  return "?";
}

bool ast::isComparison(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
         op == BinOp::Eq || op == BinOp::Ne;
}

namespace {

struct SyntaxError {};  // thrown after the error was reported; caught at statement level

// Python keywords the language does not have, with what to write instead.
const char* unsupportedKeywordHint(const std::string& kw) {
  if (kw == "import" || kw == "from") return "imports belong at the top of the file, outside any function";
  if (kw == "break" || kw == "continue")
    return "'break' and 'continue' are not supported (nor in Triton): use a mask, an 'if', or a while loop's condition";
  if (kw == "lambda") return "'lambda' is not supported: define a @jit function and pass its name";
  return nullptr;
}

class Parser {
 public:
  Parser(const std::vector<Token>& toks, DiagEngine& diag) : toks_(toks), diag_(diag) {}

  // module := { NEWLINE | kernel } End
  std::unique_ptr<Module> module() {
    auto m = std::make_unique<Module>();
    while (!peek().is(TokKind::End)) {
      if (peek().is(TokKind::Newline)) {
        next();
        continue;
      }
      size_t start = pos_;
      try {
        if (peek().isOp("@") || peek().isKeyword("def")) {
          m->kernels.push_back(kernel());
        } else if (peek().isKeyword("import") || peek().isKeyword("from")) {
          importStatement(*m);
        } else if (peek().is(TokKind::String)) {  // a docstring
          next();
          expectNewline();
        } else if (peek().is(TokKind::Name) && (peek(1).isOp("=") || peek(1).isOp(":"))) {
          StmtPtr c = simpleStatement();
          expectNewline();
          m->constants.push_back(std::move(c));
        } else {
          fail(peek(), "expected a kernel definition ('@triton.jit' then 'def name(...):'), an import or a "
                       "module-level constant (NAME = value), got " + describe(peek()));
        }
      } catch (SyntaxError&) {
        synchronize(start);
      }
    }
    return m;
  }

  // standalone := expr [NEWLINE] End
  ExprPtr standaloneExpr() {
    try {
      ExprPtr e = expr();
      while (peek().is(TokKind::Newline)) next();
      if (!peek().is(TokKind::End)) error(peek(), "unexpected " + describe(peek()) + " after the expression");
      return e;
    } catch (SyntaxError&) {
      return nullptr;
    }
  }

 private:
  const std::vector<Token>& toks_;
  DiagEngine& diag_;
  size_t pos_ = 0;
  // Nesting, bounded by ast::kMaxNesting so hostile input cannot overflow the stack: the blocks
  // around the statement being parsed, and the parse functions' own recursion (parentheses,
  // unary chains). Left-associative and postfix chains are built by loops; their height is
  // bounded in bounded().
  int blockDepth_ = 0;
  int depth_ = 0;

  const Token& peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool acceptOp(const char* s) {
    if (!peek().isOp(s)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) {
    error(t, msg);
    throw SyntaxError{};
  }
  void error(const Token& t, const std::string& msg) { diag_.error(t.loc, msg); }
  const Token& expectOp(const char* s, const char* context) {
    if (!peek().isOp(s)) fail(peek(), std::string("expected '") + s + "' " + context + ", got " + describe(peek()));
    return next();
  }
  const Token& expectName(const char* what) {
    if (!peek().is(TokKind::Name)) {
      if (peek().is(TokKind::Keyword))
        fail(peek(), "'" + peek().text + "' is a reserved word and cannot be used as " + what);
      fail(peek(), std::string("expected ") + what + ", got " + describe(peek()));
    }
    return next();
  }
  void expectNewline() {
    if (peek().is(TokKind::Newline)) {
      next();
      return;
    }
    if (peek().is(TokKind::Dedent) || peek().is(TokKind::End)) return;
    fail(peek(), "expected end of line, got " + describe(peek()));
  }

  // Error recovery: skip to the end of the current statement. If an indented block follows
  // (the body of a broken `for ...:` header), skip it too; if the broken statement was an `if`,
  // skip its remaining elif/else clauses as well (they would only be "without a matching 'if'").
  // Always makes progress.
  void synchronize(size_t start) {
    skipStatement(start);
    if (start < toks_.size() && toks_[start].isKeyword("if"))
      while (peek().isKeyword("elif") || peek().isKeyword("else")) {
        size_t clause = pos_;
        skipStatement(clause);
        if (pos_ == clause) break;
      }
  }
  void skipStatement(size_t start) {
    if (pos_ == start && !peek().is(TokKind::End) && !peek().is(TokKind::Dedent) &&
        !peek().is(TokKind::Newline) && !peek().is(TokKind::Indent))
      next();
    while (!peek().is(TokKind::End)) {
      if (peek().is(TokKind::Dedent)) {
        if (pos_ == start) next();  // a stray dedent at top level
        return;
      }
      if (peek().is(TokKind::Indent)) {
        skipBlock();
        return;
      }
      if (peek().is(TokKind::Newline)) {
        next();
        if (peek().is(TokKind::Indent)) skipBlock();
        return;
      }
      next();
    }
  }
  void skipBlock() {
    int level = 0;
    do {
      if (peek().is(TokKind::Indent)) ++level;
      if (peek().is(TokKind::Dedent)) --level;
      next();
    } while (level > 0 && !peek().is(TokKind::End));
  }

  // dotted := NAME { "." NAME }
  std::string dottedName(const char* what, Loc* loc = nullptr) {
    const Token& first = expectName(what);
    if (loc) *loc = first.loc;
    std::string path = first.text;
    while (peek().isOp(".") && peek(1).is(TokKind::Name)) {
      next();
      path += "." + next().text;
    }
    return path;
  }

  // import_stmt := "import" dotted [ "as" NAME ] { "," dotted [ "as" NAME ] }
  //              | "from" dotted "import" NAME [ "as" NAME ] { "," NAME [ "as" NAME ] }
  void importStatement(Module& m) {
    if (next().text == "import") {
      do {
        Import im;
        im.path = dottedName("a module name", &im.loc);
        im.name = im.path.substr(0, im.path.find('.'));  // `import triton.language` binds triton
        if (peek().isKeyword("as")) {
          next();
          const Token& n = expectName("a name after 'as'");
          im.name = n.text;
          im.loc = n.loc;
        } else {
          im.path = im.name;
        }
        m.imports.push_back(std::move(im));
      } while (acceptOp(","));
    } else {
      std::string from = dottedName("a module name");
      if (!peek().isKeyword("import")) fail(peek(), "expected 'import' after 'from " + from + "', got " + describe(peek()));
      next();
      bool paren = acceptOp("(");
      do {
        if (paren && peek().isOp(")")) break;
        if (peek().isOp("*")) fail(peek(), "'from " + from + " import *' is not supported: name what you import");
        const Token& n = expectName("a name to import");
        Import im{n.text, from + "." + n.text, n.loc};
        if (peek().isKeyword("as")) {
          next();
          const Token& a = expectName("a name after 'as'");
          im.name = a.text;
          im.loc = a.loc;
        }
        m.imports.push_back(std::move(im));
      } while (acceptOp(","));
      if (paren) expectOp(")", "to close the import list");
    }
    expectNewline();
  }

  // kernel := { decorator } "def" NAME "(" [ param { "," param } [","] ] ")" ":" block
  Kernel kernel() {
    Kernel k;
    while (peek().isOp("@")) k.decorators.push_back(decorator());
    // A decorator tilelab does not know: a host-side wrapper of a library (FlagGems' @libentry)
    // when the function is @triton.jit anyway, else a mistake.
    const bool jit = std::any_of(k.decorators.begin(), k.decorators.end(), [](const Decorator& d) { return d.name == "jit"; });
    for (const auto& d : k.decorators) {
      if (d.name[0] != '?') continue;
      const std::string what = "unknown decorator '@" + d.spelled + "'";
      if (jit)
        diag_.warning(d.loc, what + ": skipped (a host-side wrapper; tilelab runs the @triton.jit function below it)");
      else
        diag_.error(d.loc, what + ": tilelab knows @launch(...), @triton.jit (or @jit), and skips @triton.autotune and "
                           "@triton.heuristics" + didYouMean(d.spelled, {"launch", "jit", "triton.jit"}));
    }
    if (!peek().isKeyword("def")) fail(peek(), "expected 'def' after the decorators, got " + describe(peek()));
    next();
    const Token& name = expectName("a kernel name");
    k.name = name.text;
    k.loc = name.loc;
    expectOp("(", "after the kernel name");
    while (!peek().isOp(")")) {
      k.params.push_back(param());
      if (!acceptOp(",")) break;
    }
    expectOp(")", "to close the parameter list");
    if (acceptOp("->")) expr();  // a return annotation (`-> tl.tensor`) says nothing tilelab uses
    expectOp(":", "after the parameter list");
    k.body = block();
    for (size_t i = 0; i < k.params.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (k.params[i].name == k.params[j].name)
          diag_.error(k.params[i].loc, "duplicate parameter '" + k.params[i].name + "'");
    return k;
  }

  // decorator := "@" dotted [ "(" [ arguments ] ")" ] NEWLINE
  // @jit, @triton.jit and @triton.jit(...) are "jit"; @triton.autotune(...) and
  // @triton.heuristics(...) are accepted and their arguments skipped (@launch gives the values).
  Decorator decorator() {
    expectOp("@", "");
    Decorator d;
    d.spelled = dottedName("a decorator name", &d.loc);
    const std::string last = d.spelled.substr(d.spelled.rfind('.') + 1);
    const bool tritonPrefix = d.spelled == last || d.spelled == "triton." + last;
    d.name = tritonPrefix ? last : d.spelled;
    if (tritonPrefix && (last == "autotune" || last == "heuristics")) {
      if (peek().isOp("(")) skipBalanced();
      if (!peek().is(TokKind::Newline)) fail(peek(), "expected end of line after the decorator, got " + describe(peek()));
      next();
      return d;
    }
    const bool known = d.name == "jit" || (d.name == "launch" && d.spelled == "launch");
    if (!known) d.name = "?" + d.spelled;  // judged in kernel(): a library's wrapper above @triton.jit is skipped
    if (acceptOp("(")) {
      d.called = true;
      if (d.name == "jit" || !known) {
        skipArgumentsAfterOpen();  // @triton.jit(do_not_specialize=..., debug=...): options for Triton's compiler
      } else {
        arguments(d.args, d.keywords, ")");
        expectOp(")", "to close the decorator's arguments");
      }
    }
    if (!peek().is(TokKind::Newline)) fail(peek(), "expected end of line after the decorator, got " + describe(peek()));
    next();
    return d;
  }

  // Skips a balanced "( ... )" group (its tokens are not parsed).
  void skipBalanced() {
    expectOp("(", "");
    skipArgumentsAfterOpen();
  }
  void skipArgumentsAfterOpen() {
    int level = 1;
    while (level > 0 && !peek().is(TokKind::End)) {
      if (peek().isOp("(") || peek().isOp("[") || peek().isOp("{")) ++level;
      if (peek().isOp(")") || peek().isOp("]") || peek().isOp("}")) --level;
      next();
    }
  }

  // param := NAME [ ":" annotation ] [ "=" expr ]
  // annotation := "constexpr" | "*" NAME | NAME
  Param param() {
    const Token& name = expectName("a parameter name");
    Param p;
    p.name = name.text;
    p.loc = name.loc;
    if (acceptOp(":")) annotation(p);
    if (acceptOp("=")) p.defaultValue = expr();
    return p;
  }

  // annotation := "constexpr" | "*" NAME | NAME, each NAME maybe dotted (tl.constexpr, tl.float32)
  void annotation(Param& p) {
    p.annotLoc = peek().loc;
    bool isPtr = acceptOp("*");
    Loc nameLoc;
    const std::string text = dottedName("a type annotation (tl.constexpr, a dtype such as i32, or *f32)", &nameLoc);
    const std::string last = text.substr(text.rfind('.') + 1);
    if (!isPtr && last == "constexpr") {
      p.annot = AnnotKind::Constexpr;
      return;
    }
    // tl.tensor, tl.pointer_type and Python's own type hints (int, float, bool: Triton ignores
    // them) say nothing beyond the launch.
    if (!isPtr && (last == "tensor" || last == "pointer_type" || text == "int" || text == "float" || text == "bool")) return;
    auto d = parseDType(last);
    if (!d) {
      diag_.error(nameLoc, "unknown type annotation '" + text + "': use tl.constexpr, a dtype (i1, i32, i64, f16, bf16, f32, f8e4m3, f8e5m2) or a pointer such as *f32" +
                               didYouMean(last, {"constexpr", "i1", "i32", "i64", "f16", "bf16", "f32", "f8e4m3", "f8e5m2"}));
      return;
    }
    p.annot = isPtr ? AnnotKind::Pointer : AnnotKind::Scalar;
    p.dtype = *d;
  }

  // One more enclosing block for the statements parsed while it lives (a body, or an elif).
  struct BlockGuard {
    Parser& p;
    BlockGuard(Parser& parser, const Token& t) : p(parser) {
      if (++p.blockDepth_ > kMaxNesting) {
        --p.blockDepth_;
        p.diag_.error(t.loc, "blocks nested too deeply: more than " + std::to_string(kMaxNesting) +
                                 " levels of for/if bodies (each elif counts one)");
        throw SyntaxError{};
      }
    }
    ~BlockGuard() { --p.blockDepth_; }
  };

  // block := NEWLINE INDENT statement { statement } DEDENT | simple_stmt NEWLINE
  std::vector<StmtPtr> block() {
    BlockGuard g(*this, peek());
    std::vector<StmtPtr> body;
    if (!peek().is(TokKind::Newline)) {  // `if c: x = 1` on one line
      size_t start = pos_;
      try {
        body.push_back(simpleStatement());
        expectNewline();
      } catch (SyntaxError&) {
        synchronize(start);
      }
      return body;
    }
    next();
    if (!peek().is(TokKind::Indent)) fail(peek(), "expected an indented block");
    next();
    while (!peek().is(TokKind::Dedent) && !peek().is(TokKind::End)) {
      size_t start = pos_;
      try {
        body.push_back(statement());
      } catch (SyntaxError&) {
        synchronize(start);
      }
    }
    if (peek().is(TokKind::Dedent)) next();
    return body;
  }

  // statement := for_stmt | if_stmt | simple_stmt NEWLINE
  StmtPtr statement() {
    const Token& t = peek();
    if (t.is(TokKind::Indent)) fail(t, "unexpected indentation");
    if (t.isKeyword("for")) return forStatement();
    if (t.isKeyword("while")) return whileStatement();
    if (t.isKeyword("if")) return ifStatement();
    if (t.isKeyword("elif") || t.isKeyword("else")) fail(t, "'" + t.text + "' without a matching 'if'");
    if (t.isKeyword("def")) fail(t, "nested functions are not supported");
    StmtPtr s = simpleStatement();
    expectNewline();
    return s;
  }

  // simple_stmt := "pass" | "return" [ exprlist ] | "assert" expr [ "," expr ] | targets "=" exprlist | NAME ":" annotation "=" expr
  //              | NAME augop expr | expr
  // targets     := NAME { "," NAME } [","] | "(" targets ")"
  // exprlist    := expr { "," expr } [","]      (two or more make a tuple)
  // augop := "+=" | "-=" | "*=" | "/=" | "//=" | "%=" | "&=" | "|=" | "^="
  StmtPtr simpleStatement() {
    auto s = std::make_unique<Stmt>();
    const Token& t = peek();
    s->loc = t.loc;
    if (t.is(TokKind::Keyword)) {
      if (t.isKeyword("pass")) {
        next();
        s->kind = StmtKind::Pass;
        return s;
      }
      if (t.isKeyword("return")) {
        next();
        s->kind = StmtKind::Return;
        if (!peek().is(TokKind::Newline) && !peek().is(TokKind::Dedent) && !peek().is(TokKind::End))
          s->value = exprList();
        return s;
      }
      if (t.isKeyword("assert")) {
        next();
        s->kind = StmtKind::Assert;
        s->value = expr();
        if (peek().isOp(",")) {
          next();
          s->msg = expr();
        }
        return s;
      }
      if (const char* hint = unsupportedKeywordHint(t.text)) fail(t, hint);
    }
    if (t.is(TokKind::Name) && peek(1).is(TokKind::Op)) {
      static const std::pair<const char*, BinOp> kAug[] = {
          {"+=", BinOp::Add}, {"-=", BinOp::Sub}, {"*=", BinOp::Mul}, {"/=", BinOp::Div},
          {"//=", BinOp::FloorDiv}, {"%=", BinOp::Mod}, {"&=", BinOp::BitAnd}, {"|=", BinOp::BitOr},
          {"^=", BinOp::BitXor}};
      const Token& op = peek(1);
      if (op.text == "=") {
        s->kind = StmtKind::Assign;
        s->target = t.text;
        s->targetLoc = t.loc;
        next();
        next();
        s->value = exprList();
        if (peek().isOp("=")) fail(peek(), "chained assignment (a = b = c) is not supported");
        return s;
      }
      for (const auto& [sp, bop] : kAug) {
        if (op.text == sp) {
          s->kind = StmtKind::AugAssign;
          s->target = t.text;
          s->targetLoc = t.loc;
          s->augOp = bop;
          s->opLoc = op.loc;
          next();
          next();
          s->value = expr();
          return s;
        }
      }
      if (op.text == "<<=" || op.text == ">>=" || op.text == "**=") {
        s->kind = StmtKind::AugAssign;
        s->target = t.text;
        s->targetLoc = t.loc;
        s->augOp = op.text == "<<=" ? BinOp::Shl : op.text == "**=" ? BinOp::Pow : BinOp::Shr;
        s->opLoc = op.loc;
        next();
        next();
        s->value = expr();
        return s;
      }
      if (op.text == ":") {  // x: tl.constexpr = 3 (an annotated local)
        s->kind = StmtKind::Assign;
        s->target = t.text;
        s->targetLoc = t.loc;
        next();
        next();
        Param annot;
        annotation(annot);
        s->constexprAnnot = annot.annot == AnnotKind::Constexpr;
        expectOp("=", "after the annotation (a declaration without a value does nothing)");
        s->value = expr();
        return s;
      }
    }
    s->kind = StmtKind::ExprStmt;
    s->value = exprList();
    if (peek().isOp("=")) {  // a, b = ...  /  (a, b), c = ...
      targetNames(*s->value, *s);
      s->kind = StmtKind::Assign;
      s->targetTree = std::move(s->value);
      s->targetLoc = s->targetLocs.front();
      next();
      s->value = exprList();
      if (peek().isOp("=")) fail(peek(), "chained assignment (a = b = c) is not supported");
    }
    return s;
  }

  // Collects the names of an assignment target (a Name, or Tuples of them), or fails.
  void targetNames(const Expr& t, Stmt& s) {
    if (t.kind == ExprKind::Name) {
      s.targets.push_back(t.str);
      s.targetLocs.push_back(t.loc);
      return;
    }
    if (t.kind == ExprKind::Tuple && !t.items.empty()) {
      for (const auto& it : t.items) targetNames(*it, s);
      return;
    }
    diag_.error(t.loc, "only variable names (or tuples of them, `a, (b, c) = ...`) can be assigned to "
                       "(no subscripts or attributes)");
    throw SyntaxError{};
  }

  // exprlist := expr { "," expr } [","]: one expression, or a tuple of them (`return a, b`)
  ExprPtr exprList() {
    ExprPtr first = expr();
    if (!peek().isOp(",")) return first;
    auto t = std::make_unique<Expr>();
    t->kind = ExprKind::Tuple;
    t->loc = first->loc;
    t->items.push_back(std::move(first));
    while (acceptOp(",")) {
      if (peek().is(TokKind::Newline) || peek().isOp("=") || peek().is(TokKind::End)) break;
      t->items.push_back(expr());
    }
    return bounded(std::move(t));
  }

  // for_stmt := "for" NAME "in" expr ":" block
  StmtPtr forStatement() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::For;
    s->loc = next().loc;
    const Token& v = expectName("a loop variable");
    s->target = v.text;
    s->targetLoc = v.loc;
    if (!peek().isKeyword("in")) fail(peek(), "expected 'in' after the loop variable, got " + describe(peek()));
    next();
    s->value = expr();
    expectOp(":", "at the end of the 'for' line");
    s->body = block();
    return s;
  }

  // while_stmt := "while" expr ":" block
  StmtPtr whileStatement() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::While;
    s->loc = next().loc;
    s->value = expr();
    expectOp(":", "at the end of the 'while' line");
    s->body = block();
    return s;
  }

  // if_stmt := "if" expr ":" block { "elif" expr ":" block } [ "else" ":" block ]
  // (an elif becomes an If statement alone in the orelse list of the one before it)
  StmtPtr ifStatement() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::If;
    s->loc = next().loc;
    s->value = expr();
    expectOp(":", "at the end of the 'if' line");
    s->body = block();
    if (peek().isKeyword("elif")) {
      BlockGuard g(*this, peek());  // the elif is an If inside the orelse block
      s->orelse.push_back(ifStatement());
    } else if (peek().isKeyword("else")) {
      next();
      expectOp(":", "after 'else'");
      s->orelse = block();
    }
    return s;
  }

  // arguments := argument { "," argument } [","]
  // argument  := [ NAME "=" ] expr
  void arguments(std::vector<ExprPtr>& args, std::vector<Keyword>& kws, const char* close) {
    while (!peek().isOp(close)) {
      if (peek().is(TokKind::Name) && peek(1).isOp("=")) {
        Keyword k;
        k.name = peek().text;
        k.loc = peek().loc;
        for (const auto& other : kws)
          if (other.name == k.name) error(peek(), "keyword argument '" + k.name + "' given twice");
        next();
        next();
        k.value = expr();
        kws.push_back(std::move(k));
      } else {
        if (!kws.empty()) fail(peek(), "positional argument after keyword arguments");
        args.push_back(expr());
      }
      if (!acceptOp(",")) break;
    }
  }

  // Over ast::kMaxNesting: blame the blocks when they take most of the levels, else the expression.
  [[noreturn]] void failTooDeep(Loc loc) {
    const std::string limit = std::to_string(kMaxNesting);
    if (2 * blockDepth_ > kMaxNesting)
      diag_.error(loc, "blocks nested too deeply: this statement is inside " + std::to_string(blockDepth_) +
                           " for/if/elif blocks, and a statement and its expression may be at most " + limit +
                           " levels deep");
    else
      diag_.error(loc, "expression too long or nested too deeply: more than " + limit +
                           " levels (split it into several statements)");
    throw SyntaxError{};
  }

  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& t) : p(parser) {
      if (++p.depth_ + p.blockDepth_ > kMaxNesting) {
        --p.depth_;
        p.failTooDeep(t.loc);
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  // Sets e's height from its children and checks it against the limit (with the enclosing
  // blocks). Every Expr with children is built through here, so no subtree grows past it.
  ExprPtr bounded(ExprPtr e) {
    int h = 0;
    if (e->lhs) h = std::max(h, e->lhs->height);
    if (e->rhs) h = std::max(h, e->rhs->height);
    for (const auto& it : e->items) h = std::max(h, it->height);
    for (const auto& kw : e->keywords) h = std::max(h, kw.value->height);
    e->height = h + 1;
    if (e->height + blockDepth_ > kMaxNesting) failTooDeep(e->loc);
    return e;
  }

  ExprPtr makeBinary(BinOp op, Loc loc, ExprPtr l, ExprPtr r) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::Binary;
    e->binOp = op;
    e->loc = loc;
    e->lhs = std::move(l);
    e->rhs = std::move(r);
    return bounded(std::move(e));
  }

  // expr        := disjunction [ "if" disjunction "else" expr ]
  ExprPtr expr() {
    DepthGuard g(*this, peek());
    ExprPtr e = disjunction();
    if (!peek().isKeyword("if")) return e;
    auto x = std::make_unique<Expr>();
    x->kind = ExprKind::IfExp;
    x->loc = next().loc;
    x->items.push_back(disjunction());
    if (!peek().isKeyword("else")) fail(peek(), "expected 'else' in the conditional expression 'a if cond else b', got " + describe(peek()));
    next();
    x->lhs = std::move(e);
    x->rhs = expr();
    return bounded(std::move(x));
  }

  ExprPtr makeBoolOp(BoolOpKind op, Loc loc, ExprPtr l, ExprPtr r) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::BoolOp;
    e->boolOp = op;
    e->loc = loc;
    e->lhs = std::move(l);
    e->rhs = std::move(r);
    return bounded(std::move(e));
  }

  // disjunction := conjunction { "or" conjunction }
  ExprPtr disjunction() {
    ExprPtr e = conjunction();
    while (peek().isKeyword("or")) {
      Loc l = next().loc;
      e = makeBoolOp(BoolOpKind::Or, l, std::move(e), conjunction());
    }
    return e;
  }

  // conjunction := inversion { "and" inversion }
  ExprPtr conjunction() {
    ExprPtr e = inversion();
    while (peek().isKeyword("and")) {
      Loc l = next().loc;
      e = makeBoolOp(BoolOpKind::And, l, std::move(e), inversion());
    }
    return e;
  }

  // inversion := "not" inversion | bit_or
  ExprPtr inversion() {
    if (!peek().isKeyword("not")) return bitOr();
    DepthGuard g(*this, peek());
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::Unary;
    e->unaryOp = UnaryOp::Not;
    e->loc = next().loc;
    e->lhs = inversion();
    return bounded(std::move(e));
  }

  // bit_or   := xor_expr { "|" xor_expr }
  ExprPtr bitOr() {
    ExprPtr e = xorExpr();
    while (peek().isOp("|")) {
      Loc l = next().loc;
      e = makeBinary(BinOp::BitOr, l, std::move(e), xorExpr());
    }
    return e;
  }

  // xor_expr := and_expr { "^" and_expr }
  ExprPtr xorExpr() {
    ExprPtr e = andExpr();
    while (peek().isOp("^")) {
      Loc l = next().loc;
      e = makeBinary(BinOp::BitXor, l, std::move(e), andExpr());
    }
    return e;
  }

  // and_expr := comparison { "&" comparison }
  ExprPtr andExpr() {
    ExprPtr e = comparison();
    while (peek().isOp("&")) {
      Loc l = next().loc;
      e = makeBinary(BinOp::BitAnd, l, std::move(e), comparison());
    }
    return e;
  }

  // comparison := shift [ ("<" | "<=" | ">" | ">=" | "==" | "!=") shift ]
  ExprPtr comparison() {
    static const std::pair<const char*, BinOp> kCmp[] = {{"<", BinOp::Lt}, {"<=", BinOp::Le},
                                                         {">", BinOp::Gt}, {">=", BinOp::Ge},
                                                         {"==", BinOp::Eq}, {"!=", BinOp::Ne}};
    ExprPtr e = shift();
    if (peek().isKeyword("is")) {  // `x is None`, `x is not None`: == / != (compile-time identity)
      Loc l = next().loc;
      BinOp op = BinOp::Eq;
      if (peek().isKeyword("not")) {
        next();
        op = BinOp::Ne;
      }
      return makeBinary(op, l, std::move(e), shift());
    }
    for (const auto& [sp, op] : kCmp) {
      if (peek().isOp(sp)) {
        Loc l = next().loc;
        e = makeBinary(op, l, std::move(e), shift());
        for (const auto& [sp2, op2] : kCmp)
          if (peek().isOp(sp2))
            fail(peek(), "chained comparisons are not supported: write (a < b) & (b < c)");
        break;
      }
    }
    if (peek().isKeyword("in") || peek().isKeyword("is") || peek().isKeyword("not"))
      fail(peek(), "'" + peek().text + "' is not supported in expressions");
    return e;
  }

  // shift := sum { ("<<" | ">>") sum }
  ExprPtr shift() {
    ExprPtr e = sum();
    while (peek().isOp("<<") || peek().isOp(">>")) {
      BinOp op = peek().text == "<<" ? BinOp::Shl : BinOp::Shr;
      Loc l = next().loc;
      e = makeBinary(op, l, std::move(e), sum());
    }
    return e;
  }

  // sum := term { ("+" | "-") term }
  ExprPtr sum() {
    ExprPtr e = term();
    while (peek().isOp("+") || peek().isOp("-")) {
      BinOp op = peek().text == "+" ? BinOp::Add : BinOp::Sub;
      Loc l = next().loc;
      e = makeBinary(op, l, std::move(e), term());
    }
    return e;
  }

  // term := unary { ("*" | "/" | "//" | "%") unary }
  ExprPtr term() {
    ExprPtr e = unary();
    while (true) {
      BinOp op;
      if (peek().isOp("*")) op = BinOp::Mul;
      else if (peek().isOp("/")) op = BinOp::Div;
      else if (peek().isOp("//")) op = BinOp::FloorDiv;
      else if (peek().isOp("%")) op = BinOp::Mod;
      else if (peek().isOp("@")) fail(peek(), "'@' (matrix multiply) is not supported: use dot(a, b)");
      else break;
      Loc l = next().loc;
      e = makeBinary(op, l, std::move(e), unary());
    }
    return e;
  }

  // unary := ("-" | "+" | "~") unary | power
  ExprPtr unary() {
    if (peek().isOp("-") || peek().isOp("+") || peek().isOp("~")) {
      DepthGuard g(*this, peek());  // `- - - x` recurses before its nodes exist
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Unary;
      e->unaryOp = peek().text == "-" ? UnaryOp::Neg : peek().text == "+" ? UnaryOp::Pos : UnaryOp::Invert;
      e->loc = next().loc;
      e->lhs = unary();
      return bounded(std::move(e));
    }
    return power();
  }

  // power := postfix [ "**" unary ]   (right-associative; -x ** 2 is -(x ** 2), as in Python)
  ExprPtr power() {
    ExprPtr e = postfix();
    if (!peek().isOp("**")) return e;
    DepthGuard g(*this, peek());
    Loc l = next().loc;
    return makeBinary(BinOp::Pow, l, std::move(e), unary());
  }

  // postfix := atom { "(" [ arguments ] ")" | "[" subscript { "," subscript } "]" | "." NAME }
  ExprPtr postfix() {
    ExprPtr e = atom();
    while (true) {
      if (peek().isOp("(")) {
        auto call = std::make_unique<Expr>();
        call->kind = ExprKind::Call;
        call->loc = e->loc;
        next();
        arguments(call->items, call->keywords, ")");
        expectOp(")", "to close the call's arguments");
        call->lhs = std::move(e);
        e = bounded(std::move(call));
      } else if (peek().isOp("[")) {
        auto sub = std::make_unique<Expr>();
        sub->kind = ExprKind::Subscript;
        sub->loc = next().loc;
        do {
          if (peek().isOp("]")) break;
          sub->items.push_back(subscript());
        } while (acceptOp(","));
        expectOp("]", "to close the subscript");
        if (sub->items.empty()) fail(peek(), "empty subscript: write x[:, None] or x[None, :]");
        sub->lhs = std::move(e);
        e = bounded(std::move(sub));
      } else if (peek().isOp(".")) {
        next();
        const Token& n = expectName("an attribute name after '.'");
        auto attr = std::make_unique<Expr>();
        attr->kind = ExprKind::Attribute;
        attr->loc = n.loc;
        attr->str = n.text;
        attr->lhs = std::move(e);
        e = bounded(std::move(attr));
      } else {
        return e;
      }
    }
  }

  // subscript := ":" | expr
  ExprPtr subscript() {
    if (peek().isOp(":")) {
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Slice;
      e->loc = next().loc;
      if (!peek().isOp(",") && !peek().isOp("]"))
        fail(peek(), "only a bare ':' is supported in subscripts (no slices with bounds)");
      return e;
    }
    return expr();
  }

  // atom := NAME | INT | FLOAT | STRING | "True" | "False" | "None"
  //       | "(" [ expr { "," expr } [","] ] ")"
  ExprPtr atom() {
    const Token& t = peek();
    auto e = std::make_unique<Expr>();
    e->loc = t.loc;
    switch (t.kind) {
      case TokKind::Name:
        e->kind = ExprKind::Name;
        e->str = t.text;
        next();
        return e;
      case TokKind::Int:
        e->kind = ExprKind::Int;
        e->ival = t.ival;
        next();
        return e;
      case TokKind::Float:
        e->kind = ExprKind::Float;
        e->fval = t.fval;
        next();
        return e;
      case TokKind::String:
        e->kind = ExprKind::String;
        e->str = t.text;
        next();
        return e;
      case TokKind::Keyword:
        if (t.text == "True" || t.text == "False") {
          e->kind = ExprKind::Bool;
          e->ival = t.text == "True";
          next();
          return e;
        }
        if (t.text == "None") {
          e->kind = ExprKind::None;
          next();
          return e;
        }
        if (const char* hint = unsupportedKeywordHint(t.text)) fail(t, hint);
        fail(t, "expected an expression, got the keyword '" + t.text + "'");
      case TokKind::Op:
        if (t.text == "(") {
          next();
          if (acceptOp(")")) {
            e->kind = ExprKind::Tuple;
            return e;
          }
          ExprPtr first = expr();
          if (!peek().isOp(",")) {
            expectOp(")", "to close the parenthesis");
            return first;
          }
          e->kind = ExprKind::Tuple;
          e->items.push_back(std::move(first));
          while (acceptOp(",")) {
            if (peek().isOp(")")) break;
            e->items.push_back(expr());
          }
          expectOp(")", "to close the tuple");
          return bounded(std::move(e));
        }
        if (t.text == "[") {  // [a, b]: a list, which tilelab treats as a tuple (Triton's list shapes)
          next();
          e->kind = ExprKind::Tuple;
          e->isList = true;
          while (!peek().isOp("]")) {
            e->items.push_back(expr());
            if (!acceptOp(",")) break;
          }
          expectOp("]", "to close the list");
          return bounded(std::move(e));
        }
        fail(t, "expected an expression, got " + describe(t));
      default:
        fail(t, "expected an expression, got " + describe(t));
    }
  }
};

}  // namespace

std::unique_ptr<Module> parseModule(const std::vector<Token>& tokens, DiagEngine& diag) {
  if (tokens.empty()) return std::make_unique<Module>();
  return Parser(tokens, diag).module();
}

ExprPtr parseExpression(const std::vector<Token>& tokens, DiagEngine& diag) {
  if (tokens.empty()) return nullptr;
  return Parser(tokens, diag).standaloneExpr();
}

}  // namespace tl
