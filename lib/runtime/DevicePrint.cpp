// device_print / device_assert formatting (see DevicePrint.h for the format and its source).
#include "runtime/DevicePrint.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "runtime/Memory.h"

namespace tl {

void DeviceOutput::line(const std::string& text) {
  ++lines_;
  if (out_ && lines_ <= maxLines_) *out_ << text << "\n";
}

void DeviceOutput::finish() {
  if (out_ && dropped() > 0)
    *out_ << "device_print: " << dropped() << " more line" << (dropped() == 1 ? "" : "s")
          << " not shown (--max-print-lines " << maxLines_ << ")\n";
}

// ceil(log10(dim)): Triton's index width (0 for dim 1: no padding).
static int indexWidth(int64_t dim) { return dim > 0 ? static_cast<int>(std::ceil(std::log10(double(dim)))) : 0; }

std::string printPid(const std::array<int64_t, 3>& pid, const std::string& where) {
  return "pid (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " + std::to_string(pid[2]) + ")" + where;
}

std::string printIdx(const std::vector<int64_t>& idx, const Shape& shape) {
  std::string s = " idx (";
  for (size_t d = 0; d < idx.size(); ++d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%*" PRId64, d < shape.size() ? indexWidth(shape[d]) : 0, idx[d]);
    s += (d ? ", " : "") + std::string(buf);
  }
  return s + ")";
}

// "0x" and the bits in hex, zero-padded to bitsWide / 4 digits (printf's "0x%0Nx").
static std::string hexOf(uint64_t bits, int bitsWide) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setfill('0') << std::setw(bitsWide / 4) << bits;
  return os.str();
}

static int bitsOf(DType d) { return d == DType::I1 ? 1 : dtypeBytes(d) * 8; }

std::string printInt(DType dtype, int64_t v, bool hex) {
  if (hex) return hexOf(dtype == DType::I64 ? uint64_t(v) : uint64_t(uint32_t(v)) & (dtype == DType::I1 ? 1 : ~0u), bitsOf(dtype));
  return std::to_string(dtype == DType::I1 ? (v != 0) : v);
}

std::string printFloat(DType dtype, double v, bool hex) {
  if (hex) {
    float f = static_cast<float>(v);
    uint32_t bits = 0;
    if (dtype == DType::F16) bits = floatToHalf(f);
    else if (dtype == DType::BF16) bits = floatToBf16(f);
    else std::memcpy(&bits, &f, 4);
    return hexOf(bits, bitsOf(dtype));
  }
  char buf[400];  // %f of the largest double is 309 digits + 7
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

std::string printPointer(uint64_t address) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, address);
  return buf;
}

std::string printLine(const std::array<int64_t, 3>& pid, const std::string& where, const std::vector<int64_t>& idx,
                      const Shape& shape, const std::string& prefix, int operand, const std::string& value) {
  std::string s = printPid(pid, where) + printIdx(idx, shape) + prefix;
  if (operand >= 0) s += "(operand " + std::to_string(operand) + ") ";
  return s + value;
}

std::string assertMessage(const std::string& msg, const std::array<int64_t, 3>& pid, const std::string& where,
                          const std::vector<int64_t>& idx, const Shape& shape) {
  std::string s = "device assertion failed";
  if (!msg.empty()) s += ": " + msg;
  return s + " (" + printPid(pid, where) + (shape.empty() ? "" : printIdx(idx, shape)) + ")";
}

std::string printfFormat(const Shape& shape, const std::string& prefix, int operand, DType dtype, bool isPtr, bool hex,
                         bool hasValue) {
  std::string esc;
  for (char c : prefix) esc += c == '%' ? std::string("%%") : std::string(1, c);
  std::string f = "pid (%u, %u, %u)";
  if (!hasValue) return f + esc + "\n";
  f += " idx (";
  for (size_t d = 0; d < shape.size(); ++d) {
    int w = indexWidth(shape[d]);
    f += (d ? ", %" : "%") + (w > 0 ? std::to_string(w) : std::string()) + "i";
  }
  f += ")" + esc;
  if (operand >= 0) f += "(operand " + std::to_string(operand) + ") ";
  if (isPtr) return f + "%p\n";
  if (hex) {
    int bits = bitsOf(dtype);
    if (bits > 32) return f + "0x%016llx\n";
    return f + (bits >= 4 ? "0x%0" + std::to_string(bits / 4) + "x\n" : std::string("0x%x\n"));
  }
  if (isFloat(dtype)) return f + "%f\n";
  if (dtype == DType::I64) return f + "%lli\n";
  if (dtype == DType::I1) return f + "%u\n";
  return f + "%i\n";
}

std::vector<int64_t> elementIndex(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

}  // namespace tl
