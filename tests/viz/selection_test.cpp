// The headless selection options (viz/model/Selection.h, --instr --value --block --warp) checked
// against a simulated softmax, and tl-viz's command line (viz/model/CommandLine.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "viz/model/CommandLine.h"
#include "viz/model/Selection.h"
#include "viz/model/Session.h"

namespace tl::viz {
namespace {

const SessionData& softmax() {
  static std::shared_ptr<const SessionData> data = [] {
    SessionInputs in;
    in.path = std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl";
    in.predictTimings = false;
    return runSession(in);
  }();
  return *data;
}

TEST(Selection, ValidValuesResolve) {
  const SessionData& d = softmax();
  ASSERT_TRUE(d.errors.empty());
  ASSERT_FALSE(d.memInstrs.empty());
  SelectionRequest req;
  req.instr = d.memInstrs.back().instr;
  req.value = "x";  // "%x" without the sigil
  req.block = detailBlocks(d).back();
  req.warp = 3;
  ResolvedSelection r = resolveSelection(d, req);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(*r.instr, d.memInstrs.back().instr);
  EXPECT_EQ(r.value, "%x");
  EXPECT_EQ(*r.block, detailBlocks(d).back());
  EXPECT_EQ(*r.warp, 3);
  EXPECT_TRUE(resolveSelection(d, SelectionRequest{}).ok);
}

TEST(Selection, OutOfRangeSaysWhatIsAllowed) {
  const SessionData& d = softmax();
  SelectionRequest req;
  req.instr = 1;  // an instruction that is not a memory one (the block id)
  ResolvedSelection r = resolveSelection(d, req);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("--instr 1: not a memory instruction"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("ld_global"), std::string::npos) << r.error;

  req = {};
  req.value = "%nope";
  r = resolveSelection(d, req);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("--value %nope"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("%x"), std::string::npos) << r.error;  // lists what there is

  req = {};
  req.warp = 4;  // 4 warps: 0-3
  r = resolveSelection(d, req);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "--warp 4: the block has 4 warps (0-3)");

  req = {};
  req.block = 256;  // grid (256,1,1)
  r = resolveSelection(d, req);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "--block 256: the grid has 256 blocks (0-255)");
  req.block = 200;  // in the grid, but its accesses were not kept
  r = resolveSelection(d, req);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("kept the accesses of 4 blocks (0-3) only"), std::string::npos) << r.error;
}

// --block N keeps that block's accesses (SessionInputs::detailBlocks), so it can be shown.
TEST(Selection, DetailBlocksKeepsTheRequestedBlock) {
  SessionInputs in;
  in.path = std::string(TL_SOURCE_DIR) + "/kernels/softmax.tl";
  in.predictTimings = false;
  in.detailBlocks = 9;
  auto d = runSession(in);
  ASSERT_TRUE(d->errors.empty());
  SelectionRequest req;
  req.block = 8;
  EXPECT_TRUE(resolveSelection(*d, req).ok) << resolveSelection(*d, req).error;
}

// ----- the command line -------------------------------------------------------------------------

std::optional<int> parse(std::vector<const char*> args, VizOptions& o, std::string* err = nullptr) {
  args.insert(args.begin(), "tl-viz");
  std::ostringstream out, e;
  auto rc = parseCommandLine(static_cast<int>(args.size()), args.data(), o, out, e);
  if (err) *err = e.str() + out.str();
  return rc;
}

TEST(CommandLine, RepeatableOptionsNeverEatTheKernelPath) {
  VizOptions o;
  ASSERT_FALSE(parse({"--set", "N=30", "k.tl"}, o));
  EXPECT_EQ(o.kernelPath, "k.tl");
  ASSERT_EQ(o.sets.size(), 1u);
  EXPECT_EQ(o.sets[0], "N=30");
  VizOptions p;
  ASSERT_FALSE(parse({"--set", "N=30", "--set", "M=2", "--input", "x_ptr=x.npy", "--input", "y_ptr=y.npy", "k.tl"}, p));
  EXPECT_EQ(p.kernelPath, "k.tl");
  EXPECT_EQ(p.sets, (std::vector<std::string>{"N=30", "M=2"}));
  EXPECT_EQ(p.inputs, (std::vector<std::string>{"x_ptr=x.npy", "y_ptr=y.npy"}));
}

TEST(CommandLine, ProjectOptionNames) {
  VizOptions o;
  std::string dir = std::string(TL_SOURCE_DIR) + "/bench/results/gpu";
  ASSERT_FALSE(parse({"k.tl", "--grid", "(64,)", "--num-warps", "8", "--measured", dir.c_str(), "--instr", "12", "--value",
                      "%x", "--block", "2", "--warp", "1"},
                     o));
  EXPECT_EQ(o.grid, "(64,)");
  EXPECT_EQ(o.numWarps, 8);
  EXPECT_EQ(o.measuredDir, dir);
  EXPECT_EQ(*o.selection.instr, 12);
  EXPECT_EQ(o.selection.value, "%x");
  EXPECT_EQ(*o.selection.block, 2);
  EXPECT_EQ(*o.selection.warp, 1);
  std::string err;
  VizOptions q;
  EXPECT_EQ(parse({"--results", dir.c_str()}, q, &err), 1);  // the old name is gone: --measured
  VizOptions r;
  EXPECT_EQ(parse({"--measured", "/nonexistent/folder"}, r, &err), 1);
  EXPECT_NE(err.find("Directory does not exist"), std::string::npos) << err;
  VizOptions s;
  EXPECT_EQ(parse({"--warp", "-1"}, s, &err), 1);
  VizOptions t;
  EXPECT_EQ(parse({"--version"}, t, &err), 0);
  EXPECT_NE(err.find("tilelab"), std::string::npos) << err;
}

// Without a path: kernels/softmax.tl of the source tree, from any working directory.
TEST(CommandLine, DefaultKernelFromAnyDirectory) {
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(std::filesystem::temp_directory_path());
  VizOptions o;
  auto rc = parse({}, o);
  std::filesystem::current_path(cwd);
  ASSERT_FALSE(rc);
  EXPECT_TRUE(std::filesystem::exists(o.kernelPath)) << o.kernelPath;
  EXPECT_EQ(std::filesystem::path(o.kernelPath).filename(), "softmax.tl");
}

}  // namespace
}  // namespace tl::viz
