// The lexer: .tl source text -> tokens, each with its line and column.
//
// Python-style layout: a logical line ends with a NEWLINE token; a deeper indentation opens an
// INDENT, a shallower one closes one DEDENT per level. Blank lines and comment-only lines do not
// count. Inside (), [] and {} newlines are ignored (implicit line joining), as in Python.
//
// Expects: any text. Guarantees: the token list always ends with NEWLINE (if there was any
// token), balanced DEDENTs and one End token; lexical errors (a tab in indentation, an
// inconsistent dedent, an unknown character, `**`, ...) go to the DiagEngine and lexing goes on.
// A UTF-8 byte-order mark at the very start is skipped (columns still start at 1); any other
// non-ASCII character outside strings and comments is one error for its whole UTF-8 sequence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Diagnostics.h"

namespace tl {

enum class TokKind {
  Name,     // identifier: x_ptr, load, constexpr, f32
  Keyword,  // def for in if elif else pass True False None (and reserved Python words)
  Int,      // integer literal (value in ival)
  Float,    // float literal (value in fval)
  String,   // '...' or "..." (value in text, quotes removed)
  Op,       // operator or punctuation: + - * / // % & | ^ ~ < <= ( ) [ ] , : . @ = += ...
  Newline,  // end of a logical line
  Indent,   // indentation grew
  Dedent,   // indentation shrank by one level
  End,      // end of input
};

struct Token {
  TokKind kind = TokKind::End;
  std::string text;  // the spelling (string contents for String)
  Loc loc;
  int64_t ival = 0;
  double fval = 0;

  bool is(TokKind k) const { return kind == k; }
  bool isOp(const char* s) const { return kind == TokKind::Op && text == s; }
  bool isKeyword(const char* s) const { return kind == TokKind::Keyword && text == s; }
};

// Printable description of a token for error messages: "'foo'", "end of line", "indentation".
std::string describe(const Token& t);

// Lexes the whole file. Errors go to `diag` (whose file should be `file`).
std::vector<Token> lex(const SourceFile& file, DiagEngine& diag);

}  // namespace tl
