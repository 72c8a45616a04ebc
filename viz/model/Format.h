// Format: the small text helpers every panel shares, without ImGui — numbers with thousands
// separators ("1,234,567"), fixed decimals with a "-" for a missing value, the text of one source
// line for a tooltip, and safe readers for the simulator's report JSON (docs/sim.md) that answer
// a fallback instead of throwing when a field is missing, has another type or does not fit.
//
//   withCommas(1234567)                       // "1,234,567"
//   withCommas(-1234.6)                       // "-1,235" (rounded to the nearest integer)
//   formatNumber(4.781, 2)                    // "4.78";  formatNumber(NAN) -> "-"
//   countOf(1, "kernel")                      // "1 kernel";  countOf(3, "kernel") -> "3 kernels"
//   sourceLineText(source, 3)                 // line 3 without its indentation
//   const Json* mem = jsonMember(&report, "memory");
//   double sectors = jsonNumber(jsonMember(mem, "totals"), "sectors");  // NAN when absent
//
// Expects: nothing (any value, any JSON, any line number).
// Guarantees: nothing throws or reads out of bounds; NaN prints as "-", infinities as "inf" /
// "-inf"; a negative number that rounds to zero prints "0", never "-0"; the JSON readers never
// call nlohmann's get<>() on a value of the wrong type or out of the target's range.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace tl::viz {

// ---- Numbers --------------------------------------------------------------------------------

// "12,345,678", "-42", "0": an integer with a comma every three digits.
std::string withCommas(long long v);
std::string withCommas(unsigned long long v);
// Any other integer type (int, int64_t, size_t, ...): exactly, through the two above.
template <std::integral T>
std::string withCommas(T v) {
  if constexpr (std::is_signed_v<T>)
    return withCommas(static_cast<long long>(v));
  else
    return withCommas(static_cast<unsigned long long>(v));
}
// A real number rounded to the nearest integer, grouped ("1,235" for 1234.6); "-" for NaN,
// "inf" / "-inf"; beyond 1e18 in %.3g form ("1.23e+20").
std::string withCommas(double v);

// `decimals` (clamped to 0..9) digits after the point, the integer part grouped: "12,345.68";
// decimals 0 is withCommas(v); "-" for NaN (a value the report does not have). Rounded exactly
// as tl-sim's summary rounds (stages/sim/SimReport.cpp prints with printf "%.Nf": the binary
// value to the nearest, ties to even), so the panels and the CLI print the same digits:
// 15.625 -> "15.62" (printf, not std::round: "15.63").
std::string formatNumber(double v, int decimals = 0);

// A fraction as a percentage with `decimals` decimals, as formatNumber rounds: "98.6%".
std::string formatPercent(double fraction, int decimals);
// The decimals tl-sim's summary gives each percentage (keep in step with SimReport.cpp).
inline constexpr int kOccupancyPercentDecimals = 1;   // "theoretical 62.5% (30 of 48 warps)"
inline constexpr int kEfficiencyPercentDecimals = 1;  // per-instruction efficiency "98.6"

// "1 kernel", "2 kernels", "0 kernels", "1,024 elements": the count (grouped) and the noun,
// plural unless the count is exactly 1. `pluralNoun` for irregular nouns ("1 copy", "2 copies").
std::string countOf(long long n, const std::string& noun, const std::string& pluralNoun = "");
// The noun alone, as countOf would choose it ("warp" / "warps").
std::string nounFor(long long n, const std::string& noun, const std::string& pluralNoun = "");

// ---- Source text ----------------------------------------------------------------------------

// The text of 1-based line `line` of `source` for a tooltip: its indentation and a trailing
// '\r' removed, tabs inside it turned into spaces (the UI font has no tab glyph); "" when the
// line does not exist (line < 1 or past the end).
std::string sourceLineText(const std::string& source, int64_t line);

// ---- Report JSON ----------------------------------------------------------------------------

using ReportJson = nlohmann::ordered_json;  // SessionData::report's type

// The member `key` of *j, or nullptr when j is null, not an object, or has no such member.
const ReportJson* jsonMember(const ReportJson* j, const char* key);
// The number at (*j)[key], or `fallback` when it is missing or not a number.
double jsonNumber(const ReportJson* j, const char* key, double fallback = NAN);
// The number at (*j)[key] as an int (a real value truncated toward zero), or `fallback` when it
// is missing, not a number, not finite or outside int's range.
int jsonInt(const ReportJson* j, const char* key, int fallback = 0);
// The string at (*j)[key], or "" when it is missing or not a string.
std::string jsonString(const ReportJson* j, const char* key);
// The boolean at (*j)[key], or `fallback` when it is missing or not a boolean.
bool jsonBool(const ReportJson* j, const char* key, bool fallback);

}  // namespace tl::viz
