// The debugging ops in the IR library (lib/ir/BlockOps.def: device_print, device_assert;
// ThreadOps.def: print_regs, assert_regs): the verifier's rules, the text form round trip with
// the ops' source locations, and the passes (cse merges no two prints, dce keeps what a print
// uses, both keep every assertion), before and after the thread lowering.
#include "DebugTestUtil.h"

#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

namespace tl::debugtest {
namespace {

struct Ctx {
  Function fn;
  Builder b{&fn.body};
  Value *f, *c, *t;  // f32, i1, <4xi1>
  Ctx() {
    fn.params.push_back({"f", Param::Kind::Scalar, {1, 1}});
    f = fn.body.addArg(Type::scalar(DType::F32), "f");
    fn.params.push_back({"c", Param::Kind::Scalar, {1, 1}});
    c = fn.body.addArg(Type::scalar(DType::I1), "c");
    t = b.splat(c, {4});
    b.setLoc({2, 3});
  }
};

std::string errorOf(const std::function<void(Ctx&)>& build) {
  Ctx x;
  try {
    build(x);
  } catch (const IRError& e) {
    return e.what();
  }
  return "";
}

TEST(DebugOpsVerifier, BlockOps) {
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.create(OpKind::DevicePrint, {x.f, x.t}, {}, {{"prefix", " x: "}, {"hex", int64_t(0)}}); }), "");
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.create(OpKind::DevicePrint, {}, {}, {{"prefix", " hi"}, {"hex", int64_t(1)}}); }), "");
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DevicePrint, {x.f}, {}, {{"hex", int64_t(0)}}); })
                .find("missing string attribute 'prefix'"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DevicePrint, {x.f}, {}, {{"prefix", ""}, {"hex", int64_t(2)}}); })
                .find("'hex' = 2 out of range"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DevicePrint, {x.f}, {Type::scalar(DType::I32)}, {{"prefix", ""}, {"hex", int64_t(0)}}); })
                .find("expected 0 results"),
            std::string::npos);
  EXPECT_EQ(errorOf([](Ctx& x) { x.b.create(OpKind::DeviceAssert, {x.t}, {}, {{"msg", "m"}}); }), "");
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DeviceAssert, {x.f}, {}, {{"msg", "m"}}); })
                .find("condition must have dtype i1"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DeviceAssert, {x.c, x.c}, {}, {{"msg", "m"}}); }).find("expected 1 operands"),
            std::string::npos);
  EXPECT_NE(errorOf([](Ctx& x) { x.b.create(OpKind::DeviceAssert, {x.c}, {}, {}); }).find("missing string attribute 'msg'"),
            std::string::npos);
}

TEST(DebugOpsVerifier, ThreadOps) {
  auto attrs = [](std::vector<int64_t> shape) {
    return std::vector<NamedAttr>{{"prefix", " x: "}, {"hex", int64_t(0)}, {"shape", shape}, {"operand", int64_t(-1)}};
  };
  // mask, value, one index per dim of `shape`
  EXPECT_EQ(errorOf([&](Ctx& x) { x.b.create(OpKind::PrintRegs, {x.c, x.f}, {}, attrs({})); }), "");
  EXPECT_EQ(errorOf([&](Ctx& x) { x.b.create(OpKind::PrintRegs, {x.c}, {}, attrs({})); }), "");
  EXPECT_NE(errorOf([&](Ctx& x) { x.b.create(OpKind::PrintRegs, {x.c, x.f}, {}, attrs({4})); }).find("expected 3 operands"),
            std::string::npos);
  EXPECT_NE(errorOf([&](Ctx& x) { x.b.create(OpKind::PrintRegs, {x.f, x.f}, {}, attrs({})); }).find("mask must have dtype i1"),
            std::string::npos);
  EXPECT_NE(errorOf([&](Ctx& x) { x.b.create(OpKind::PrintRegs, {x.c, x.f, x.f}, {}, attrs({8})); }).find("indices must be i32"),
            std::string::npos);
  EXPECT_EQ(errorOf([&](Ctx& x) { x.b.create(OpKind::AssertRegs, {x.c}, {}, {{"msg", ""}, {"shape", std::vector<int64_t>{}}}); }), "");
  EXPECT_NE(errorOf([&](Ctx& x) { x.b.create(OpKind::AssertRegs, {x.t}, {}, {{"msg", ""}, {"shape", std::vector<int64_t>{4}}}); })
                .find("expected 2 operands"),
            std::string::npos);
  EXPECT_NE(errorOf([&](Ctx& x) { x.b.create(OpKind::AssertRegs, {x.c}, {}, {{"shape", std::vector<int64_t>{}}}); })
                .find("missing string attribute 'msg'"),
            std::string::npos);
}

// Each function's text survives print -> parse -> print, and the ops keep their locations.
void expectRoundTrip(const Function& fn, const char* what) {
  const std::string text = printFunction(fn);
  DiagEngine diag;
  auto back = parseFunction(text, diag);
  ASSERT_TRUE(back) << what << ": " << diag.renderAll() << text;
  EXPECT_EQ(printFunction(*back), text) << what;
  std::vector<Loc> a, b;
  walk(fn.body, [&](Op& op) { if (op.info().category == OpCategory::Debug) a.push_back(op.loc); });
  walk(back->body, [&](Op& op) { if (op.info().category == OpCategory::Debug) b.push_back(op.loc); });
  EXPECT_FALSE(a.empty()) << what;
  EXPECT_EQ(a, b) << what;
}

size_t count(const Function& fn, OpKind kind) {
  size_t n = 0;
  walk(fn.body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

TEST(DebugOpsText, RoundTripWithLocationsAtEveryLevel) {
  for (const char* stem : {"print_tile", "print_2d", "assert_limit"}) {
    auto k = compile(stem);
    ASSERT_TRUE(k);
    expectRoundTrip(*k->ir, stem);
    auto opt = cloneFunction(*k->ir);
    blockPipeline().run(*opt);
    expectRoundTrip(*opt, stem);
    ThreadCompilation tc = compileToThreadIR(*k->ir, k->launch, 4);
    expectRoundTrip(*tc.threadIR, stem);
  }
  auto k = compile("print_tile");
  ASSERT_TRUE(k);
  const std::string text = printFunction(*k->ir);
  EXPECT_NE(text.find("device_print %x {prefix = \" x: \", hex = 0} loc(14:8)"), std::string::npos) << text;
  EXPECT_NE(text.find("device_print %pid {prefix = \" pid: \", hex = 0} loc(15:5)"), std::string::npos) << text;
}

TEST(DebugOpsPasses, NothingMergesOrRemovesAPrintOrAnAssert) {
  // Two identical prints of a value nothing else uses, and two identical assertions (and two
  // whose conditions are constants: checked at compile time, no op).
  auto src = std::make_shared<SourceFile>("dup.tl",
                                          "import triton\nimport triton.language as tl\n"
                                          "@launch(grid=(1,), x_ptr=zeros(4))\n@triton.jit\ndef dup(x_ptr):\n"
                                          "    y = tl.exp(tl.load(x_ptr + tl.arange(0, 4)))\n"
                                          "    tl.device_print(\"y\", y)\n    tl.device_print(\"y\", y)\n"
                                          "    tl.device_assert(y > 0.0)\n    tl.device_assert(y > 0.0)\n"
                                          "    tl.device_assert(True)\n    assert 4 % 2 == 0\n");  // constants: no op
  DiagEngine diag(src);
  auto parsed = parseKernelFile(src, diag);
  ASSERT_TRUE(parsed) << diag.renderAll();
  LaunchConfig launch = evalLaunch(*parsed, {}, diag);
  auto fn = compileKernel(*parsed, specializationFor(*parsed, launch), diag);
  ASSERT_TRUE(fn) << diag.renderAll();
  blockPipeline().run(*fn);
  EXPECT_EQ(count(*fn, OpKind::DevicePrint), 2u) << printFunction(*fn);
  EXPECT_EQ(count(*fn, OpKind::DeviceAssert), 2u) << printFunction(*fn);
  EXPECT_EQ(count(*fn, OpKind::Exp), 1u) << printFunction(*fn);  // kept: the prints use it
  EXPECT_EQ(count(*fn, OpKind::Load), 1u);
  ThreadCompilation tc = compileToThreadIR(*fn, launch, 2);
  EXPECT_EQ(count(*tc.threadIR, OpKind::PrintRegs), 2u) << printFunction(*tc.threadIR);
  EXPECT_EQ(count(*tc.threadIR, OpKind::AssertRegs), 2u);
}

}  // namespace
}  // namespace tl::debugtest
