// The verifier's rules for rank-3 tiles and their shape ops (lib/ir/BlockOps.def: trans with
// `order`, reshape, join, split, batched dot), checked through the IR text: each valid form
// parses, verifies and prints back to the same text; each broken one is refused with the rule.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ir/Parser.h"
#include "ir/Printer.h"

namespace tl {
namespace {

std::string parseError(const std::string& body) {
  std::string text = "func @f() {\n" + body + "  return\n}\n";
  DiagEngine diag(std::make_shared<SourceFile>("<test>", text));
  auto fn = parseFunction(text, diag);
  return diag.hasErrors() ? diag.renderAll() : "";
}

const std::string c3 = "  %c = constant {value = 1.5} : <4x2x8xf32>\n";

TEST(Rank3Verifier, ValidFormsRoundTrip) {
  const std::string body = c3 +
                           "  %t = trans %c {order = [0, 2, 1]} : <4x8x2xf32>\n"
                           "  %r = reshape %c : <8x8xf32>\n"
                           "  %h = split %t {index = 1} : <4x8xf32>\n"
                           "  %j = join %h, %h : <4x8x2xf32>\n"
                           "  %a = constant {value = 1.0} : <2x4x8xf16>\n"
                           "  %b = constant {value = 1.0} : <2x8x16xf16>\n"
                           "  %z = constant {value = 0.0} : <2x4x16xf32>\n"
                           "  %d = dot %a, %b, %z : <2x4x16xf32>\n";
  const std::string text = "func @f() {\n" + body + "  return\n}\n";
  DiagEngine diag(std::make_shared<SourceFile>("<test>", text));
  auto fn = parseFunction(text, diag);
  ASSERT_TRUE(fn && !diag.hasErrors()) << diag.renderAll();
  DiagEngine again(std::make_shared<SourceFile>("<printed>", printFunction(*fn)));
  auto fn2 = parseFunction(printFunction(*fn), again);
  ASSERT_TRUE(fn2 && !again.hasErrors()) << again.renderAll() << printFunction(*fn);
  EXPECT_EQ(printFunction(*fn2), printFunction(*fn));
}

TEST(Rank3Verifier, BrokenFormsAreRefused) {
  struct Case {
    std::string body, rule;
  };
  const Case cases[] = {
      {c3 + "  %t = trans %c : <4x8x2xf32>\n", "trans: operand must be a rank-2 tile without attribute 'order'"},
      {c3 + "  %t = trans %c {order = [0, 0, 1]} : <4x4x2xf32>\n", "trans: attribute 'order' must be a permutation"},
      {c3 + "  %t = trans %c {order = [0, 2, 1]} : <4x2x8xf32>\n", "trans: result types differ"},
      {c3 + "  %r = reshape %c : <8x4xf32>\n", "reshape: cannot reshape <4x2x8xf32> to <8x4xf32>: element counts differ"},
      {c3 + "  %r = reshape %c : <64xi32>\n", "reshape: element types differ"},
      {c3 + "  %h = split %c {index = 0} : <4x2xf32>\n", "split: operand's last dim must be 2"},
      {"  %c = constant {value = 1.5} : <4x8x2xf32>\n  %h = split %c {index = 2} : <4x8xf32>\n", "split: attribute 'index' = 2 out of range"},
      {"  %c = constant {value = 1.5} : <4x8x2xf32>\n  %h = split %c {index = 0} : <4x2xf32>\n", "split: result types differ"},
      {c3 + "  %j = join %c, %c : <4x2x8x2xf32>\n", "must have rank <= 3"},
      {"  %a = constant {value = 1.5} : <4x8xf32>\n  %b = constant {value = 1} : <4x8xi32>\n  %j = join %a, %b : <4x8x2xf32>\n",
       "join: operand types differ"},
      {"  %a = constant {value = 1.0} : <2x4x8xf32>\n  %b = constant {value = 1.0} : <4x8x16xf32>\n"
       "  %z = constant {value = 0.0} : <2x4x16xf32>\n  %d = dot %a, %b, %z : <2x4x16xf32>\n",
       "dot: batch dimensions differ"},
      {"  %a = constant {value = 1.0} : <2x4x8xf32>\n  %b = constant {value = 1.0} : <2x8x16xf32>\n"
       "  %z = constant {value = 0.0} : <4x16xf32>\n  %d = dot %a, %b, %z : <4x16xf32>\n",
       "dot: operands must be 2-D tiles, or 3-D (batched) tiles"},
  };
  for (const Case& c : cases) {
    std::string err = parseError(c.body);
    EXPECT_NE(err.find(c.rule), std::string::npos) << c.body << "\n" << err;
  }
}

}  // namespace
}  // namespace tl
