// The lexer (see Lexer.h for the contract). One pass over the text; the indentation stack turns
// leading spaces into INDENT / DEDENT tokens at the start of each logical line.
#include "frontend/Lexer.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tl {

namespace {

// Words the lexer marks as keywords. The first group is the language; the second group are
// Python words the language does not support: the parser reports a clear error for them.
const char* const kKeywords[] = {
    "def", "for", "in", "if", "elif", "else", "pass", "True", "False", "None",
    "and", "or", "not", "while", "return", "import", "from", "class", "lambda", "break",
    "continue", "is", "global", "nonlocal", "yield", "try", "except", "raise", "assert", "del",
    "with", "as", "async", "await", "finally"};

// Operators, longest first so that `//=` wins over `//` and `/`.
const char* const kOps[] = {"//=", "**=", "<<=", ">>=", "//", "**", "<<", ">>", "<=", ">=",
                            "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->",
                            "+", "-", "*", "/", "%", "&", "|", "^", "~", "<", ">", "=", "(",
                            ")", "[", "]", "{", "}", ",", ":", ".", "@", ";"};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  Lexer(const SourceFile& file, DiagEngine& diag) : text_(file.text()), diag_(diag) {}

  std::vector<Token> run() {
    indents_.push_back(0);
    // A UTF-8 byte-order mark (editors on Windows write one) is not part of the program: skip it
    // without moving the column, so line 1 still starts at column 1.
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    while (pos_ < text_.size()) {
      if (atLineStart_ && depth_ == 0) {
        if (!handleIndentation()) continue;  // blank or comment line: skipped entirely
      }
      lexToken();
    }
    if (!open_.empty()) diag_.error(open_.back().loc, "'" + open_.back().text + "' was never closed");
    // End of input: close the last logical line and every open indentation level.
    if (!toks_.empty() && !toks_.back().is(TokKind::Newline) && !toks_.back().is(TokKind::Dedent))
      push(TokKind::Newline, "", here());
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(TokKind::Dedent, "", here());
    }
    push(TokKind::End, "", here());
    return std::move(toks_);
  }

 private:
  const std::string& text_;
  DiagEngine& diag_;
  std::vector<Token> toks_;
  std::vector<int> indents_;  // the indentation stack (columns of open blocks)
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
  int depth_ = 0;             // open brackets: newlines inside are ignored
  std::vector<Token> open_;   // the open brackets, innermost last (for "never closed")
  bool atLineStart_ = true;

  Loc here() const { return Loc{line_, col_}; }
  char peek(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  void advance() {
    if (pos_ >= text_.size()) return;
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void push(TokKind k, std::string text, Loc loc) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.loc = loc;
    toks_.push_back(std::move(t));
  }

  // At the start of a line outside brackets: measure the indentation and emit INDENT/DEDENT.
  // Returns false when the line is blank or only a comment (it was consumed).
  bool handleIndentation() {
    int width = 0;
    bool sawTab = false;
    Loc tabLoc;
    while (peek() == ' ' || peek() == '\t' || peek() == '\f' || peek() == '\r') {
      if (peek() == '\t' && !sawTab) {
        sawTab = true;
        tabLoc = here();
      }
      if (peek() != '\r') ++width;
      advance();
    }
    if (peek() == '#') {
      while (pos_ < text_.size() && peek() != '\n') advance();
    }
    if (pos_ >= text_.size()) return false;
    if (peek() == '\n') {
      advance();
      return false;
    }
    atLineStart_ = false;
    if (sawTab) {
      diag_.error(tabLoc, "tab in indentation: indent with spaces only");
      width = indents_.back();  // recover: assume the line continues the current block
    }
    Loc loc{line_, 1};
    if (width > indents_.back()) {
      indents_.push_back(width);
      push(TokKind::Indent, "", loc);
    } else if (width < indents_.back()) {
      while (indents_.size() > 1 && width < indents_.back()) {
        indents_.pop_back();
        push(TokKind::Dedent, "", loc);
      }
      if (width != indents_.back()) {
        diag_.error(here(), "unindent does not match any outer indentation level");
        // Recover by treating this line as if it were at the level just closed.
      }
    }
    return true;
  }

  void lexToken() {
    char c = peek();
    Loc loc = here();
    if (c == '\n') {
      advance();
      if (depth_ == 0) {
        push(TokKind::Newline, "", loc);
        atLineStart_ = true;
      }
      return;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      advance();
      return;
    }
    if (c == '#') {
      while (pos_ < text_.size() && peek() != '\n') advance();
      return;
    }
    if (c == '\\' && (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n'))) {
      // Explicit line joining: the next line continues this one.
      while (peek() != '\n') advance();
      advance();
      return;
    }
    if (isIdentStart(c)) return lexName(loc);
    if (isDigit(c) || (c == '.' && isDigit(peek(1)))) return lexNumber(loc);
    if (c == '"' || c == '\'') return lexString(loc);
    for (const char* op : kOps) {
      size_t n = std::char_traits<char>::length(op);
      if (text_.compare(pos_, n, op) == 0) {
        for (size_t i = 0; i < n; ++i) advance();
        std::string s = op;
        if (s == "(" || s == "[" || s == "{") {
          ++depth_;
          open_.push_back(Token{TokKind::Op, s, loc});
        }
        if ((s == ")" || s == "]" || s == "}") && depth_ > 0) {
          --depth_;
          open_.pop_back();
        }
        push(TokKind::Op, s, loc);
        return;
      }
    }
    if (static_cast<unsigned char>(c) >= 0x80) return lexNonAscii(loc);
    std::string shown = std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c)
                                                                   : "\\x" + hex(static_cast<unsigned char>(c));
    diag_.error(loc, "unexpected character '" + shown + "'");
    advance();
  }

  // A non-ASCII character outside a string or comment: one error for the whole UTF-8 sequence
  // (not one per byte), naming its code point, with a hint for the usual copy-paste accidents.
  void lexNonAscii(Loc loc) {
    const unsigned char lead = static_cast<unsigned char>(peek());
    size_t n = lead >= 0xF0 && lead <= 0xF7 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    uint32_t cp = n == 4 ? lead & 0x07 : n == 3 ? lead & 0x0F : n == 2 ? lead & 0x1F : lead;
    for (size_t k = 1; k < n; ++k) {
      const unsigned char cont = static_cast<unsigned char>(peek(k));
      if ((cont & 0xC0) != 0x80) {  // not valid UTF-8: report the one byte
        n = 1;
        break;
      }
      cp = (cp << 6) | (cont & 0x3F);
    }
    std::string msg;
    if (n == 1) {
      msg = "unexpected byte \\x" + hex(lead) + " (not ASCII, and not valid UTF-8)";
    } else {
      char buf[16];
      std::snprintf(buf, sizeof buf, "U+%04X", cp);
      msg = std::string("unexpected character ") + buf + ": kernels are written in ASCII";
      if (cp == 0xFEFF) msg += " (a byte-order mark is only allowed at the start of the file)";
      else if (cp == 0x00A0 || cp == 0x202F || cp == 0x2009) msg += " (a non-ASCII space: retype it as ' ')";
      else if (cp == 0x2018 || cp == 0x2019 || cp == 0x201C || cp == 0x201D) msg += " (a typographic quote: use ' or \")";
      else if (cp == 0x2212 || cp == 0x2013 || cp == 0x2014) msg += " (a dash: use '-')";
    }
    diag_.error(loc, msg);
    for (size_t k = 0; k < n; ++k) advance();
    // Go on as if the ASCII character had been typed, so the line raises no follow-up errors
    // (a non-ASCII space is skipped like a space).
    if (n > 1 && (cp == 0x2212 || cp == 0x2013 || cp == 0x2014)) push(TokKind::Op, "-", loc);
  }

  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return std::string{d[(v >> 4) & 15], d[v & 15]};
  }

  void lexName(Loc loc) {
    size_t b = pos_;
    while (isIdentChar(peek())) advance();
    std::string s = text_.substr(b, pos_ - b);
    TokKind k = TokKind::Name;
    for (const char* kw : kKeywords)
      if (s == kw) k = TokKind::Keyword;
    push(k, std::move(s), loc);
  }

  // int   := digits | '0x' hexdigits
  // float := digits '.' [digits] [exp] | '.' digits [exp] | digits exp ;  exp := [eE] [+-] digits
  void lexNumber(Loc loc) {
    size_t b = pos_;
    bool isFloatLit = false;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
      advance();
      advance();
      while (std::isxdigit(static_cast<unsigned char>(peek()))) advance();
    } else {
      while (isDigit(peek())) advance();
      if (peek() == '.') {
        isFloatLit = true;
        advance();
        while (isDigit(peek())) advance();
      }
      if ((peek() == 'e' || peek() == 'E') &&
          (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
        isFloatLit = true;
        advance();
        if (peek() == '+' || peek() == '-') advance();
        while (isDigit(peek())) advance();
      }
    }
    std::string s = text_.substr(b, pos_ - b);
    if (isIdentChar(peek())) {
      while (isIdentChar(peek())) advance();
      diag_.error(loc, "invalid number literal '" + text_.substr(b, pos_ - b) + "'");
    }
    Token t;
    t.loc = loc;
    t.text = s;
    if (isFloatLit) {
      t.kind = TokKind::Float;
      t.fval = std::strtod(s.c_str(), nullptr);
      if (std::isinf(t.fval)) diag_.error(loc, "float literal '" + s + "' is too large");
    } else {
      t.kind = TokKind::Int;
      errno = 0;
      bool hexLit = s.size() > 1 && (s[1] == 'x' || s[1] == 'X');
      unsigned long long v = std::strtoull(hexLit ? s.c_str() + 2 : s.c_str(), nullptr, hexLit ? 16 : 10);
      if (hexLit && s.size() == 2) diag_.error(loc, "invalid number literal '" + s + "'");
      if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX)) {
        diag_.error(loc, "integer literal '" + s + "' does not fit in 64 bits");
        v = 0;
      }
      t.ival = static_cast<int64_t>(v);
    }
    toks_.push_back(std::move(t));
  }

  void lexString(Loc loc) {
    char quote = peek();
    if (peek(1) == quote && peek(2) == quote) return lexLongString(loc, quote);
    advance();
    std::string s;
    while (pos_ < text_.size() && peek() != quote && peek() != '\n') takeChar(s, /*escapeNewline=*/false);
    if (peek() != quote) {
      diag_.error(loc, "unterminated string literal");
    } else {
      advance();
    }
    push(TokKind::String, std::move(s), loc);
  }

  // '''...''' or """...""" (docstrings): may span lines; backslash escapes as above.
  void lexLongString(Loc loc, char quote) {
    for (int k = 0; k < 3; ++k) advance();
    std::string s;
    while (pos_ < text_.size() && !(peek() == quote && peek(1) == quote && peek(2) == quote)) takeChar(s, true);
    if (pos_ >= text_.size()) {
      diag_.error(loc, "unterminated triple-quoted string");
    } else {
      for (int k = 0; k < 3; ++k) advance();
    }
    push(TokKind::String, std::move(s), loc);
  }

  // One character of a string's contents into `s`: \n and \t escapes, any other escaped
  // character as itself (a backslash before a newline only inside triple quotes).
  void takeChar(std::string& s, bool escapeNewline) {
    if (peek() == '\\' && pos_ + 1 < text_.size() && (escapeNewline || peek(1) != '\n')) {
      advance();
      char e = peek();
      s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      advance();
      return;
    }
    s += peek();
    advance();
  }
};

}  // namespace

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokKind::Newline: return "end of line";
    case TokKind::Indent: return "indentation";
    case TokKind::Dedent: return "end of block";
    case TokKind::End: return "end of file";
    case TokKind::String: return "string \"" + t.text + "\"";
    default: return "'" + t.text + "'";
  }
}

std::vector<Token> lex(const SourceFile& file, DiagEngine& diag) { return Lexer(file, diag).run(); }

}  // namespace tl
