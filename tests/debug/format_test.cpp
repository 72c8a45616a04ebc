// The text of device_print and device_assert (runtime/DevicePrint.h): values of every dtype in
// Triton's conversions, hex widths, index padding, the vprintf formats tl-ptx emits, and the
// front end's prefix munging (Triton's semantic.device_print).
#include <cmath>

#include "DebugTestUtil.h"

#include "frontend/Frontend.h"

namespace tl::debugtest {
namespace {

TEST(DevicePrintFormat, ValuesOfEveryDtype) {
  EXPECT_EQ(printInt(DType::I32, -3, false), "-3");
  EXPECT_EQ(printInt(DType::I64, int64_t(1) << 40, false), "1099511627776");
  EXPECT_EQ(printInt(DType::I1, 1, false), "1");
  EXPECT_EQ(printInt(DType::I32, -1, true), "0xffffffff");
  EXPECT_EQ(printInt(DType::I32, 10, true), "0x0000000a");
  EXPECT_EQ(printInt(DType::I64, -1, true), "0xffffffffffffffff");
  EXPECT_EQ(printInt(DType::I1, 1, true), "0x1");
  EXPECT_EQ(printFloat(DType::F32, 1.5, false), "1.500000");
  EXPECT_EQ(printFloat(DType::F32, -0.0, false), "-0.000000");
  EXPECT_EQ(printFloat(DType::F32, INFINITY, false), "inf");
  EXPECT_EQ(printFloat(DType::F16, 1.0, true), "0x3c00");
  EXPECT_EQ(printFloat(DType::BF16, 1.0, true), "0x3f80");
  EXPECT_EQ(printFloat(DType::F32, 1.0, true), "0x3f800000");
  EXPECT_EQ(printFloat(DType::F32, 3.4e38, false).size(), 46u);  // %f of a large float: all its digits
  EXPECT_EQ(printPointer(0x10000100), "0x10000100");
}

TEST(DevicePrintFormat, IndexPaddingIsCeilLog10OfTheDim) {
  EXPECT_EQ(printIdx({}, {}), " idx ()");
  EXPECT_EQ(printIdx({3}, {4}), " idx (3)");
  EXPECT_EQ(printIdx({3}, {16}), " idx ( 3)");
  EXPECT_EQ(printIdx({5, 0}, {1024, 1}), " idx (   5, 0)");
  EXPECT_EQ(printLine({1, 2, 0}, " warp 1 lane 3", {35}, {64}, " x: ", -1, "1.500000"),
            "pid (1, 2, 0) warp 1 lane 3 idx (35) x: 1.500000");
  EXPECT_EQ(printLine({0, 0, 0}, "", {1}, {2}, " p: ", 1, "7"), "pid (0, 0, 0) idx (1) p: (operand 1) 7");
  EXPECT_EQ(assertMessage("", {0, 0, 0}, "", {}, {}), "device assertion failed (pid (0, 0, 0))");
  EXPECT_EQ(elementIndex({2, 16}, 21), (std::vector<int64_t>{1, 5}));
}

TEST(DevicePrintFormat, VprintfFormatsMatchTheCpuText) {
  EXPECT_EQ(printfFormat({64}, " x: ", -1, DType::F32, false, false, true), "pid (%u, %u, %u) idx (%2i) x: %f\n");
  EXPECT_EQ(printfFormat({}, " n: ", -1, DType::I64, false, false, true), "pid (%u, %u, %u) idx () n: %lli\n");
  EXPECT_EQ(printfFormat({2, 1}, " m: ", 0, DType::I1, false, false, true), "pid (%u, %u, %u) idx (%1i, %i) m: (operand 0) %u\n");
  EXPECT_EQ(printfFormat({8}, " h: ", -1, DType::F16, false, true, true), "pid (%u, %u, %u) idx (%1i) h: 0x%04x\n");
  EXPECT_EQ(printfFormat({8}, " l: ", -1, DType::I64, false, true, true), "pid (%u, %u, %u) idx (%1i) l: 0x%016llx\n");
  EXPECT_EQ(printfFormat({8}, " p: ", -1, DType::F32, true, false, true), "pid (%u, %u, %u) idx (%1i) p: %p\n");
  EXPECT_EQ(printfFormat({}, " 100%", -1, DType::I1, false, false, false), "pid (%u, %u, %u) 100%%\n");
}

// The prefix device_print's op carries for a call written in the kernel.
std::string prefixOf(const std::string& call) {
  auto src = std::make_shared<SourceFile>("p.tl", "import triton\nimport triton.language as tl\n"
                                                  "@launch(grid=(1,), x_ptr=zeros(4))\n@triton.jit\ndef p(x_ptr):\n"
                                                  "    x = tl.load(x_ptr + tl.arange(0, 4))\n    " + call + "\n");
  DiagEngine diag(src);
  auto parsed = parseKernelFile(src, diag);
  if (!parsed || diag.hasErrors()) return "parse error: " + diag.renderAll();
  LaunchConfig launch = evalLaunch(*parsed, {}, diag);
  auto fn = compileKernel(*parsed, specializationFor(*parsed, launch), diag);
  if (!fn) return "error: " + diag.renderAll();
  std::string prefix = "(no device_print)";
  walk(fn->body, [&](Op& op) { if (op.kind == OpKind::DevicePrint) prefix = op.strAttr("prefix"); });
  return prefix;
}

TEST(DevicePrintFormat, ThePrefixIsMungedAsTritonDoes) {
  EXPECT_EQ(prefixOf("tl.device_print(\"x\", x)"), " x: ");
  EXPECT_EQ(prefixOf("tl.device_print(\"x: \", x)"), " x: ");
  EXPECT_EQ(prefixOf("tl.device_print(\"x =\", x)"), " x =: ");
  EXPECT_EQ(prefixOf("tl.device_print(\"\", x)"), ": ");
  EXPECT_EQ(prefixOf("tl.device_print(\"hello\")"), " hello");
  EXPECT_EQ(prefixOf("tl.device_print(\"hi\")"), "hi");
  EXPECT_EQ(prefixOf("print(x)"), ": ");  // print's first argument is a tensor: no prefix
  EXPECT_EQ(prefixOf("print(\"x\", x, 2)"), " x: ");
}

}  // namespace
}  // namespace tl::debugtest
