// What every oracle reads and writes, bounds-checked: the oracles of kernels/*.tl (Oracles.cpp),
// of kernels/triton/*.tl (tests/triton) and of tests/external.
//
// An oracle sees the launch (sizes, strides, scalars, constexprs) and a Memory freshly filled
// from it. `Launch` reads its numbers by parameter name; `In` is a read-only view of an input
// buffer; `Out` is an output under construction that starts from the buffer's initial contents
// (so elements the kernel must leave alone keep them). Every index and name is checked: a
// mistake throws std::runtime_error naming the buffer or parameter, never reads past a vector.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "Oracles.h"  // OracleResult: expected contents per output buffer
#include "frontend/Launch.h"
#include "runtime/Memory.h"

namespace tl::e2e {

// The launch's numbers, by the kernel parameter (or constexpr) they bind.
class Launch {
 public:
  explicit Launch(const LaunchConfig& launch) : launch_(launch) {}
  // An integer runtime scalar, a constexpr, or a boolean (True = 1).
  int64_t i(const std::string& name) const {
    if (auto it = launch_.scalars.find(name); it != launch_.scalars.end()) {
      if (!isInt(it->second.dtype) && it->second.dtype != DType::I1)
        throw std::runtime_error("oracle: parameter '" + name + "' is not an integer");
      return it->second.i;
    }
    if (auto it = launch_.constexprs.find(name); it != launch_.constexprs.end()) return it->second;
    throw std::runtime_error("oracle: the launch binds no integer parameter '" + name + "'");
  }
  // A float runtime scalar (an int one is converted).
  double f(const std::string& name) const {
    auto it = launch_.scalars.find(name);
    if (it == launch_.scalars.end())
      throw std::runtime_error("oracle: the launch binds no scalar parameter '" + name + "'");
    return isFloat(it->second.dtype) ? it->second.f : static_cast<double>(it->second.i);
  }
  const LaunchConfig& config() const { return launch_; }

 private:
  const LaunchConfig& launch_;
};

inline const Buffer& bufferNamed(const Memory& mem, const std::string& name) {
  const Buffer* b = mem.find(name);
  if (!b) throw std::runtime_error("oracle: no buffer bound to '" + name + "'");
  return *b;
}

// A read-only input: element i as a double (f16 decoded) or as an integer.
class In {
 public:
  In(const Memory& mem, const std::string& name) : buf_(&bufferNamed(mem, name)) {}
  double operator[](int64_t i) const { return buf_->getF(check(i)); }
  int64_t integer(int64_t i) const { return buf_->getI(check(i)); }
  int64_t numel() const { return buf_->numel(); }

 private:
  int64_t check(int64_t i) const {
    if (i < 0 || i >= buf_->numel())
      throw std::runtime_error("oracle: index " + std::to_string(i) + " outside input '" +
                               buf_->name + "' (" + std::to_string(buf_->numel()) + " elements)");
    return i;
  }
  const Buffer* buf_;
};

// An output under construction; into() hands the finished contents to the result.
class Out {
 public:
  Out(const Memory& mem, const std::string& name) : name_(name) {
    const Buffer& b = bufferNamed(mem, name);
    values_.resize(static_cast<size_t>(b.numel()));
    for (int64_t k = 0; k < b.numel(); ++k) values_[static_cast<size_t>(k)] = b.getF(k);
  }
  double& operator[](int64_t i) {
    if (i < 0 || i >= static_cast<int64_t>(values_.size()))
      throw std::runtime_error("oracle: index " + std::to_string(i) + " outside output '" +
                               name_ + "' (" + std::to_string(values_.size()) + " elements)");
    return values_[static_cast<size_t>(i)];
  }
  void into(OracleResult& result) { result[name_] = std::move(values_); }

 private:
  std::string name_;
  std::vector<double> values_;
};

}  // namespace tl::e2e
