// Memory::fromLaunch for @launch's pointers(...) and values([...]) buffers: a pointer table
// holds the addresses of the buffers it names, written once every buffer has one (so a table
// may name buffers laid out after it, and other tables); values are stored exactly (i64 beyond
// 2^53 included) or rounded to a float dtype; a table naming a missing buffer is refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/Memory.h"

namespace tl {
namespace {

BufferSpec zeros(const std::string& name, Shape shape, DType d = DType::F32) {
  BufferSpec s;
  s.param = name;
  s.dtype = d;
  s.shape = std::move(shape);
  return s;
}

BufferSpec table(const std::string& name, std::vector<std::string> names) {
  BufferSpec s = zeros(name, {static_cast<int64_t>(names.size())}, DType::I64);
  s.fill = Fill::Pointers;
  s.pointees = std::move(names);
  return s;
}

ScalarValue iv(int64_t v) {
  ScalarValue s;
  s.dtype = DType::I64;
  s.i = v;
  return s;
}

ScalarValue fv(double v) {
  ScalarValue s;
  s.dtype = DType::F32;
  s.f = v;
  return s;
}

TEST(PointerTables, HoldTheAddressesOfTheBuffersTheyName) {
  LaunchConfig l;
  l.buffers = {table("t", {"b", "a", "b", "t2"}), zeros("a", {3}), zeros("b", {5, 7}, DType::F16),
               table("t2", {"a"})};
  Memory m = Memory::fromLaunch(l);
  const Buffer& t = *m.find("t");
  ASSERT_EQ(t.numel(), 4);
  EXPECT_EQ(uint64_t(t.getI(0)), m.find("b")->base);
  EXPECT_EQ(uint64_t(t.getI(1)), m.find("a")->base);
  EXPECT_EQ(uint64_t(t.getI(2)), m.find("b")->base);
  EXPECT_EQ(uint64_t(t.getI(3)), m.find("t2")->base);
  EXPECT_EQ(uint64_t(m.find("t2")->getI(0)), m.find("a")->base);
  EXPECT_EQ(t.pointees, (std::vector<std::string>{"b", "a", "b", "t2"}));
  EXPECT_TRUE(m.find("a")->pointees.empty());
  for (const Buffer& b : m.buffers()) EXPECT_EQ(b.base % Memory::kAlignment, 0u) << b.name;
}

TEST(PointerTables, ANameWithoutABufferIsRefused) {
  LaunchConfig l;
  l.buffers = {zeros("a", {3}), table("t", {"a", "nope"})};
  try {
    Memory::fromLaunch(l);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'t' names buffer 'nope', which the launch does not have"), std::string::npos)
        << e.what();
  }
}

TEST(ValueBuffers, AreStoredExactlyOrRoundedToTheDtype) {
  BufferSpec big = zeros("big", {3}, DType::I64);
  big.fill = Fill::Values;
  big.values = {iv((int64_t(1) << 62) + 1), iv(-7), iv(INT64_MIN)};
  BufferSpec small = zeros("small", {2}, DType::I32);
  small.fill = Fill::Values;
  small.values = {iv(-2147483648LL), iv(17)};
  BufferSpec half = zeros("half", {2}, DType::F16);
  half.fill = Fill::Values;
  half.values = {fv(0.1), iv(3)};
  LaunchConfig l;
  l.buffers = {big, small, half};
  Memory m = Memory::fromLaunch(l);
  EXPECT_EQ(m.find("big")->getI(0), (int64_t(1) << 62) + 1);
  EXPECT_EQ(m.find("big")->getI(1), -7);
  EXPECT_EQ(m.find("big")->getI(2), INT64_MIN);
  EXPECT_EQ(m.find("small")->getI(0), -2147483648LL);
  EXPECT_EQ(m.find("small")->getI(1), 17);
  EXPECT_EQ(m.find("half")->getF(0), double(halfToFloat(floatToHalf(0.1f))));
  EXPECT_EQ(m.find("half")->getF(1), 3.0);
}

}  // namespace
}  // namespace tl
