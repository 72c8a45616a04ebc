// Parser errors: each malformed IR text is rejected with one error at the right line:col of the
// IR text, naming the problem.
#include <gtest/gtest.h>

#include "IrTestUtil.h"

namespace tl {
namespace {

struct ErrorCase {
  const char* name;
  std::string text;
  uint32_t line, col;   // where the first error must be
  const char* message;  // a substring of its message
};

// Every case starts with this header on line 1.
const std::string kHead = "func @f(%p: ptr<f32>, %n: i32, %c: i1) {\n";

std::vector<ErrorCase> errorCases() {
  return {
      {"EmptyInput", "", 1, 1, "expected 'func' or 'thread_func', got end of input"},
      {"UnknownOp", kHead + "  %x = frob %n : i32\n  return\n}\n", 2, 8, "unknown op 'frob'"},
      {"UndefinedValue", kHead + "  %x = add %n, %y : i32\n  return\n}\n", 2, 16, "use of undefined value '%y'"},
      {"UseBeforeDefinition",
       kHead + "  %y = add %x, %x : i32\n  %x = constant {value = 1} : i32\n  return\n}\n", 2, 12,
       "use of undefined value '%x'"},
      {"ResultTypeMismatch", kHead + "  %x = add %n, %n : f32\n  return\n}\n", 2, 8,
       "add: operand/result types differ: i32 vs f32"},
      {"OperandTypeMismatch",
       kHead + "  %f = constant {value = 1.0} : f32\n  %x = add %n, %f : i32\n  return\n}\n", 3, 8,
       "add: operand types differ: i32 vs f32"},
      {"MalformedType", kHead + "  %x = constant {value = 1} : <3xq32>\n  return\n}\n", 2, 31, "malformed type"},
      {"MalformedParamType", "func @f(%n: i3) {\n  return\n}\n", 1, 13, "malformed type"},
      {"TileParam", "func @f(%t: <4xf32>) {\n  return\n}\n", 1, 13, "must be a scalar or a pointer"},
      {"SiblingRegionValue",
       kHead +
           "  if %c {\n"
           "    %t = constant {value = 1.0} : f32\n"
           "    yield\n"
           "  } else {\n"
           "    store %p, %t\n"
           "    yield\n"
           "  }\n"
           "  return\n}\n",
       6, 15, "value '%t' is defined in a region that does not enclose this use"},
      {"InnerValueAfterRegion",
       kHead +
           "  if %c {\n"
           "    %t = constant {value = 1.0} : f32\n"
           "    yield\n"
           "  } else {\n"
           "    yield\n"
           "  }\n"
           "  store %p, %t\n"
           "  return\n}\n",
       8, 13, "does not enclose this use"},
      {"LoopResultInsideLoop",
       kHead +
           "  %a = constant {value = 0} : i32\n"
           "  %r = for %i = %a to %n step %a iter_args(%acc = %a) : i32 {\n"
           "    yield %r\n"
           "  }\n"
           "  return\n}\n",
       4, 11, "use of undefined value '%r'"},
      {"Redefinition", kHead + "  %n = constant {value = 1} : i32\n  return\n}\n", 2, 3, "redefinition of value '%n'"},
      {"MissingTerminator", kHead + "  %x = constant {value = 1} : i32\n}\n", 3, 1, "region must end with 'return'"},
      {"OpAfterTerminator", kHead + "  return\n  %x = constant {value = 1} : i32\n}\n", 3, 3,
       "'return' must be the last op of its region"},
      {"ReturnInsideFor",
       kHead + "  %a = constant {value = 0} : i32\n  for %i = %a to %n step %a {\n    return\n  }\n  return\n}\n", 4, 5,
       "'return' cannot end this region; expected 'yield'"},
      {"YieldInBody", kHead + "  yield\n}\n", 2, 3, "'yield' cannot end this region; expected 'return'"},
      {"YieldTypeMismatch",
       kHead +
           "  %a = constant {value = 0} : i32\n"
           "  %r = for %i = %a to %n step %a iter_args(%acc = %a) : i32 {\n"
           "    %f = constant {value = 1.0} : f32\n"
           "    yield %f\n"
           "  }\n"
           "  return\n}\n",
       5, 5, "yield: value 0 has type f32, expected i32"},
      {"YieldCountMismatch",
       kHead + "  %v = if %c : i32 {\n    yield\n  } else {\n    yield %n\n  }\n  return\n}\n", 3, 5,
       "yield: expected 1 values, got 0"},
      {"ForIterArgsVsResults",
       kHead + "  %a = constant {value = 0} : i32\n  %r = for %i = %a to %n step %a : i32 {\n    yield\n  }\n  return\n}\n",
       3, 8, "for: 0 iter_args but 1 results"},
      {"ForBoundsNotInt",
       kHead + "  %a = constant {value = 0.0} : f32\n  for %i = %a to %a step %a {\n    yield\n  }\n  return\n}\n", 3, 3,
       "for: bounds must be i32 or i64 scalars"},
      {"IfConditionNotI1", kHead + "  if %n {\n    yield\n  } else {\n    yield\n  }\n  return\n}\n", 2, 3,
       "if: condition must be an i1 scalar, got i32"},
      {"IfWithoutElse", kHead + "  if %c {\n    yield\n  }\n  return\n}\n", 5, 3, "expected 'else'"},
      {"ResultNameTypeCount", kHead + "  %x, %y = constant {value = 1} : i32\n  return\n}\n", 2, 12,
       "2 result name(s) but 1 result type(s)"},
      {"MissingResultTypes", kHead + "  %x = constant {value = 1}\n  return\n}\n", 2, 8,
       "1 result name(s) but 0 result type(s)"},
      {"MissingEquals", kHead + "  %x constant {value = 1} : i32\n  return\n}\n", 2, 6, "expected '=' after the result names"},
      {"UnterminatedString", kHead + "  %x = cmp %n, %n {pred = \"lt} : i1\n  return\n}\n", 2, 27, "unterminated string"},
      {"UnexpectedCharacter", kHead + "  %x = constant {value = 1} : i32 $\n  return\n}\n", 2, 35,
       "unexpected character '$'"},
      {"IntegerOverflow", kHead + "  %x = constant {value = 99999999999999999999} : i64\n  return\n}\n", 2, 26,
       "does not fit in 64 bits"},
      {"FloatOverflow", kHead + "  %x = constant {value = 1e999} : f32\n  return\n}\n", 2, 26, "out of range"},
      {"BadAttrValue", kHead + "  %x = constant {value = foo} : f32\n  return\n}\n", 2, 26, "expected an attribute value"},
      {"DuplicateAttr", kHead + "  %x = constant {value = 1, value = 2} : i32\n  return\n}\n", 2, 29,
       "duplicate attribute 'value'"},
      {"VerifierRuleViaParser", kHead + "  %x = arange {start = 0, end = 3} : <3xi32>\n  return\n}\n", 2, 8,
       "must have rank <= 3 and power-of-two dims"},
      {"MissingAttr", kHead + "  %x = program_id : i32\n  return\n}\n", 2, 8, "missing integer attribute 'axis'"},
      {"BadLoc", kHead + "  return loc(0:4)\n}\n", 2, 14, "location out of range"},
      {"TruncatedInRegion", kHead + "  return\n", 3, 1, "expected '}' to close the region, got end of input"},
      {"TruncatedMidOp", kHead + "  %x = add %n,", 2, 15, "expected a value name"},
      {"TrailingText", kHead + "  return\n}\nfunc", 4, 1, "expected end of input after the function"},
      {"NameAfterPercentMissing", kHead + "  % = constant {value = 1} : i32\n  return\n}\n", 2, 3, "expected a name after '%'"},
  };
}

class ParseErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrors, LocatedAtTheProblem) {
  const ErrorCase& c = GetParam();
  DiagEngine diag;
  auto fn = test::parseText(c.text, diag);
  EXPECT_EQ(fn, nullptr);
  ASSERT_TRUE(diag.hasErrors());
  const Diagnostic& d = diag.diagnostics()[0];
  EXPECT_EQ(d.loc.line, c.line) << d.message;
  EXPECT_EQ(d.loc.col, c.col) << d.message;
  EXPECT_NE(d.message.find(c.message), std::string::npos) << "got: " << d.message;
}

INSTANTIATE_TEST_SUITE_P(All, ParseErrors, ::testing::ValuesIn(errorCases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ParseErrorRendering, ShowsFileLineColAndCaret) {
  DiagEngine diag;
  EXPECT_EQ(test::parseText(kHead + "  %x = frob %n : i32\n  return\n}\n", diag), nullptr);
  EXPECT_EQ(diag.renderAll(),
            "test.ir:2:8: error: unknown op 'frob'\n"
            "      %x = frob %n : i32\n"
            "           ^\n");
}

}  // namespace
}  // namespace tl
