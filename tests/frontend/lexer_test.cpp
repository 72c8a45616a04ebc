// Lexer tests: token kinds and locations, Python-style layout tokens, lexical errors.
#include <gtest/gtest.h>

#include "FrontendTestUtil.h"
#include "frontend/Lexer.h"

namespace tl {
namespace {

std::vector<Token> lexText(const std::string& text, DiagEngine& diag) {
  SourceFile f("t.tl", text);
  return lex(f, diag);
}

std::string kinds(const std::vector<Token>& toks) {
  std::string s;
  for (const auto& t : toks) {
    switch (t.kind) {
      case TokKind::Name: s += "N"; break;
      case TokKind::Keyword: s += "K"; break;
      case TokKind::Int: s += "I"; break;
      case TokKind::Float: s += "F"; break;
      case TokKind::String: s += "S"; break;
      case TokKind::Op: s += "o"; break;
      case TokKind::Newline: s += ";"; break;
      case TokKind::Indent: s += ">"; break;
      case TokKind::Dedent: s += "<"; break;
      case TokKind::End: s += "$"; break;
    }
  }
  return s;
}

TEST(Lexer, TokensAndLocations) {
  DiagEngine diag;
  auto toks = lexText("x = load(p + 1, mask=m)\n", diag);
  EXPECT_FALSE(diag.hasErrors());
  EXPECT_EQ(kinds(toks), "NoNoNoIoNoNo;$");
  EXPECT_EQ(toks[2].text, "load");
  EXPECT_EQ(toks[2].loc, (Loc{1, 5}));
  EXPECT_EQ(toks[6].ival, 1);
  EXPECT_EQ(toks[6].loc, (Loc{1, 14}));
}

TEST(Lexer, NumberLiterals) {
  DiagEngine diag;
  auto toks = lexText("1 1.5 1e-5 .5 2. 0x10\n", diag);
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
  ASSERT_EQ(kinds(toks), "IFFFFI;$");
  EXPECT_EQ(toks[0].ival, 1);
  EXPECT_DOUBLE_EQ(toks[1].fval, 1.5);
  EXPECT_DOUBLE_EQ(toks[2].fval, 1e-5);
  EXPECT_DOUBLE_EQ(toks[3].fval, 0.5);
  EXPECT_DOUBLE_EQ(toks[4].fval, 2.0);
  EXPECT_EQ(toks[5].ival, 16);
}

TEST(Lexer, OperatorsLongestMatch) {
  DiagEngine diag;
  auto toks = lexText("a //= b // c <= d != e @ f\n", diag);
  EXPECT_FALSE(diag.hasErrors());
  EXPECT_EQ(toks[1].text, "//=");
  EXPECT_EQ(toks[3].text, "//");
  EXPECT_EQ(toks[5].text, "<=");
  EXPECT_EQ(toks[7].text, "!=");
  EXPECT_EQ(toks[9].text, "@");
}

TEST(Lexer, KeywordsAreMarked) {
  DiagEngine diag;
  auto toks = lexText("for i in range(3): pass\n", diag);
  EXPECT_EQ(kinds(toks), "KNKNoIooK;$");
}

TEST(Lexer, IndentDedent) {
  DiagEngine diag;
  auto toks = lexText("def f():\n    x = 1\n    if x:\n        y = 2\n\n    # comment\n    z = 3\nw\n", diag);
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
  EXPECT_EQ(kinds(toks), "KNooo;>NoI;KNo;>NoI;<NoI;<N;$");
}

TEST(Lexer, DedentsClosedAtEndOfFile) {
  DiagEngine diag;
  auto toks = lexText("a:\n  b:\n    c", diag);
  EXPECT_EQ(kinds(toks), "No;>No;>N;<<$");
}

TEST(Lexer, ImplicitLineJoiningInsideBrackets) {
  DiagEngine diag;
  auto toks = lexText("f(a,\n      b)\nc\n", diag);
  EXPECT_FALSE(diag.hasErrors());
  EXPECT_EQ(kinds(toks), "NoNoNo;N;$");
}

TEST(Lexer, TabInIndentationIsAnError) {
  DiagEngine diag;
  lexText("def f():\n\tx = 1\n", diag);
  ASSERT_EQ(diag.numErrors(), 1);
  EXPECT_EQ(diag.diagnostics()[0].loc, (Loc{2, 1}));
  EXPECT_NE(diag.diagnostics()[0].message.find("tab"), std::string::npos);
}

TEST(Lexer, InconsistentDedentIsAnError) {
  DiagEngine diag;
  lexText("a:\n    b\n  c\n", diag);
  ASSERT_EQ(diag.numErrors(), 1);
  EXPECT_NE(diag.diagnostics()[0].message.find("unindent"), std::string::npos);
  EXPECT_EQ(diag.diagnostics()[0].loc.line, 3u);
}

TEST(Lexer, PowerIsATokenAndLexingGoesOnAfterABadCharacter) {
  DiagEngine diag;
  auto toks = lexText("y = x ** 2 $ z\n", diag);
  ASSERT_EQ(diag.numErrors(), 1);  // '**' is the parser's and sema's business (2 ** 10 folds)
  EXPECT_NE(diag.diagnostics()[0].message.find("unexpected character '$'"), std::string::npos);
  bool sawPow = false;
  for (const auto& t : toks) sawPow |= t.isOp("**") && t.loc == (Loc{1, 7});
  EXPECT_TRUE(sawPow);
  EXPECT_EQ(toks.back().kind, TokKind::End);
}

TEST(Lexer, BadNumbersAndStrings) {
  DiagEngine diag;
  lexText("a = 12abc\nb = 99999999999999999999\nc = \"open\n", diag);
  ASSERT_EQ(diag.numErrors(), 3);
  EXPECT_NE(diag.diagnostics()[0].message.find("invalid number"), std::string::npos);
  EXPECT_NE(diag.diagnostics()[1].message.find("64 bits"), std::string::npos);
  EXPECT_NE(diag.diagnostics()[2].message.find("unterminated"), std::string::npos);
}

TEST(Lexer, StringLiteral) {
  DiagEngine diag;
  auto toks = lexText("file('x.npy')\n", diag);
  EXPECT_FALSE(diag.hasErrors());
  EXPECT_EQ(toks[2].kind, TokKind::String);
  EXPECT_EQ(toks[2].text, "x.npy");
}

// A UTF-8 byte-order mark at the start is skipped, not one error per byte; a whole kernel with
// one compiles.
TEST(Lexer, ByteOrderMarkAtTheStartIsSkipped) {
  DiagEngine diag;
  auto toks = lexText("\xEF\xBB\xBFx = 1\n", diag);
  EXPECT_FALSE(diag.hasErrors()) << diag.renderAll();
  EXPECT_EQ(kinds(toks), "NoI;$");
  EXPECT_EQ(toks[0].text, "x");
  EXPECT_EQ(toks[0].loc, (Loc{1, 1}));
  EXPECT_EQ(toks[1].loc, (Loc{1, 3}));
  auto r = test::runFrontend("\xEF\xBB\xBF" + std::string(test::kSoftmax));
  EXPECT_EQ(r->phase, "") << r->errors();
}

// Any other non-ASCII character is one error for its UTF-8 sequence, naming the code point.
TEST(Lexer, NonAsciiCharacterIsOneErrorWithItsCodePoint) {
  DiagEngine diag;
  auto toks = lexText("x = 1\xC2\xA0+ 2\ny = \xEF\xBB\xBF" "3\nz = a \xE2\x88\x92 b\n", diag);
  ASSERT_EQ(diag.numErrors(), 3) << diag.renderAll();
  const auto& d = diag.diagnostics();
  EXPECT_EQ(d[0].loc, (Loc{1, 6}));
  EXPECT_NE(d[0].message.find("unexpected character U+00A0: kernels are written in ASCII (a non-ASCII space"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].loc, (Loc{2, 5}));
  EXPECT_NE(d[1].message.find("U+FEFF"), std::string::npos) << d[1].message;
  EXPECT_NE(d[1].message.find("byte-order mark is only allowed at the start"), std::string::npos);
  EXPECT_EQ(d[2].loc, (Loc{3, 7}));
  EXPECT_NE(d[2].message.find("U+2212"), std::string::npos) << d[2].message;
  // The minus sign lexes on as '-', so the line has no follow-up error.
  EXPECT_EQ(kinds(toks), "NoIoI;NoI;NoNoN;$");
  DiagEngine bad;
  lexText("x = \xFF\n", bad);
  ASSERT_EQ(bad.numErrors(), 1);
  EXPECT_NE(bad.diagnostics()[0].message.find("unexpected byte \\xff (not ASCII, and not valid UTF-8)"), std::string::npos)
      << bad.diagnostics()[0].message;
}

}  // namespace
}  // namespace tl
