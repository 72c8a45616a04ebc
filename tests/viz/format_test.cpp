// The panels' shared text helpers (viz/model/Format.h): digit grouping of integers and reals
// (signs, rounding, NaN, infinities, the extremes), fixed decimals, source line lookup, and the
// report JSON readers on missing, mistyped and out-of-range fields.
#include "viz/model/Format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include <climits>
#include <cstdint>
#include <limits>

namespace tl::viz {
namespace {

TEST(Format, GroupsIntegers) {
  EXPECT_EQ(withCommas(0), "0");
  EXPECT_EQ(withCommas(7), "7");
  EXPECT_EQ(withCommas(999), "999");
  EXPECT_EQ(withCommas(1000), "1,000");
  EXPECT_EQ(withCommas(123456), "123,456");
  EXPECT_EQ(withCommas(1234567), "1,234,567");
  EXPECT_EQ(withCommas(-1234567), "-1,234,567");
  EXPECT_EQ(withCommas(-999), "-999");
  EXPECT_EQ(withCommas(int64_t(65536)), "65,536");
  EXPECT_EQ(withCommas(size_t(4096)), "4,096");
  EXPECT_EQ(withCommas(std::numeric_limits<long long>::min()), "-9,223,372,036,854,775,808");
  EXPECT_EQ(withCommas(std::numeric_limits<uint64_t>::max()), "18,446,744,073,709,551,615");
}

TEST(Format, GroupsReals) {
  EXPECT_EQ(withCommas(1234.4), "1,234");
  EXPECT_EQ(withCommas(1234.6), "1,235");
  EXPECT_EQ(withCommas(-1234.6), "-1,235");
  EXPECT_EQ(withCommas(-0.3), "0");  // never "-0"
  EXPECT_EQ(withCommas(999999.7), "1,000,000");
  EXPECT_EQ(withCommas(std::nan("")), "-");
  EXPECT_EQ(withCommas(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(withCommas(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(withCommas(1.5e20), "1.5e+20");
}

TEST(Format, FixedDecimals) {
  EXPECT_EQ(formatNumber(4.781, 2), "4.78");
  EXPECT_EQ(formatNumber(12345.678, 2), "12,345.68");
  EXPECT_EQ(formatNumber(-12345.678, 1), "-12,345.7");
  EXPECT_EQ(formatNumber(-0.001, 2), "0.00");
  EXPECT_EQ(formatNumber(87.26, 1), "87.3");
  EXPECT_EQ(formatNumber(42), "42");
  EXPECT_EQ(formatNumber(4200000), "4,200,000");
  EXPECT_EQ(formatNumber(std::nan(""), 2), "-");
  EXPECT_EQ(formatNumber(1.0, -3), "1");             // decimals clamped to 0
  EXPECT_EQ(formatNumber(0.5, 40), "0.500000000");   // and to 9
}

TEST(Format, SourceLineText) {
  const std::string src = "def k(x):\n    y = x + 1\r\n\tz = y\t* 2\n\n  \nlast";
  EXPECT_EQ(sourceLineText(src, 1), "def k(x):");
  EXPECT_EQ(sourceLineText(src, 2), "y = x + 1");   // indentation and '\r' removed
  EXPECT_EQ(sourceLineText(src, 3), "z = y * 2");   // tabs become spaces
  EXPECT_EQ(sourceLineText(src, 4), "");
  EXPECT_EQ(sourceLineText(src, 5), "");            // only blanks
  EXPECT_EQ(sourceLineText(src, 6), "last");        // no final newline
  EXPECT_EQ(sourceLineText(src, 7), "");
  EXPECT_EQ(sourceLineText(src, 0), "");
  EXPECT_EQ(sourceLineText(src, -5), "");
  EXPECT_EQ(sourceLineText("a\n", 2), "");
  EXPECT_EQ(sourceLineText("", 1), "");
}

TEST(Format, JsonReaders) {
  ReportJson j = ReportJson::parse(R"({
    "occupancy": {"threads_per_block": 128, "ratio": 0.75, "neg": -3, "real": 41.9,
                  "huge": 1e30, "big_int": 5000000000, "text": "ptxas", "flag": true},
    "list": [1, 2]
  })");
  const ReportJson* occ = jsonMember(&j, "occupancy");
  ASSERT_NE(occ, nullptr);
  EXPECT_EQ(jsonMember(&j, "missing"), nullptr);
  EXPECT_EQ(jsonMember(nullptr, "occupancy"), nullptr);
  EXPECT_EQ(jsonMember(jsonMember(&j, "list"), "x"), nullptr);  // not an object

  EXPECT_EQ(jsonInt(occ, "threads_per_block"), 128);
  EXPECT_EQ(jsonInt(occ, "neg"), -3);
  EXPECT_EQ(jsonInt(occ, "real"), 41);           // truncated toward zero
  EXPECT_EQ(jsonInt(occ, "huge", -1), -1);       // out of int's range: the fallback
  EXPECT_EQ(jsonInt(occ, "big_int", -1), -1);
  EXPECT_EQ(jsonInt(occ, "text", 7), 7);         // not a number
  EXPECT_EQ(jsonInt(occ, "missing"), 0);
  EXPECT_EQ(jsonInt(nullptr, "x", 5), 5);

  EXPECT_DOUBLE_EQ(jsonNumber(occ, "ratio"), 0.75);
  EXPECT_DOUBLE_EQ(jsonNumber(occ, "big_int"), 5e9);
  EXPECT_TRUE(std::isnan(jsonNumber(occ, "text")));
  EXPECT_DOUBLE_EQ(jsonNumber(occ, "missing", -2), -2);

  EXPECT_EQ(jsonString(occ, "text"), "ptxas");
  EXPECT_EQ(jsonString(occ, "ratio"), "");
  EXPECT_TRUE(jsonBool(occ, "flag", false));
  EXPECT_FALSE(jsonBool(occ, "ratio", false));
  EXPECT_TRUE(jsonBool(occ, "missing", true));
}

// The panels and tl-sim's summary print the same digits: both round as printf "%.Nf" does
// (stages/sim/SimSummary.cpp fmt). std::round would give 15.63 where tl-sim prints 15.62.
TEST(Format, RoundsAsTheCliSummary) {
  EXPECT_EQ(formatNumber(15.625, 2), "15.62");  // a binary tie: to even, as printf
  EXPECT_EQ(formatNumber(0.125, 2), "0.12");
  EXPECT_EQ(formatNumber(2.675, 2), "2.67");    // 2.67499999... in binary
  EXPECT_EQ(formatNumber(15.626, 2), "15.63");
  EXPECT_EQ(formatNumber(-0.004, 2), "0.00");   // no "-0.00"
  for (double v : {0.0, 1.0 / 3, 2.5, 3.5, 62.5, 98.5625, 1234.5678, 1e-7, 4.005, 7.125}) {
    for (int d : {0, 1, 2, 3}) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*f", d, v);
      std::string ours = formatNumber(v, d);
      ours.erase(std::remove(ours.begin(), ours.end(), ','), ours.end());  // the digits, ungrouped
      EXPECT_EQ(ours, std::string(buf)) << v << " at " << d << " decimals";
    }
  }
  // Percentages with the summary's decimals: occupancy "62.5%" (30 of 48 warps), efficiency 98.6.
  EXPECT_EQ(formatPercent(0.625, kOccupancyPercentDecimals), "62.5%");
  EXPECT_EQ(formatPercent(0.98625, kEfficiencyPercentDecimals), "98.6%");
  EXPECT_EQ(formatPercent(std::nan(""), 1), "-");
}

TEST(Format, PluralOnlyWhenNotOne) {
  EXPECT_EQ(countOf(1, "kernel"), "1 kernel");
  EXPECT_EQ(countOf(0, "kernel"), "0 kernels");
  EXPECT_EQ(countOf(2, "kernel"), "2 kernels");
  EXPECT_EQ(countOf(1024, "element"), "1,024 elements");
  EXPECT_EQ(countOf(1, "element"), "1 element");
  EXPECT_EQ(countOf(-1, "block"), "-1 blocks");
  EXPECT_EQ(countOf(1, "copy", "copies"), "1 copy");
  EXPECT_EQ(countOf(3, "copy", "copies"), "3 copies");
  EXPECT_EQ(nounFor(1, "warp"), "warp");
  EXPECT_EQ(nounFor(4, "warp"), "warps");
}

}  // namespace
}  // namespace tl::viz
