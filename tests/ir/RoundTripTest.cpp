// Printer and parser: print -> parse -> print is identical and rebuilds the same structure,
// for a kernel using every block op; the exact printed form of a small kernel (golden text);
// types print and parse back; and random mutations of a printed function never crash the parser.
#include <gtest/gtest.h>

#include <charconv>
#include <random>
#include <set>

#include "IrTestUtil.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

using test::buildKitchenSink;
using test::parseText;
using test::structuralDiff;

TEST(TypeText, PrintsAndParsesBack) {
  std::vector<Type> types = {Type::scalar(DType::I1),     Type::scalar(DType::I32),
                             Type::scalar(DType::I64),    Type::scalar(DType::F16),
                             Type::scalar(DType::BF16),   Type::scalar(DType::F32),
                             Type::ptr(DType::F32),       Type::ptr(DType::I1),
                             Type::tile(DType::F32, {1024}), Type::tile(DType::BF16, {64, 32}),
                             Type::ptr(DType::F16).withShape({64, 32}), Type::tile(DType::I1, {1, 8}),
                             Type::scalar(DType::F8E4M3), Type::ptr(DType::F8E5M2),
                             Type::tile(DType::F8E5M2, {16, 16})};
  for (const Type& t : types) {
    size_t used = 0;
    auto back = parseType(t.str() + " rest", &used);
    ASSERT_TRUE(back.has_value()) << t.str();
    EXPECT_EQ(*back, t) << t.str();
    EXPECT_EQ(used, t.str().size()) << t.str();
  }
  EXPECT_EQ(Type::ptr(DType::F16).withShape({64, 32}).str(), "<64x32xptr<f16>>");
  EXPECT_EQ(Type::tile(DType::F32, {1024}).str(), "<1024xf32>");
  EXPECT_EQ(Type::tile(DType::F8E4M3, {16}).str(), "<16xf8e4m3>");
  EXPECT_EQ(Type::ptr(DType::F8E5M2).str(), "ptr<f8e5m2>");
  for (const char* bad : {"", "<", "<64xf32", "<xf32>", "<64x>", "ptr<f32", "ptr<>", "f31", "<64xq32>", "ptr f32"})
    EXPECT_FALSE(parseType(bad).has_value()) << bad;
}

TEST(AttrText, FloatsRoundTripExactly) {
  for (double v : {0.1, 1.0, -0.0, 1e-30, 5e-324, 1.7976931348623157e308, 3.0e20, 123456789.125,
                   -std::numeric_limits<double>::infinity()}) {
    std::string s = formatDouble(v);
    EXPECT_NE(s.find_first_of(".ei"), std::string::npos) << s;  // never reads as an integer
    double back = 0;
    if (s == "-inf") back = -std::numeric_limits<double>::infinity();
    else std::from_chars(s.data(), s.data() + s.size(), back);
    EXPECT_EQ(back, v) << s;
    EXPECT_EQ(std::signbit(back), std::signbit(v)) << s;
  }
  EXPECT_EQ(formatDouble(1.0), "1.0");
  EXPECT_EQ(formatDouble(0.1), "0.1");
  EXPECT_EQ(formatDouble(1e-30), "1e-30");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatDouble(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(quoteString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\x01\"");
}

TEST(RoundTrip, KitchenSinkCoversEveryBlockOp) {
  auto fn = buildKitchenSink();
  ASSERT_EQ(verifyFunction(*fn), "");
  std::set<OpKind> seen;
  walk(fn->body, [&](Op& op) { seen.insert(op.kind); });
  // Every block-level op; convert_layout needs layouts and thread ops a thread function (both
  // are covered by the layout and thread-IR tests).
  for (size_t k = 0; k < static_cast<size_t>(OpKind::NumKinds); ++k) {
    auto kind = static_cast<OpKind>(k);
    if (!opInfo(kind).allowedIn(IRLevel::Block) || kind == OpKind::ConvertLayout) continue;
    EXPECT_TRUE(seen.count(kind)) << "kitchen sink lacks " << mnemonic(kind);
  }
}

TEST(RoundTrip, PrintParsePrintIsIdentical) {
  auto fn = buildKitchenSink();
  std::string text = printFunction(*fn);
  DiagEngine diag;
  auto parsed = parseText(text, diag);
  ASSERT_NE(parsed, nullptr) << diag.renderAll() << "\n" << text;
  EXPECT_FALSE(diag.hasErrors());
  EXPECT_EQ(structuralDiff(*fn, *parsed), "");
  EXPECT_EQ(printFunction(*parsed), text);
  // Parameters come back with names and kinds.
  ASSERT_EQ(parsed->params.size(), 8u);
  EXPECT_EQ(parsed->params[0].name, "x_ptr");
  EXPECT_EQ(parsed->params[0].kind, Param::Kind::Pointer);
  EXPECT_EQ(parsed->params[5].kind, Param::Kind::Scalar);
  EXPECT_EQ(parsed->constexprs, fn->constexprs);
}

TEST(RoundTrip, WithoutLocations) {
  auto fn = buildKitchenSink();
  std::string text = printFunction(*fn, {.locs = false});
  EXPECT_EQ(text.find("loc("), std::string::npos);
  DiagEngine diag;
  auto parsed = parseText(text, diag);
  ASSERT_NE(parsed, nullptr) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed, {.locs = false}), text);
  walk(parsed->body, [](Op& op) { EXPECT_FALSE(op.loc.known()); });
}

TEST(RoundTrip, ClonedFunctionPrintsTheSame) {
  auto fn = buildKitchenSink();
  auto copy = cloneFunction(*fn);
  EXPECT_EQ(printFunction(*copy), printFunction(*fn));
  EXPECT_EQ(structuralDiff(*fn, *copy), "");
}

TEST(RoundTrip, NamesAreUniqueAndSanitized) {
  std::string text = printFunction(*buildKitchenSink());
  EXPECT_NE(text.find("%x = load"), std::string::npos);
  EXPECT_NE(text.find("%x.1 = load"), std::string::npos);
  EXPECT_NE(text.find("%bad_name_ = load"), std::string::npos);
  EXPECT_NE(text.find("%_7up = load"), std::string::npos);
  EXPECT_NE(text.find("%acc.1, %m.1 = for %k = "), std::string::npos) << text;
  EXPECT_NE(text.find("{value = nan}"), std::string::npos);
  EXPECT_NE(text.find("{value = -inf} : <64x64xf32>"), std::string::npos);
  EXPECT_NE(text.find("{value = 1e-30} : f32"), std::string::npos);
  EXPECT_NE(text.find("{value = 3} : f32"), std::string::npos);  // int attr stays an int
  EXPECT_NE(text.find("{value = -9223372036854775808} : i64"), std::string::npos);
}

// Many values sharing one hint (a long kernel reassigning `x`) are named x, x.1, x.2, ...
// skipping a suffix a value already holds by its own hint, and numbered ones stay numbered.
TEST(Printer, ValuesSharingAHintGetTheSmallestFreeSuffix) {
  Function fn;
  fn.name = "k";
  Value* n = fn.body.addArg(Type::scalar(DType::I32), "N");
  fn.params = {{"N", Param::Kind::Scalar, {}}};
  Builder b(&fn.body);
  Value* v = n;
  std::vector<std::string> hints = {"x", "x", "x.2", "x", "x", "", "x.1.1", "x"};
  for (const std::string& h : hints) {
    v = b.binary(OpKind::Add, v, n);
    v->name = h;
  }
  b.ret();
  std::string text = printFunction(fn);
  const char* expected[] = {"%x = add", "%x.1 = add", "%x.2 = add", "%x.3 = add", "%x.4 = add",
                            "%0 = add", "%x.1.1 = add", "%x.5 = add"};
  size_t at = 0;
  for (const char* e : expected) {
    size_t found = text.find(e, at);
    ASSERT_NE(found, std::string::npos) << e << " in\n" << text;
    at = found;
  }
}

// A small kernel's exact text: pins the format documented in docs/ir.md.
TEST(Printer, GoldenSoftmaxLikeKernel) {
  Function fn;
  fn.name = "row_max";
  fn.loc = {1, 1};
  fn.constexprs = {{"BLOCK_N", 8}};
  fn.params = {{"x_ptr", Param::Kind::Pointer, {}}, {"N", Param::Kind::Scalar, {}}};
  Value* xPtr = fn.body.addArg(Type::ptr(DType::F32), "x_ptr");
  Value* n = fn.body.addArg(Type::scalar(DType::I32), "N");
  Builder b(&fn.body);
  b.setLoc({3, 11});
  Value* row = b.programId(0);
  row->name = "row";
  b.setLoc({4, 12});
  Value* cols = b.arange(0, 8);
  cols->name = "cols";
  b.setLoc({5, 12});
  Value* mask = b.cmp("lt", cols, b.splat(n, {8}));
  mask->name = "mask";
  b.setLoc({6, 9});
  Value* ptrs = b.addptr(b.splat(b.addptr(xPtr, row), {8}), cols);
  Value* x = b.load(ptrs, mask, b.constFloat(Type::tile(DType::F32, {8}), -INFINITY));
  x->name = "x";
  b.setLoc({7, 5});
  Value* c0 = b.constInt(Type::scalar(DType::I32), 0);
  Value* c2 = b.constInt(Type::scalar(DType::I32), 2);
  Value* c1 = b.constInt(Type::scalar(DType::I32), 1);
  Op* loop = b.forOp(c0, c2, c1, {x});
  loop->result(0)->name = "x";
  {
    Builder lb(&loop->region(0));
    lb.setLoc({8, 9});
    Value* y = lb.unary(OpKind::Exp, loop->region(0).arg(1));
    lb.yield({y});
  }
  b.setLoc({9, 5});
  Value* m = b.reduce("max", loop->result(0), 0);
  Value* pos = b.cmp("gt", m, b.constFloat(Type::scalar(DType::F32), 0.5));
  Op* branch = b.ifOp(pos, {Type::scalar(DType::F32)});
  {
    Builder tb(&branch->region(0));
    tb.setLoc({10, 9});
    tb.yield({m});
    Builder eb(&branch->region(1));
    eb.setLoc({11, 9});
    eb.yield({m});
  }
  b.setLoc({12, 5});
  b.store(xPtr, branch->result(0));
  b.ret();
  ASSERT_EQ(verifyFunction(fn), "");
  const char* expected =
      "func @row_max(%x_ptr: ptr<f32>, %N: i32) constexprs(BLOCK_N = 8) loc(1:1) {\n"
      "  %row = program_id {axis = 0} : i32 loc(3:11)\n"
      "  %cols = arange {start = 0, end = 8} : <8xi32> loc(4:12)\n"
      "  %0 = splat %N : <8xi32> loc(5:12)\n"
      "  %mask = cmp %cols, %0 {pred = \"lt\"} : <8xi1> loc(5:12)\n"
      "  %1 = addptr %x_ptr, %row : ptr<f32> loc(6:9)\n"
      "  %2 = splat %1 : <8xptr<f32>> loc(6:9)\n"
      "  %3 = addptr %2, %cols : <8xptr<f32>> loc(6:9)\n"
      "  %4 = constant {value = -inf} : <8xf32> loc(6:9)\n"
      "  %x = load %3, %mask, %4 : <8xf32> loc(6:9)\n"
      "  %5 = constant {value = 0} : i32 loc(7:5)\n"
      "  %6 = constant {value = 2} : i32 loc(7:5)\n"
      "  %7 = constant {value = 1} : i32 loc(7:5)\n"
      "  %x.1 = for %iv = %5 to %6 step %7 iter_args(%x.2 = %x) : <8xf32> {\n"
      "    %8 = exp %x.2 : <8xf32> loc(8:9)\n"
      "    yield %8 loc(8:9)\n"
      "  } loc(7:5)\n"
      "  %9 = reduce %x.1 {kind = \"max\", axis = 0} : f32 loc(9:5)\n"
      "  %10 = constant {value = 0.5} : f32 loc(9:5)\n"
      "  %11 = cmp %9, %10 {pred = \"gt\"} : i1 loc(9:5)\n"
      "  %12 = if %11 : f32 {\n"
      "    yield %9 loc(10:9)\n"
      "  } else {\n"
      "    yield %9 loc(11:9)\n"
      "  } loc(9:5)\n"
      "  store %x_ptr, %12 loc(12:5)\n"
      "  return loc(12:5)\n"
      "}\n";
  EXPECT_EQ(printFunction(fn), expected);
  DiagEngine diag;
  auto parsed = parseText(expected, diag);
  ASSERT_NE(parsed, nullptr) << diag.renderAll();
  EXPECT_EQ(printFunction(*parsed), expected);
}

// A pass that breaks the IR still gets it printed (--print-after-all shows the damage): a for
// that lost its region prints in the generic form, missing values print as markers.
TEST(Printer, BrokenIRStillPrints) {
  auto fn = buildKitchenSink();
  Function other;
  Value* stranger = other.body.addArg(Type::scalar(DType::I32), "s");
  Op* loop = nullptr;
  walk(fn->body, [&](Op& op) {
    if (op.kind == OpKind::For && !loop) loop = &op;
  });
  ASSERT_NE(loop, nullptr);
  loop->regions.clear();
  fn->body.ops[0]->operands.push_back(nullptr);
  fn->body.ops[1]->operands.push_back(stranger);
  std::string text = printFunction(*fn);
  EXPECT_NE(text.find("program_id <<null>> {axis = 0}"), std::string::npos) << text;
  EXPECT_NE(text.find("num_programs <<undefined>> {axis = 2}"), std::string::npos) << text;
  EXPECT_NE(text.find("%acc.1, %m.1 = for %"), std::string::npos) << text;
  DiagEngine diag;
  EXPECT_EQ(parseText(text, diag), nullptr);
  EXPECT_TRUE(diag.hasErrors());
}

TEST(Parser, AcceptsCommentsAndFreeLayout) {
  std::string text =
      "// a comment line\n"
      "func @f(%p: ptr<f32>)   // trailing comment\n"
      "{ %c = constant {value = 2.5} : f32   store %p, %c\n"
      "  return }\n";
  DiagEngine diag;
  auto fn = parseText(text, diag);
  ASSERT_NE(fn, nullptr) << diag.renderAll();
  EXPECT_EQ(printFunction(*fn),
            "func @f(%p: ptr<f32>) {\n  %c = constant {value = 2.5} : f32\n  store %p, %c\n  return\n}\n");
}

// Random damage to a printed function: truncations, deleted or duplicated spans, inserted or
// replaced characters, swapped lines. The parser must return a verified function or nullptr with
// errors — never crash, hang or accept something the verifier rejects.
TEST(ParserRobustness, ThreeThousandRandomMutations) {
  const std::string text = printFunction(*buildKitchenSink());
  std::mt19937 rng(12345);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % (n ? n : 1)); };
  const std::string alphabet = "%@{}()<>=:,.-\"\\x0123456789eafinlo \n\t#/\x01\xff";
  const std::vector<std::string> words = {"for", "if", "else", "yield", "return", "iter_args", "to", "step",
                                          "loc(", "%x", "%0", "<64x64xf32>", "ptr<f32>", "{", "}", "inf",
                                          "nan", "9999999999999999999999", "1e999", "func @g() {"};
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = text;
    int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits; ++e) {
      size_t pos = pick(s.size() + 1);
      switch (pick(7)) {
        case 0: s.resize(pos); break;                                               // truncate
        case 1: s.erase(pos, 1 + pick(40)); break;                                  // delete a span
        case 2: s.insert(pos, 1, alphabet[pick(alphabet.size())]); break;           // insert a char
        case 3: if (pos < s.size()) s[pos] = alphabet[pick(alphabet.size())]; break;  // replace a char
        case 4: s.insert(pos, words[pick(words.size())]); break;                    // insert a word
        case 5: {                                                                   // duplicate a span
          size_t len = 1 + pick(80);
          s.insert(pick(s.size() + 1), s.substr(pos, len));
          break;
        }
        default: {  // swap two lines
          std::vector<std::string> lines;
          size_t b = 0;
          for (size_t i = 0; i <= s.size(); ++i)
            if (i == s.size() || s[i] == '\n') { lines.push_back(s.substr(b, i - b)); b = i + 1; }
          std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
          s.clear();
          for (size_t i = 0; i < lines.size(); ++i) s += lines[i] + (i + 1 < lines.size() ? "\n" : "");
        }
      }
    }
    DiagEngine diag;
    auto fn = parseText(s, diag);
    if (fn) {
      ++accepted;
      EXPECT_FALSE(diag.hasErrors());
      EXPECT_EQ(verifyFunction(*fn), "") << s;
      // Whatever was accepted prints and parses back to the same text.
      std::string again = printFunction(*fn);
      DiagEngine d2;
      auto fn2 = parseText(again, d2);
      ASSERT_NE(fn2, nullptr) << d2.renderAll();
      EXPECT_EQ(printFunction(*fn2), again);
    } else {
      ASSERT_TRUE(diag.hasErrors()) << "rejected without an error:\n" << s;
      for (const auto& d : diag.diagnostics()) EXPECT_TRUE(d.loc.known()) << d.message;
    }
  }
  // Some mutations (e.g. inside a comment-free float's digits or a loc) keep the text valid.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 3000);
}

TEST(ParserRobustness, DeepNestingIsRejectedNotOverflowed) {
  std::string text = "func @deep(%c: i1) {\n";
  for (int i = 0; i < 5000; ++i) text += "if %c {\n";
  DiagEngine diag;
  EXPECT_EQ(parseText(text, diag), nullptr);
  ASSERT_TRUE(diag.hasErrors());
  EXPECT_NE(diag.diagnostics()[0].message.find("nested too deeply"), std::string::npos)
      << diag.diagnostics()[0].message;
}

}  // namespace
}  // namespace tl
