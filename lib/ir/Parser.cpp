// The IR parser: reads the textual form written by ir/Printer.cpp back into a Function.
//
// Expects: any text (the printer's output, hand-written IR in tests, or garbage).
// Guarantees: either a Function that passes verifyFunction(), or nullptr with at least one
// error in the DiagEngine located at a line:col of the IR text. It never crashes, throws out or
// loops: the lexer always advances, nesting is bounded, and every op is checked with verifyOp()
// as soon as it is read, so a type mismatch is reported at the op that has it.
//
// The parser stops at the first error (IR text is machine-written; one precise error beats a
// cascade). Each parse function below carries its grammar rule; docs/ir.md has the full grammar.
#include "ir/Parser.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/Verifier.h"

namespace tl {

namespace {

// ---------------------------------------------------------------------------------------------
// Lexer

enum class Tok {
  Eof,        // end of the text
  Error,      // a character sequence that is no token; `error` says why
  ValueName,  // %x, %acc.1, %7
  FuncName,   // @softmax_kernel or @"any name"
  Ident,      // func, add, loc, iter_args, f32, inf, ...
  Int,        // 42, -7
  Float,      // 1.5, -2e-30 (has '.' or an exponent)
  String,     // "lt" (text keeps the quotes; `value` has the unescaped contents)
  LParen,     // (
  RParen,     // )
  LBrace,     // {
  RBrace,     // }
  Comma,      // ,
  Equal,      // =
  Colon,      // :
  Minus,      // - (not followed by a digit: only in -inf)
  Less,       // < (only starts a tile type)
  LBracket,   // [ (an integer-list attribute)
  RBracket,   // ]
};

struct Token {
  Tok kind = Tok::Eof;
  std::string_view text;  // the token's characters in the source
  Loc loc;                // where it starts
  size_t offset = 0;      // byte offset of its first character
  std::string value;      // String: the unescaped contents; Error: the message
};

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }

const char* tokName(Tok k) {
  switch (k) {
    case Tok::Eof: return "end of input";
    case Tok::Error: return "invalid token";
    case Tok::ValueName: return "a value name";
    case Tok::FuncName: return "a function name";
    case Tok::Ident: return "an identifier";
    case Tok::Int: return "an integer";
    case Tok::Float: return "a float";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::Comma: return "','";
    case Tok::Equal: return "'='";
    case Tok::Colon: return "':'";
    case Tok::Minus: return "'-'";
    case Tok::Less: return "'<'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
  }
  return "?";
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  // The lexer's position; saved and restored for lookahead and to re-lex after a type.
  struct State {
    size_t pos = 0;
    uint32_t line = 1, col = 1;
  };
  State save() const { return st_; }
  void restore(State s) { st_ = s; }
  // Skips `n` characters that contain no newline (a type parsed by tl::parseType).
  void skipSameLine(size_t n) {
    st_.pos += n;
    st_.col += static_cast<uint32_t>(n);
  }

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.loc = {st_.line, st_.col};
    t.offset = st_.pos;
    if (st_.pos >= src_.size()) return t;  // Eof
    char c = src_[st_.pos];
    auto single = [&](Tok k) {
      bump();
      t.kind = k;
      return finish(t);
    };
    switch (c) {
      case '(': return single(Tok::LParen);
      case ')': return single(Tok::RParen);
      case '{': return single(Tok::LBrace);
      case '}': return single(Tok::RBrace);
      case ',': return single(Tok::Comma);
      case '=': return single(Tok::Equal);
      case ':': return single(Tok::Colon);
      case '<': return single(Tok::Less);
      case '[': return single(Tok::LBracket);
      case ']': return single(Tok::RBracket);
      case '"': return lexString(t);
      default: break;
    }
    if (c == '%' || c == '@') {
      bump();
      if (c == '@' && peekChar() == '"') {
        lexString(t);
        if (t.kind == Tok::String) t.kind = Tok::FuncName;
        return t;
      }
      size_t b = st_.pos;
      while (isNameChar(peekChar())) bump();
      t.kind = c == '%' ? Tok::ValueName : Tok::FuncName;
      if (st_.pos == b) return error(t, std::string("expected a name after '") + c + "'");
      t.value = std::string(src_.substr(b, st_.pos - b));
      return finish(t);
    }
    if (isDigit(c) || (c == '-' && isDigit(peekChar(1)))) return lexNumber(t);
    if (c == '-') return single(Tok::Minus);
    if (isIdentStart(c)) {
      while (isIdentChar(peekChar())) bump();
      t.kind = Tok::Ident;
      return finish(t);
    }
    bump();
    std::string shown = (c >= 0x20 && c < 0x7f) ? std::string(1, c) : "\\x" + hex(static_cast<unsigned char>(c));
    return error(t, "unexpected character '" + shown + "'");
  }

 private:
  std::string_view src_;
  State st_;

  char peekChar(size_t ahead = 0) const {
    return st_.pos + ahead < src_.size() ? src_[st_.pos + ahead] : '\0';
  }
  void bump() {
    if (src_[st_.pos] == '\n') {
      ++st_.line;
      st_.col = 1;
    } else {
      ++st_.col;
    }
    ++st_.pos;
  }
  Token& finish(Token& t) {
    t.text = src_.substr(t.offset, st_.pos - t.offset);
    return t;
  }
  Token& error(Token& t, std::string msg) {
    t.kind = Tok::Error;
    t.value = std::move(msg);
    return finish(t);
  }
  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return {d[(v >> 4) & 15], d[v & 15]};
  }

  void skipSpaceAndComments() {
    while (st_.pos < src_.size()) {
      char c = src_[st_.pos];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        bump();
      } else if (c == '/' && peekChar(1) == '/') {
        while (st_.pos < src_.size() && src_[st_.pos] != '\n') bump();
      } else {
        break;
      }
    }
  }

  // number := '-'? digit+ ('.' digit*)? ([eE] [+-]? digit+)?
  Token lexNumber(Token& t) {
    if (peekChar() == '-') bump();
    while (isDigit(peekChar())) bump();
    t.kind = Tok::Int;
    if (peekChar() == '.') {
      t.kind = Tok::Float;
      bump();
      while (isDigit(peekChar())) bump();
    }
    if ((peekChar() == 'e' || peekChar() == 'E') &&
        (isDigit(peekChar(1)) || ((peekChar(1) == '+' || peekChar(1) == '-') && isDigit(peekChar(2))))) {
      t.kind = Tok::Float;
      bump();
      if (peekChar() == '+' || peekChar() == '-') bump();
      while (isDigit(peekChar())) bump();
    }
    return finish(t);
  }

  // string := '"' (char | '\' ["\\nt] | '\x' hex hex)* '"'
  Token lexString(Token& t) {
    bump();  // the opening quote
    std::string v;
    while (true) {
      if (st_.pos >= src_.size() || peekChar() == '\n') return error(t, "unterminated string");
      char c = peekChar();
      bump();
      if (c == '"') break;
      if (c != '\\') {
        v += c;
        continue;
      }
      char e = peekChar();
      if (e == '"' || e == '\\') v += e;
      else if (e == 'n') v += '\n';
      else if (e == 't') v += '\t';
      else if (e == 'x' && std::isxdigit(static_cast<unsigned char>(peekChar(1))) &&
               std::isxdigit(static_cast<unsigned char>(peekChar(2)))) {
        v += static_cast<char>(std::stoi(std::string(src_.substr(st_.pos + 1, 2)), nullptr, 16));
        bump();
        bump();
      } else {
        return error(t, "invalid escape in string");
      }
      bump();
    }
    t.kind = Tok::String;
    t.value = std::move(v);
    return finish(t);
  }
};

// ---------------------------------------------------------------------------------------------
// Parser

// Nesting deeper than this is rejected (keeps recursion bounded on hostile input).
constexpr int kMaxRegionDepth = 200;

// Thrown after the error has been reported; caught in parseFunction().
struct ParseFailure {};

// A value name as written, with where it was written.
struct NameRef {
  std::string name;  // without the '%'
  Loc loc;
};

class Parser {
 public:
  Parser(std::string_view src, DiagEngine& diag) : src_(src), diag_(diag), lex_(src) {}

  std::unique_ptr<Function> run() {
    try {
      advance();
      auto fn = parseFunc();
      std::string problems = verifyFunction(*fn);
      if (!problems.empty()) fail(funcLoc_, "the parsed function does not verify:\n" + problems);
      return fn;
    } catch (const ParseFailure&) {
      return nullptr;
    } catch (const std::exception& e) {  // defensive: nothing below is expected to throw
      diag_.error(tok_.loc, std::string("internal parser error: ") + e.what());
      return nullptr;
    }
  }

 private:
  std::string_view src_;
  DiagEngine& diag_;
  Lexer lex_;
  Token tok_;  // the current token
  Loc funcLoc_;
  // Visible values: one map per enclosing region, innermost last.
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  // Every name defined so far in the function (names are unique per function).
  std::unordered_set<std::string> defined_;
  int depth_ = 0;
  IRLevel level_ = IRLevel::Block;  // the function's level: which ops it may contain

  // --- token helpers ------------------------------------------------------------------------

  [[noreturn]] void fail(Loc loc, std::string msg) {
    diag_.error(loc, std::move(msg));
    throw ParseFailure{};
  }

  void advance() {
    tok_ = lex_.next();
    if (tok_.kind == Tok::Error) fail(tok_.loc, tok_.value);
  }

  std::string describe(const Token& t) const {
    if (t.kind == Tok::Eof) return "end of input";
    std::string text(t.text.substr(0, 24));
    return "'" + text + (t.text.size() > 24 ? "...'" : "'");
  }

  // Consumes a token of kind `k` (and text `text` when given) or fails with "expected ...".
  Token expect(Tok k, std::string_view what = {}, std::string_view text = {}) {
    if (tok_.kind != k || (!text.empty() && tok_.text != text)) {
      std::string want = !what.empty() ? std::string(what) : tokName(k);
      fail(tok_.loc, "expected " + want + ", got " + describe(tok_));
    }
    Token t = tok_;
    advance();
    return t;
  }
  bool isIdent(std::string_view text) const { return tok_.kind == Tok::Ident && tok_.text == text; }
  bool accept(Tok k) {
    if (tok_.kind != k) return false;
    advance();
    return true;
  }
  // The kinds of the two tokens after the current one (lookahead; the lexer is restored).
  std::pair<Token, Token> peekTwo() {
    Lexer::State s = lex_.save();
    Token a = lex_.next(), b = lex_.next();
    lex_.restore(s);
    return {a, b};
  }

  // --- values -------------------------------------------------------------------------------

  NameRef valueName() {
    Token t = expect(Tok::ValueName, "a value name like '%x'");
    return {t.value, t.loc};
  }

  // A use of a value: it must be defined earlier in this region or an enclosing one.
  Value* resolve(const NameRef& n) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto v = it->find(n.name);
      if (v != it->end()) return v->second;
    }
    if (defined_.count(n.name))
      fail(n.loc, "value '%" + n.name + "' is defined in a region that does not enclose this use");
    fail(n.loc, "use of undefined value '%" + n.name + "'");
  }
  Value* useValue() { return resolve(valueName()); }

  // Makes `v` visible under `n` in the innermost region. Pure numbers (%7) were unnamed values
  // and get no name hint, so the printer numbers them again.
  void declare(const NameRef& n, Value* v) {
    if (defined_.count(n.name)) fail(n.loc, "redefinition of value '%" + n.name + "'");
    defined_.insert(n.name);
    scopes_.back()[n.name] = v;
    bool numeric = !n.name.empty() && n.name.find_first_not_of("0123456789") == std::string::npos;
    v->name = numeric ? std::string() : n.name;
  }

  // --- small pieces -------------------------------------------------------------------------

  // type := (see tl::parseType: i32, ptr<f32>, <64x64xf16>, ...)
  Type parseTypeHere() {
    if (tok_.kind == Tok::Eof) fail(tok_.loc, "expected a type, got end of input");
    size_t consumed = 0;
    auto t = parseType(src_.substr(tok_.offset), &consumed);
    if (!t || consumed == 0) fail(tok_.loc, "malformed type starting at " + describe(tok_));
    // Re-lex from just after the type (types never span lines).
    Lexer::State s;
    s.pos = tok_.offset;
    s.line = tok_.loc.line;
    s.col = tok_.loc.col;
    lex_.restore(s);
    lex_.skipSameLine(consumed);
    advance();
    return *t;
  }

  // type-list := type (',' type)*
  std::vector<Type> parseTypeList() {
    std::vector<Type> types{parseTypeHere()};
    while (accept(Tok::Comma)) types.push_back(parseTypeHere());
    return types;
  }

  int64_t parseInt() {
    Token t = expect(Tok::Int, "an integer");
    int64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
      fail(t.loc, "integer " + std::string(t.text) + " does not fit in 64 bits");
    return v;
  }

  // attr-value := INT | FLOAT | STRING | 'inf' | '-' 'inf' | 'nan' | '[' (INT (',' INT)*)? ']'
  Attr parseAttrValue() {
    Loc at = tok_.loc;
    if (tok_.kind == Tok::Int) return parseInt();
    if (accept(Tok::LBracket)) {
      std::vector<int64_t> list;
      if (accept(Tok::RBracket)) return list;
      do {
        if (tok_.kind != Tok::Int) fail(tok_.loc, "expected an integer in the list, got " + describe(tok_));
        list.push_back(parseInt());
      } while (accept(Tok::Comma));
      expect(Tok::RBracket, "',' or ']' in the integer list");
      return list;
    }
    if (tok_.kind == Tok::String) {
      std::string s = tok_.value;
      advance();
      return s;
    }
    if (tok_.kind == Tok::Float) {
      Token t = tok_;
      advance();
      double d = 0;
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), d);
      if (r.ec == std::errc::result_out_of_range) fail(at, "float " + std::string(t.text) + " is out of range");
      if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size())
        fail(at, "malformed float " + std::string(t.text));
      return d;
    }
    bool negative = accept(Tok::Minus);
    if (isIdent("inf")) {
      advance();
      return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    }
    if (!negative && isIdent("nan")) {
      advance();
      return std::numeric_limits<double>::quiet_NaN();
    }
    fail(tok_.loc, "expected an attribute value (integer, float, inf, nan or string), got " + describe(tok_));
  }

  // attr-dict := '{' (IDENT '=' attr-value (',' IDENT '=' attr-value)*)? '}'
  std::vector<NamedAttr> parseAttrDict() {
    expect(Tok::LBrace);
    std::vector<NamedAttr> attrs;
    if (accept(Tok::RBrace)) return attrs;
    do {
      Token name = expect(Tok::Ident, "an attribute name");
      for (const auto& a : attrs)
        if (a.name == name.text) fail(name.loc, "duplicate attribute '" + std::string(name.text) + "'");
      expect(Tok::Equal);
      attrs.push_back({std::string(name.text), parseAttrValue()});
    } while (accept(Tok::Comma));
    expect(Tok::RBrace, "',' or '}' in the attribute list");
    return attrs;
  }

  // True when the current '{' opens an attribute dictionary rather than a region: `{ name =`.
  bool atAttrDict() {
    if (tok_.kind != Tok::LBrace) return false;
    auto [a, b] = peekTwo();
    return a.kind == Tok::Ident && b.kind == Tok::Equal;
  }

  // True when the current value name starts the next op's `%a, %b =` rather than an operand
  // list (`return` followed by `%x = ...` on the next line: return takes no %x).
  bool atResultList() {
    Lexer::State s = lex_.save();
    bool result = false;
    while (true) {
      Token t = lex_.next();
      if (t.kind == Tok::Equal) result = true;
      if (t.kind != Tok::Comma) break;
      if (lex_.next().kind != Tok::ValueName) break;
    }
    lex_.restore(s);
    return result;
  }

  // loc := 'loc' '(' INT ':' INT ')'   (optional everywhere; absent means "unknown")
  Loc parseOptionalLoc() {
    if (!isIdent("loc")) return {};
    advance();
    expect(Tok::LParen);
    Loc at = tok_.loc;
    int64_t line = parseInt();
    expect(Tok::Colon);
    int64_t col = parseInt();
    expect(Tok::RParen);
    if (line < 1 || line > UINT32_MAX || col < 0 || col > UINT32_MAX)
      fail(at, "location out of range (lines start at 1)");
    return {static_cast<uint32_t>(line), static_cast<uint32_t>(col)};
  }

  // Runs the verifier's per-op rules; a violation is reported at `at` (the op in the IR text).
  void checkOp(const Op& op, Loc at) {
    std::optional<std::string> err;
    try {
      err = verifyOp(op);
    } catch (const IRError& e) {
      err = e.what();
    }
    if (err) fail(at, *err);
  }

  // --- function -----------------------------------------------------------------------------

  // func := ('func' | 'thread_func') FUNCNAME '(' (param (',' param)*)? ')' constexprs?
  //         ('num_warps' '(' INT ')')? ('max_registers' '(' INT ')')? ('shared_bytes' '(' INT ')')? loc? region
  // param := VALUE ':' type
  // constexprs := 'constexprs' '(' IDENT '=' INT (',' IDENT '=' INT)* ')'
  std::unique_ptr<Function> parseFunc() {
    auto fn = std::make_unique<Function>();
    Loc start = tok_.loc;
    funcLoc_ = start;
    if (isIdent("thread_func")) {
      fn->level = IRLevel::Thread;
      advance();
    } else {
      expect(Tok::Ident, "'func' or 'thread_func'", "func");
    }
    level_ = fn->level;
    Token name = expect(Tok::FuncName, "a function name like '@kernel'");
    fn->name = name.kind == Tok::FuncName && !name.value.empty() ? name.value : std::string();
    if (fn->name.empty()) fail(name.loc, "empty function name");

    scopes_.emplace_back();
    expect(Tok::LParen);
    if (tok_.kind != Tok::RParen) {
      do {
        NameRef p = valueName();
        expect(Tok::Colon);
        Loc typeLoc = tok_.loc;
        Type t = parseTypeHere();
        if (!t.isScalar()) fail(typeLoc, "parameter '%" + p.name + "' must be a scalar or a pointer, got " + t.str());
        Value* v = fn->body.addArg(t);
        declare(p, v);
        fn->params.push_back({p.name, t.isPtr ? Param::Kind::Pointer : Param::Kind::Scalar, Loc{}});
      } while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "',' or ')' in the parameter list");

    if (isIdent("constexprs")) {
      advance();
      expect(Tok::LParen);
      do {
        Token n = expect(Tok::Ident, "a constexpr name");
        for (const auto& c : fn->constexprs)
          if (c.first == n.text) fail(n.loc, "duplicate constexpr '" + std::string(n.text) + "'");
        expect(Tok::Equal);
        fn->constexprs.emplace_back(std::string(n.text), parseInt());
      } while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')' in the constexpr list");
    }
    if (isIdent("num_warps")) {
      advance();
      expect(Tok::LParen);
      Loc at = tok_.loc;
      int64_t w = parseInt();
      if (w < 1 || w > 32 || !isPowerOfTwo(w)) fail(at, "num_warps must be a power of two in 1..32");
      fn->numWarps = static_cast<int>(w);
      expect(Tok::RParen);
    }
    if (isIdent("max_registers")) {
      advance();
      expect(Tok::LParen);
      Loc at = tok_.loc;
      int64_t r = parseInt();
      if (r < kMinMaxRegisters || r > kMaxMaxRegisters)
        fail(at, "max_registers must be from " + std::to_string(kMinMaxRegisters) + " to " + std::to_string(kMaxMaxRegisters));
      fn->maxRegisters = static_cast<int>(r);
      expect(Tok::RParen);
    }
    if (fn->level == IRLevel::Thread && isIdent("shared_bytes")) {
      advance();
      expect(Tok::LParen);
      Loc at = tok_.loc;
      fn->sharedBytes = parseInt();
      if (fn->sharedBytes < 0 || fn->sharedBytes > (int64_t(1) << 30)) fail(at, "shared_bytes out of range");
      expect(Tok::RParen);
    }
    fn->loc = parseOptionalLoc();

    parseRegion(fn->body, OpKind::Return, nullptr);  // pops the parameter scope
    if (tok_.kind != Tok::Eof) fail(tok_.loc, "expected end of input after the function, got " + describe(tok_));
    return fn;
  }

  // --- regions ------------------------------------------------------------------------------

  // region := '{' op* '}'
  // The caller has pushed the region's scope (with its arguments); this pops it. The region
  // must end with `term` (return for the body, yield for for/if), whose values match `yields`.
  void parseRegion(Region& r, OpKind term, const std::vector<Type>* yields) {
    if (++depth_ > kMaxRegionDepth) fail(tok_.loc, "regions nested too deeply");
    expect(Tok::LBrace, "'{' to open a region");
    while (tok_.kind != Tok::RBrace) {
      if (tok_.kind == Tok::Eof) fail(tok_.loc, "expected '}' to close the region, got end of input");
      Loc opLoc = tok_.loc;
      Op& op = parseOp(r);
      if (op.info().category != OpCategory::Terminator) continue;
      if (op.kind != term)
        fail(opLoc, std::string("'") + mnemonic(op.kind) + "' cannot end this region; expected '" +
                        mnemonic(term) + "'");
      if (yields) checkYield(op, *yields, opLoc);
      if (tok_.kind == Tok::Eof) fail(tok_.loc, "expected '}' to close the region, got end of input");
      if (tok_.kind != Tok::RBrace)
        fail(tok_.loc, std::string("'") + mnemonic(op.kind) + "' must be the last op of its region");
    }
    if (r.ops.empty() || r.ops.back()->kind != term)
      fail(tok_.loc, std::string("region must end with '") + mnemonic(term) + "'");
    advance();  // '}'
    scopes_.pop_back();
    --depth_;
  }

  void checkYield(const Op& y, const std::vector<Type>& types, Loc at) {
    if (y.numOperands() != types.size())
      fail(at, "yield: expected " + std::to_string(types.size()) + " values, got " +
                   std::to_string(y.numOperands()));
    for (size_t k = 0; k < types.size(); ++k)
      if (y.operand(k)->type != types[k])
        fail(at, "yield: value " + std::to_string(k) + " has type " + y.operand(k)->type.str() +
                     ", expected " + types[k].str());
  }

  // --- ops ----------------------------------------------------------------------------------

  // op := (VALUE (',' VALUE)* '=')? (generic-op | for-op | if-op)
  Op& parseOp(Region& r) {
    std::vector<NameRef> results;
    if (tok_.kind == Tok::ValueName) {
      do results.push_back(valueName());
      while (accept(Tok::Comma));
      expect(Tok::Equal, "'=' after the result names");
    }
    Token mn = expect(Tok::Ident, "an op name");
    auto kind = opKindFromMnemonic(mn.text);
    if (!kind) fail(mn.loc, "unknown op '" + std::string(mn.text) + "'");
    if (!opInfo(*kind).allowedIn(level_))
      fail(mn.loc, "op '" + std::string(mn.text) + "' is not allowed in " +
                       (level_ == IRLevel::Thread ? "thread" : "block") + " IR");

    auto owned = std::make_unique<Op>(*kind, Loc{});
    Op& op = *owned;
    op.parent = &r;
    r.ops.push_back(std::move(owned));
    if (*kind == OpKind::For) parseFor(op, results, mn.loc);
    else if (*kind == OpKind::If) parseIf(op, results, mn.loc);
    else if (*kind == OpKind::While) parseWhile(op, results, mn.loc);
    else parseGeneric(op, results, mn.loc);
    return op;
  }

  // Reads ': types' (when present) and gives `op` one result per name in `results`.
  void parseResults(Op& op, const std::vector<NameRef>& results, Loc at) {
    std::vector<Type> types;
    Loc typesLoc = tok_.loc;
    if (accept(Tok::Colon)) types = parseTypeList();
    if (types.size() != results.size())
      fail(results.empty() ? typesLoc : at,
           std::string(mnemonic(op.kind)) + ": " + std::to_string(results.size()) + " result name(s) but " +
               std::to_string(types.size()) + " result type(s)");
    for (const Type& t : types) op.addResult(t);
  }

  void declareResults(Op& op, const std::vector<NameRef>& results) {
    for (size_t i = 0; i < results.size(); ++i) declare(results[i], op.result(i));
  }

  // generic-op := MNEMONIC (VALUE (',' VALUE)*)? attr-dict? (':' type-list)? loc?
  void parseGeneric(Op& op, const std::vector<NameRef>& results, Loc at) {
    if (tok_.kind == Tok::ValueName && !atResultList()) {
      do op.operands.push_back(useValue());
      while (accept(Tok::Comma));
    }
    if (tok_.kind == Tok::LBrace) op.attrs = parseAttrDict();
    parseResults(op, results, at);
    op.loc = parseOptionalLoc();
    checkOp(op, at);
    declareResults(op, results);
  }

  // for-op := 'for' VALUE '=' VALUE 'to' VALUE 'step' VALUE
  //           ('iter_args' '(' VALUE '=' VALUE (',' VALUE '=' VALUE)* ')')?
  //           attr-dict? (':' type-list)? region loc?
  void parseFor(Op& op, const std::vector<NameRef>& results, Loc at) {
    NameRef iv = valueName();
    expect(Tok::Equal);
    op.operands.push_back(useValue());
    expect(Tok::Ident, "'to'", "to");
    op.operands.push_back(useValue());
    expect(Tok::Ident, "'step'", "step");
    op.operands.push_back(useValue());
    std::vector<NameRef> iterArgs;
    if (isIdent("iter_args")) {
      advance();
      expect(Tok::LParen);
      do {
        iterArgs.push_back(valueName());
        expect(Tok::Equal);
        op.operands.push_back(useValue());
      } while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')' in iter_args");
    }
    if (atAttrDict()) op.attrs = parseAttrDict();
    parseResults(op, results, at);
    if (iterArgs.size() != results.size())
      fail(at, "for: " + std::to_string(iterArgs.size()) + " iter_args but " + std::to_string(results.size()) +
                   " results");

    Region& body = op.addRegion();
    body.addArg(op.operand(0)->type);
    for (const auto& res : op.results) body.addArg(res->type);
    checkOp(op, at);  // bounds, carried types and body arguments, before reading the body

    scopes_.emplace_back();
    declare(iv, body.arg(0));
    for (size_t i = 0; i < iterArgs.size(); ++i) declare(iterArgs[i], body.arg(i + 1));
    std::vector<Type> types;
    for (const auto& res : op.results) types.push_back(res->type);
    parseRegion(body, OpKind::Yield, &types);
    op.loc = parseOptionalLoc();
    declareResults(op, results);
  }

  // while-op := 'while' ('iter_args' '(' VALUE '=' VALUE (',' VALUE '=' VALUE)* ')')?
  //             attr-dict? (':' type-list)? region 'do' ('(' VALUE (',' VALUE)* ')')? region loc?
  // The first region ends in `condition`, the second in yield of the carried values.
  void parseWhile(Op& op, const std::vector<NameRef>& results, Loc at) {
    std::vector<NameRef> condArgs;
    if (isIdent("iter_args")) {
      advance();
      expect(Tok::LParen);
      do {
        condArgs.push_back(valueName());
        expect(Tok::Equal);
        op.operands.push_back(useValue());
      } while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')' in iter_args");
    }
    if (atAttrDict()) op.attrs = parseAttrDict();
    parseResults(op, results, at);
    if (condArgs.size() != results.size())
      fail(at, "while: " + std::to_string(condArgs.size()) + " iter_args but " + std::to_string(results.size()) +
                   " results");
    Region& cond = op.addRegion();
    Region& body = op.addRegion();
    for (const auto& res : op.results) {
      cond.addArg(res->type);
      body.addArg(res->type);
    }
    checkOp(op, at);
    scopes_.emplace_back();
    for (size_t i = 0; i < condArgs.size(); ++i) declare(condArgs[i], cond.arg(i));
    parseRegion(cond, OpKind::Condition, nullptr);
    Token doTok = expect(Tok::Ident, "'do'", "do");
    std::vector<NameRef> bodyArgs;
    if (accept(Tok::LParen)) {
      do bodyArgs.push_back(valueName());
      while (accept(Tok::Comma));
      expect(Tok::RParen, "',' or ')' after the body's arguments");
    }
    if (bodyArgs.size() != op.numResults())
      fail(doTok.loc, "while: the body needs " + std::to_string(op.numResults()) + " argument(s), got " +
                          std::to_string(bodyArgs.size()));
    scopes_.emplace_back();
    for (size_t i = 0; i < bodyArgs.size(); ++i) declare(bodyArgs[i], body.arg(i));
    std::vector<Type> types;
    for (const auto& res : op.results) types.push_back(res->type);
    parseRegion(body, OpKind::Yield, &types);
    op.loc = parseOptionalLoc();
    declareResults(op, results);
  }

  // if-op := 'if' VALUE attr-dict? (':' type-list)? region 'else' region loc?
  void parseIf(Op& op, const std::vector<NameRef>& results, Loc at) {
    op.operands.push_back(useValue());
    if (atAttrDict()) op.attrs = parseAttrDict();
    parseResults(op, results, at);
    op.addRegion();
    op.addRegion();
    checkOp(op, at);
    std::vector<Type> types;
    for (const auto& res : op.results) types.push_back(res->type);
    scopes_.emplace_back();
    parseRegion(op.region(0), OpKind::Yield, &types);
    expect(Tok::Ident, "'else'", "else");
    scopes_.emplace_back();
    parseRegion(op.region(1), OpKind::Yield, &types);
    op.loc = parseOptionalLoc();
    declareResults(op, results);
  }
};

}  // namespace

std::unique_ptr<Function> parseFunction(std::string_view text, DiagEngine& diag) {
  return Parser(text, diag).run();
}

}  // namespace tl
