// The parser: tokens -> AST, by recursive descent; one function per grammar rule, with the rule
// in EBNF above it (docs/language.md has the whole grammar, kept in sync with this file).
//
// Expects: the token list of lex() (ending in End). Guarantees: syntax errors are reported to
// the DiagEngine with their location, and parsing recovers at the next statement (skipping to
// the end of the line or the block), so several errors are reported in one run. Every error
// path consumes at least one token, so the parser terminates on any input. Nesting is bounded
// by ast::kMaxNesting (blocks plus expression levels, AST.h): deeper input is a located error
// and no deeper AST is ever built, so the walks after the parser cannot overflow the stack.
#pragma once

#include <memory>
#include <vector>

#include "frontend/AST.h"
#include "frontend/Lexer.h"

namespace tl {

// module := { NEWLINE | kernel } End
std::unique_ptr<ast::Module> parseModule(const std::vector<Token>& tokens, DiagEngine& diag);

// A lone expression followed by the end of input (the EXPR of `--set NAME=EXPR`).
// Returns nullptr after reporting an error.
ast::ExprPtr parseExpression(const std::vector<Token>& tokens, DiagEngine& diag);

}  // namespace tl
