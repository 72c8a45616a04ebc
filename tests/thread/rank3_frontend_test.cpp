// The front end's limits and checks for tiles of rank up to 3: a rank-4 tile (subscript,
// zeros, reshape, expand_dims, join) is a located error naming the limit; reshape / permute /
// trans / join / split / batched dot refuse bad shapes with located errors; a rank-3 permute is
// one trans op with `order`, a reshape that moves elements one reshape op, split two split ops.
#include <fstream>

#include "rank3_util.h"

namespace tl::rank3 {
namespace {

// Compiles `body` as the body of a one-program kernel with x_ptr (f32, 64 elements).
std::unique_ptr<CompiledKernel> compileBody(const std::string& body, std::string& errors) {
  // One file per test: ctest runs the tests of this file in parallel processes.
  const std::string path = ::testing::TempDir() + "/rank3_frontend." +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tl";
  {
    std::ofstream out(path);
    out << "import triton\nimport triton.language as tl\n\n"
           "@launch(grid=(1,), x_ptr=zeros(64, output=True))\n"
           "@triton.jit\ndef k(x_ptr):\n"
           "    x = tl.load(x_ptr + tl.arange(0, 64))\n"
        << body;
  }
  std::ostringstream err;
  auto k = compileKernelFile(path, {}, err);
  errors = err.str();
  return k;
}

TEST(Rank3FrontEnd, RankFourIsALocatedError) {
  struct Case {
    const char* body;
    const char* message;
    int col;
  };
  const Case cases[] = {
      {"    y = x[:, None, None, None]\n", "tiles have at most 3 dimensions, this subscript would make 4", 10},
      {"    y = tl.zeros((2, 2, 2, 2), dtype=tl.float32)\n", "tiles have at most 3 dimensions, this would make 4", 18},
      {"    y = tl.reshape(x, (4, 4, 2, 2))\n", "tiles have at most 3 dimensions, this would make 4", 12},
      {"    y = tl.expand_dims(tl.reshape(x, (4, 4, 4)), 0)\n", "tiles have at most 3 dimensions, this would make 4", 12},
      {"    y = tl.join(tl.reshape(x, (4, 4, 4)), tl.reshape(x, (4, 4, 4)))\n", "tiles have at most 3 dimensions, this would make 4", 12},
  };
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileBody(c.body, errors);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find(".tl:8:" + std::to_string(c.col) + ": error: tiles have at most 3"), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find("^"), std::string::npos) << errors;  // the source line and a caret
  }
}

TEST(Rank3FrontEnd, ShapeErrors) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"    y = tl.reshape(x, (4, 4))\n", "the element counts differ (64 vs 16)"},
      {"    y = tl.reshape(x, (3, 64))\n", "tile dimensions must be powers of two"},
      {"    y = tl.permute(tl.reshape(x, (4, 4, 4)), (0, 0, 1))\n", "dims must be a permutation of 0..2"},
      {"    y = tl.trans(tl.reshape(x, (4, 16)), 1, 0, 2)\n", "dims must be a permutation of 0..1"},
      {"    y = tl.trans(x)\n", "trans() needs a 2-D tile, got <64xf32> (trans(x, *dims) and permute(x, dims)"},
      {"    a, b = tl.split(tl.reshape(x, (16, 4)))\n", "split() needs a tile of rank >= 2 whose last dim is 2"},
      {"    y = tl.split(x)\n", "split() needs a tile of rank >= 2 whose last dim is 2"},
      {"    p = tl.reshape(x_ptr + tl.arange(0, 64), (4, 16))\n", "reshape() needs a tensor, got <64xptr<f32>>"},
      {"    a, b = tl.split(tl.join(x_ptr + tl.arange(0, 64), x_ptr))\n", "join() of pointer tiles is not supported"},
      {"    y = tl.dot(tl.reshape(x, (2, 4, 8)), tl.reshape(x, (4, 16)))\n", "dot() needs a and b of one rank"},
      {"    y = tl.dot(tl.reshape(x, (2, 4, 8)), tl.reshape(x, (4, 8, 2)))\n", "dot() batch dimensions differ"},
      {"    y = tl.dot(tl.reshape(x, (2, 4, 8)), tl.reshape(x, (2, 4, 8)))\n", "dot() inner dimensions differ"},
  };
  for (const Case& c : cases) {
    std::string errors;
    auto k = compileBody(c.body, errors);
    EXPECT_FALSE(k) << c.body;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.body << errors;
    EXPECT_NE(errors.find(".tl:8:"), std::string::npos) << errors;
  }
}

int count(const Function& fn, OpKind kind) {
  int n = 0;
  walk(const_cast<Function&>(fn).body, [&](Op& op) { n += op.kind == kind; });
  return n;
}

TEST(Rank3FrontEnd, OpsBuilt) {
  std::string errors;
  auto k = compileBody(
      "    r = tl.reshape(x, (4, 2, 8))\n"
      "    p = tl.permute(r, (0, 2, 1))\n"
      "    a, b = tl.split(p)\n"
      "    c = tl.join(a, b)\n"
      "    t = tl.trans(tl.reshape(a, (4, 8)))\n"
      "    tl.store(x_ptr + tl.arange(0, 64), tl.reshape(c, (64,)) + tl.reshape(tl.trans(t), (32,)).sum())\n",
      errors);
  ASSERT_TRUE(k) << errors;
  EXPECT_EQ(count(*k->ir, OpKind::Reshape), 3);  // reshape(a, (4, 8)) keeps a's shape: no op
  EXPECT_EQ(count(*k->ir, OpKind::Split), 2);
  EXPECT_EQ(count(*k->ir, OpKind::Join), 1);
  EXPECT_EQ(count(*k->ir, OpKind::Trans), 3);
  int ordered = 0;
  walk(k->ir->body, [&](Op& op) {
    if (op.kind == OpKind::Trans && op.attr("order")) {
      ++ordered;
      EXPECT_EQ(std::get<std::vector<int64_t>>(*op.attr("order")), (std::vector<int64_t>{0, 2, 1}));
    }
  });
  EXPECT_EQ(ordered, 1);  // the rank-2 transposes carry no order
}

}  // namespace
}  // namespace tl::rank3
