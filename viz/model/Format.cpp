// Format (see Format.h): digit grouping on the decimal text of a number, a line scan of the
// source, and type-checked reads of the report JSON.
#include "viz/model/Format.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string_view>

namespace tl::viz {

namespace {

// "1234567" -> "1,234,567": `digits` is a run of decimal digits (no sign).
std::string groupDigits(std::string_view digits) {
  std::string s;
  s.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

// "-1234.50" -> "-1,234.50": groups the integer digits of a printf-formatted number.
std::string groupFormatted(std::string_view text) {
  size_t start = !text.empty() && text[0] == '-' ? 1 : 0;
  size_t end = text.find('.', start);
  if (end == std::string_view::npos) end = text.size();
  return std::string(text.substr(0, start)) + groupDigits(text.substr(start, end - start)) +
         std::string(text.substr(end));
}

}  // namespace

std::string withCommas(long long v) {
  std::string text = std::to_string(v);  // no negation: LLONG_MIN has no positive counterpart
  return groupFormatted(text);
}

std::string withCommas(unsigned long long v) { return groupDigits(std::to_string(v)); }

std::string withCommas(double v) { return formatNumber(v, 0); }

std::string formatNumber(double v, int decimals) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (std::fabs(v) >= 1e18) {  // digits past double's precision would be noise
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  decimals = std::clamp(decimals, 0, 9);
  // printf's rounding, as tl-sim's summary (SimReport.cpp fmt("%.2f", ...)) uses it.
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string text = buf;
  // A negative number that rounds to zero prints without its sign ("0.00", not "-0.00").
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return groupFormatted(text);
}

std::string formatPercent(double fraction, int decimals) {
  if (std::isnan(fraction)) return "-";
  return formatNumber(100.0 * fraction, decimals) + "%";
}

std::string nounFor(long long n, const std::string& noun, const std::string& pluralNoun) {
  if (n == 1) return noun;
  return pluralNoun.empty() ? noun + "s" : pluralNoun;
}

std::string countOf(long long n, const std::string& noun, const std::string& pluralNoun) {
  return withCommas(n) + " " + nounFor(n, noun, pluralNoun);
}

std::string sourceLineText(const std::string& source, int64_t line) {
  if (line < 1) return "";
  std::string_view rest(source);
  for (int64_t i = 1; i < line; ++i) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return "";
    rest.remove_prefix(nl + 1);
  }
  std::string_view text = rest.substr(0, rest.find('\n'));
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  std::string out(text.substr(first));
  std::replace(out.begin(), out.end(), '\t', ' ');
  return out;
}

const ReportJson* jsonMember(const ReportJson* j, const char* key) {
  if (!j || !j->is_object()) return nullptr;
  auto it = j->find(key);
  return it == j->end() ? nullptr : &*it;
}

double jsonNumber(const ReportJson* j, const char* key, double fallback) {
  const ReportJson* v = jsonMember(j, key);
  return v && v->is_number() ? v->get<double>() : fallback;
}

int jsonInt(const ReportJson* j, const char* key, int fallback) {
  const ReportJson* v = jsonMember(j, key);
  if (!v || !v->is_number()) return fallback;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    return u <= static_cast<uint64_t>(INT_MAX) ? static_cast<int>(u) : fallback;
  }
  if (v->is_number_integer()) {
    int64_t i = v->get<int64_t>();
    return i >= INT_MIN && i <= INT_MAX ? static_cast<int>(i) : fallback;
  }
  double d = std::trunc(v->get<double>());
  return std::isfinite(d) && d >= INT_MIN && d <= INT_MAX ? static_cast<int>(d) : fallback;
}

std::string jsonString(const ReportJson* j, const char* key) {
  const ReportJson* v = jsonMember(j, key);
  return v && v->is_string() ? v->get<std::string>() : "";
}

bool jsonBool(const ReportJson* j, const char* key, bool fallback) {
  const ReportJson* v = jsonMember(j, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

}  // namespace tl::viz
