// How the values of the @launch expression language print (LaunchValue.h), and the one look at
// a .npy header the launch needs before the file is read (an unannotated pointer parameter
// takes its dtype from the file).
#include "frontend/LaunchValue.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace tl::launchexpr {

std::string fmtDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

const char* fillName(Fill f) {
  switch (f) {
    case Fill::Randn: return "randn";
    case Fill::Uniform: return "uniform";
    case Fill::Arange: return "arange";
    case Fill::Full: return "full";
    case Fill::Zeros: return "zeros";
    case Fill::File: return "file";
    case Fill::Empty: return "empty";
    case Fill::Pointers: return "pointers";
    case Fill::Values: return "values";
  }
  return "?";
}

std::string show(const LVal& v) {
  switch (v.kind) {
    case LVal::Kind::Error: return "<error>";
    case LVal::Kind::Int: return std::to_string(v.i);
    case LVal::Kind::Float: return fmtDouble(v.f);
    case LVal::Kind::Bool: return v.i ? "True" : "False";
    case LVal::Kind::None: return "None";
    case LVal::Kind::DType: return dtypeName(v.dtype);
    case LVal::Kind::String: return "\"" + v.str + "\"";
    case LVal::Kind::Tuple: {
      std::string s = "(";
      for (size_t k = 0; k < v.items.size(); ++k) s += (k ? ", " : "") + show(v.items[k]);
      return s + (v.items.size() == 1 ? ",)" : ")");
    }
    case LVal::Kind::Buffer: {
      std::string s = std::string(fillName(v.buf.fill)) + "(";
      if (v.buf.fill == Fill::File) return s + "\"" + v.buf.file + "\")";
      if (v.buf.fill == Fill::Pointers) {
        for (size_t k = 0; k < v.buf.pointees.size(); ++k) s += (k ? ", " : "") + v.buf.pointees[k];
        return s + ")";
      }
      for (size_t k = 0; k < v.buf.shape.size(); ++k) s += (k ? "x" : "") + std::to_string(v.buf.shape[k]);
      s += std::string(" ") + dtypeName(v.buf.dtype);
      if (v.buf.output) s += ", output";
      return s + ")";
    }
  }
  return "?";
}

const char* kindName(const LVal& v) {
  switch (v.kind) {
    case LVal::Kind::Int: return "an int";
    case LVal::Kind::Float: return "a float";
    case LVal::Kind::Bool: return "a bool";
    case LVal::Kind::Tuple: return "a tuple";
    case LVal::Kind::Buffer: return "a buffer";
    case LVal::Kind::DType: return "a dtype";
    case LVal::Kind::String: return "a string";
    case LVal::Kind::None: return "None";
    case LVal::Kind::Error: return "an error";
  }
  return "?";
}

// The dtype in a .npy file's header (the descr tilelab's writer uses, lib/runtime/Npy.cpp), or
// nothing when the file cannot be read as one: Memory::fromLaunch reads it whole later and
// reports why. Only a regular file is opened (a FIFO would block) and at most the header is read.
std::optional<DType> npyHeaderDType(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  char pre[12] = {};
  if (!in.read(pre, 10) || std::string(pre, 6) != "\x93NUMPY") return std::nullopt;
  uint32_t len = uint8_t(pre[8]) | uint32_t(uint8_t(pre[9])) << 8;
  if (pre[6] >= 2) {  // version 2 and 3: a 4-byte header length
    if (!in.read(pre + 10, 2)) return std::nullopt;
    len |= uint32_t(uint8_t(pre[10])) << 16 | uint32_t(uint8_t(pre[11])) << 24;
  }
  if (len > (1u << 16)) return std::nullopt;
  std::string header(len, '\0');
  if (!in.read(header.data(), len)) return std::nullopt;
  size_t key = header.find("'descr'");
  size_t open = key == std::string::npos ? key : header.find('\'', key + 7);
  size_t close = open == std::string::npos ? open : header.find('\'', open + 1);
  if (close == std::string::npos) return std::nullopt;
  std::string descr = header.substr(open + 1, close - open - 1);
  if (descr == "<f4") return DType::F32;
  if (descr == "<f2") return DType::F16;
  if (descr == "<i4") return DType::I32;
  if (descr == "<i8") return DType::I64;
  if (descr == "|b1") return DType::I1;
  if (descr == "<u2" && header.find("tilelab: bfloat16") != std::string::npos) return DType::BF16;
  if (descr == "|u1" && header.find("tilelab: float8e4nv") != std::string::npos) return DType::F8E4M3;
  if (descr == "|u1" && header.find("tilelab: float8e5") != std::string::npos) return DType::F8E5M2;
  return std::nullopt;
}

}  // namespace tl::launchexpr
