// Division's two forms on the GPU (Triton's): `/` and tl.math.fdiv's default are div.full.f32
// there, tl.math.div_rn and fdiv(..., ieee_rounding=True) IEEE division. The front end marks the
// IEEE ones with rounding = "rn" on the block IR's div (the CPU stages divide as IEEE either way;
// tests/ptx/codegen_ops_test.cpp holds the PTX to div.full / div.rn), the mark round-trips
// through the IR text, and the verifier refuses it on integer division.
#include <gtest/gtest.h>

#include <string>

#include "FrontendTestUtil.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

namespace tl {
namespace {

using test::runFrontend;

std::string kernel(const std::string& expr) {
  return "import triton\nimport triton.language as tl\n"
         "@launch(N=64, grid=(1,), x_ptr=randn(N), y_ptr=uniform(N, lo=1.0, hi=2.0), out_ptr=zeros(N, output=True))\n"
         "@triton.jit\n"
         "def k(x_ptr, y_ptr, out_ptr, N: tl.constexpr):\n"
         "    offs = tl.arange(0, N)\n"
         "    x = tl.load(x_ptr + offs)\n"
         "    y = tl.load(y_ptr + offs)\n"
         "    tl.store(out_ptr + offs, " + expr + ")\n";
}

// The rounding attribute of the kernel's one div, "" when it has none.
std::string rounding(const std::string& expr) {
  auto r = runFrontend(kernel(expr));
  EXPECT_EQ(r->phase, "") << r->errors();
  if (!r->fn) return "?";
  const Op* div = nullptr;
  walk(r->fn->body, [&](Op& op) {
    if (op.kind == OpKind::Div) div = &op;
  });
  EXPECT_TRUE(div) << expr;
  if (!div) return "?";
  const std::string* s = div->strAttrIf("rounding");
  return s ? *s : "";
}

TEST(Division, IeeeOnlyWhereTheSourceAsks) {
  EXPECT_EQ(rounding("x / y"), "");
  EXPECT_EQ(rounding("tl.math.fdiv(x, y)"), "");
  EXPECT_EQ(rounding("tl.math.fdiv(x, y, ieee_rounding=False)"), "");
  EXPECT_EQ(rounding("tl.math.div_rn(x, y)"), "rn");
  EXPECT_EQ(rounding("tl.math.fdiv(x, y, ieee_rounding=True)"), "rn");
}

TEST(Division, TheMarkRoundTripsAndIsForFloatsOnly) {
  auto r = runFrontend(kernel("tl.math.div_rn(x, y)"));
  ASSERT_EQ(r->phase, "") << r->errors();
  const std::string text = printFunction(*r->fn);
  EXPECT_NE(text.find("{rounding = \"rn\"}"), std::string::npos) << text;
  DiagEngine diag(std::make_shared<SourceFile>("<printed>", text));
  auto back = parseFunction(text, diag);
  ASSERT_TRUE(back && !diag.hasErrors()) << diag.renderAll();
  EXPECT_EQ(printFunction(*back), text);
  const std::string bad = "func @f(%a: i32, %b: i32) {\n  %q = div %a, %b {rounding = \"rn\"} : i32\n  return\n}\n";
  DiagEngine badDiag(std::make_shared<SourceFile>("<bad>", bad));
  parseFunction(bad, badDiag);
  EXPECT_NE(badDiag.renderAll().find("rounding applies to float division only"), std::string::npos) << badDiag.renderAll();
}

}  // namespace
}  // namespace tl
