// .npy reading and writing (the NumPy array file format, version 1.0).
//
// Layout of a file:
//   "\x93NUMPY"  major=1 minor=0  uint16 little-endian header length H
//   H bytes of ASCII: a Python dict literal, e.g.
//       {'descr': '<f4', 'fortran_order': False, 'shape': (256, 781), }
//     padded with spaces and ended by '\n' so the data starts at a multiple of 64 bytes
//   the elements, C order, little-endian.
//
// dtypes: '<f4' f32, '<f2' f16, '<i4' i32, '<i8' i64, '|b1' i1. bf16 has no numpy dtype: it is
// written as '<u2' (its raw bits) with the comment `# tilelab: bfloat16` after the dict; numpy
// ignores the comment (it parses the header with ast.literal_eval) and reads uint16 bits, and
// readNpy reads it back as bf16. A '<u2' file without the comment is rejected. The fp8 dtypes
// have no numpy dtype either (ml_dtypes' float8_e4m3fn / float8_e5m2 are not .npy-portable):
// they are written as '|u1' bit patterns with `# tilelab: float8e4nv` or `# tilelab: float8e5`
// (numpy reads uint8; `np.load(f).view(ml_dtypes.float8_e4m3fn)` gives the values), and a '|u1'
// file without one of the comments is rejected.
//
// readNpy accepts versions 1.0 and 2.0 (4-byte header length), rejects fortran order,
// big-endian data, unknown dtypes, bad headers, and data of the wrong size, each with a
// std::runtime_error naming the file and the reason. It never reads past the end of the file.
// The file is read through readFileBounded (ir/FileRead.h): a regular file of at most the
// largest buffer (Memory::kMaxBufferBytes) plus kNpyMaxHeaderBytes; a FIFO or a device such as
// /dev/zero is refused before a byte is read, and a header longer than kNpyMaxHeaderBytes is
// rejected.
#include "runtime/Memory.h"

#include <cctype>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "ir/FileRead.h"

namespace tl {

static_assert(kNpyMaxDataBytes == Memory::kMaxBufferBytes,
              "ir/FileRead.h's .npy limit is the largest buffer the CPU stages allocate");

namespace {

const char kMagic[] = "\x93NUMPY";
const char kBf16Note[] = "# tilelab: bfloat16";
const char kE4M3Note[] = "# tilelab: float8e4nv";
const char kE5M2Note[] = "# tilelab: float8e5";

const char* descrFor(DType d) {
  switch (d) {
    case DType::F32: return "<f4";
    case DType::F16: return "<f2";
    case DType::BF16: return "<u2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::I1: return "|b1";
    case DType::F8E4M3:
    case DType::F8E5M2: return "|u1";
  }
  return "?";
}

// A small reader for the header's Python dict literal.
class HeaderParser {
 public:
  HeaderParser(std::string text, std::string path) : t_(std::move(text)), path_(std::move(path)) {}

  std::string descr;
  bool haveDescr = false, haveOrder = false, haveShape = false;
  bool fortran = false;
  Shape shape;
  std::string trailing;  // what follows the closing '}' (whitespace, maybe a comment)

  // header := '{' (key ':' value ','?)* '}' trailing
  void parse() {
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') { ++pos_; break; }
      std::string key = str();
      expect(':');
      if (key == "descr") { descr = str(); haveDescr = true; }
      else if (key == "fortran_order") { fortran = boolean(); haveOrder = true; }
      else if (key == "shape") { shape = tuple(); haveShape = true; }
      else fail("unknown header key '" + key + "'");
      skipSpace();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') fail("expected ',' or '}' in the header");
    }
    trailing = t_.substr(pos_);
    if (!haveDescr || !haveOrder || !haveShape) fail("header lacks 'descr', 'fortran_order' or 'shape'");
  }

  [[noreturn]] void fail(const std::string& why) const { throw std::runtime_error(path_ + ": bad .npy header: " + why); }

 private:
  std::string t_;
  std::string path_;
  size_t pos_ = 0;

  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  // A quoted string ('...' or "...") without escapes.
  std::string str() {
    skipSpace();
    char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    size_t end = t_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string s = t_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skipSpace();
    if (t_.compare(pos_, 4, "True") == 0) { pos_ += 4; return true; }
    if (t_.compare(pos_, 5, "False") == 0) { pos_ += 5; return false; }
    fail("expected True or False");
  }
  // '(' (int ',')* int? ')'
  Shape tuple() {
    expect('(');
    Shape s;
    while (true) {
      skipSpace();
      if (peek() == ')') { ++pos_; return s; }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("shape must be a tuple of non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (int64_t(1) << 40)) fail("shape dimension too large");
        v = v * 10 + (t_[pos_++] - '0');
      }
      s.push_back(v);
      skipSpace();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
  }
};

std::optional<DType> dtypeForDescr(const std::string& descr, const std::string& trailing) {
  if (descr == "<f4") return DType::F32;
  if (descr == "<f2") return DType::F16;
  if (descr == "<i4") return DType::I32;
  if (descr == "<i8") return DType::I64;
  if (descr == "|b1") return DType::I1;
  if (descr == "<u2" && trailing.find(kBf16Note) != std::string::npos) return DType::BF16;
  if (descr == "|u1" && trailing.find(kE4M3Note) != std::string::npos) return DType::F8E4M3;
  if (descr == "|u1" && trailing.find(kE5M2Note) != std::string::npos) return DType::F8E5M2;
  return std::nullopt;
}

}  // namespace

void writeNpy(const std::string& path, const Buffer& buf) {
  // Python tuple syntax: "(3,)" for rank 1, "(3, 4)" otherwise.
  std::string shape = "(";
  for (size_t k = 0; k < buf.shape.size(); ++k)
    shape += (k ? ", " : "") + std::to_string(buf.shape[k]);
  shape += buf.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descrFor(buf.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (buf.dtype == DType::BF16) header += std::string(" ") + kBf16Note;
  if (buf.dtype == DType::F8E4M3) header += std::string(" ") + kE4M3Note;
  if (buf.dtype == DType::F8E5M2) header += std::string(" ") + kE5M2Note;
  // Pad with spaces so that magic (6) + version (2) + length (2) + header ends at a multiple
  // of 64, the last header byte being '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw std::runtime_error(path + ": .npy header too long");

  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out.write(kMagic, 6);
  const unsigned char version[2] = {1, 0};
  out.write(reinterpret_cast<const char*>(version), 2);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(buf.bytes.data()), static_cast<std::streamsize>(buf.bytes.size()));
  if (!out) throw std::runtime_error("error writing '" + path + "'");
}

Buffer readNpy(const std::string& path) {
  const std::string data = readFileBounded(path, FileKind::Npy);
  auto bad = [&](const std::string& why) { return std::runtime_error(path + ": not a valid .npy file: " + why); };

  if (data.size() < 10 || data.compare(0, 6, kMagic, 6) != 0) throw bad("missing the \\x93NUMPY magic");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) | (static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8);
    headerStart = 10;
  } else if (major == 2) {
    if (data.size() < 12) throw bad("truncated header");
    headerLen = 0;
    for (int k = 3; k >= 0; --k) headerLen = (headerLen << 8) | static_cast<unsigned char>(data[8 + k]);
    headerStart = 12;
  } else {
    throw bad("unsupported version " + std::to_string(major) + "." +
              std::to_string(static_cast<unsigned char>(data[7])));
  }
  if (headerLen > data.size() - headerStart) throw bad("header runs past the end of the file");
  if (headerStart + headerLen > kNpyMaxHeaderBytes)
    throw bad("the header is " + std::to_string(headerLen) + " bytes, over the " + formatByteLimit(kNpyMaxHeaderBytes) +
              " limit");

  HeaderParser hp(data.substr(headerStart, headerLen), path);
  hp.parse();
  if (hp.fortran) throw std::runtime_error(path + ": fortran_order arrays are not supported (save a C-order array)");
  if (!hp.descr.empty() && hp.descr[0] == '>')
    throw std::runtime_error(path + ": big-endian data ('" + hp.descr + "') is not supported");
  auto dtype = dtypeForDescr(hp.descr, hp.trailing);
  if (!dtype)
    throw std::runtime_error(path + ": unsupported dtype '" + hp.descr +
                             "' (expected '<f4', '<f2', '<i4', '<i8', '|b1', or '<u2' marked bfloat16)");

  Buffer buf;
  buf.name = path;
  buf.dtype = *dtype;
  buf.shape = hp.shape.empty() ? Shape{1} : hp.shape;  // a 0-d array holds one element
  uint64_t bytes = static_cast<uint64_t>(dtypeBytes(buf.dtype));
  for (int64_t d : buf.shape) {
    if (d != 0 && bytes > Memory::kMaxBufferBytes / static_cast<uint64_t>(d))
      throw std::runtime_error(path + ": array is larger than the " +
                               std::to_string(Memory::kMaxBufferBytes >> 20) + " MiB limit");
    bytes *= static_cast<uint64_t>(d);
  }
  size_t dataStart = headerStart + headerLen;
  if (data.size() - dataStart != bytes)
    throw bad("expected " + std::to_string(bytes) + " data bytes for shape (" + buf.describe() + "), found " +
              std::to_string(data.size() - dataStart));
  buf.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(dataStart), data.end());
  if (buf.dtype == DType::I1)
    for (auto& b : buf.bytes) b = b != 0;  // numpy bools are 0/1; normalize anything else
  return buf;
}

}  // namespace tl
