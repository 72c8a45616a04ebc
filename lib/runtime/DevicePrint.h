// device_print and device_assert at run time, shared by every CPU engine (tl-scalar, tl-block,
// the thread executor) and by tl-ptx's format strings, so all stages print the same text.
//
// The line format is Triton's GPU printf (lib/Conversion/TritonGPUToLLVM/PrintOpToLLVM.cpp):
//
//   pid (0, 1, 0) idx ( 3) x: 1.500000          one line per element of a tile
//   pid (0, 1, 0) idx () n: 7                   a scalar (idx is empty)
//   pid (0, 1, 0) idx (3) x: (operand 1) 2      several operands: "(operand k) " after the prefix
//   pid (0, 1, 0) hello                         no operands: the prefix alone
//
// with each index padded to ceil(log10(dim)) characters, floats as C's %f of the value as a
// double (f16/bf16 widened), signed integers as %i / %lli, i1 as 0 or 1, pointers as 0x<hex> of
// their address, and hex=True as "0x%0Nx" of the element's bits (N = bits/4: 8 for f32 and i32,
// 16 for i64, 4 for f16/bf16). The executor adds " warp W lane L" after the pid (tl-thread);
// the GPU prints Triton's format as is.
//
// Order: the CPU engines print programs in grid order (x fastest), ops in program order, and the
// elements of one operand in row-major order; the executor prints in execution order (a warp's
// lanes in lane order, each lane's registers in order). Every element is printed once (by its
// first owner: replicated copies are masked off, a scalar is printed by thread 0).
//
// The prefix arrives munged by the front end (lib/frontend/SemaDebug.cpp: " x: ").
//
// Where the lines go: a DeviceOutput, normally the tool's stdout (the tools write no JSON to
// stdout, so nothing it parses is mixed with them), capped at maxLines (--max-print-lines);
// past the cap the lines are counted and finish() says how many were not shown.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tl {

constexpr int64_t kDefaultMaxPrintLines = 1000;

class DeviceOutput {
 public:
  explicit DeviceOutput(std::ostream* out = nullptr, int64_t maxLines = kDefaultMaxPrintLines)
      : out_(out), maxLines_(maxLines) {}
  // One printed line (without the newline): written while under the cap, counted always.
  void line(const std::string& text);
  int64_t lines() const { return lines_; }                  // every line the kernel printed
  int64_t dropped() const { return lines_ > maxLines_ ? lines_ - maxLines_ : 0; }
  // "device_print: 4096 more lines not shown (--max-print-lines 1000)" when lines were dropped.
  void finish();

 private:
  std::ostream* out_;
  int64_t maxLines_;
  int64_t lines_ = 0;
};

// "pid (0, 1, 0)"; `where` follows it (" warp 1 lane 3" in the executor, "" elsewhere).
std::string printPid(const std::array<int64_t, 3>& pid, const std::string& where = "");
// " idx ( 3,  0)": each index padded to ceil(log10(dim)) characters; " idx ()" for a scalar.
std::string printIdx(const std::vector<int64_t>& idx, const Shape& shape);
// One value. Ints and i1 come as int64 (i1: 0/1), floats as the double of the element, pointers
// as their address.
std::string printInt(DType dtype, int64_t v, bool hex);
std::string printFloat(DType dtype, double v, bool hex);
std::string printPointer(uint64_t address);
// A whole line of a device_print operand: pid + where + idx + prefix + "(operand k) " + value.
// operand < 0: the only operand.
std::string printLine(const std::array<int64_t, 3>& pid, const std::string& where, const std::vector<int64_t>& idx,
                      const Shape& shape, const std::string& prefix, int operand, const std::string& value);

// The RuntimeError message of a failing device_assert:
//   "device assertion failed: x must be positive (pid (0, 1, 0) idx (3))"
std::string assertMessage(const std::string& msg, const std::array<int64_t, 3>& pid, const std::string& where,
                          const std::vector<int64_t>& idx, const Shape& shape);

// The printf format of one print_regs line for tl-ptx (vprintf), ending in "\n": the text
// printLine makes, with conversions for the values ("pid (%u, %u, %u) idx (%2i) x: %f\n"); the
// prefix is part of the format ('%' doubled). Arguments, in order: the three pids (i32), one i32 per
// index, then the value: a double for floats (or its bits as i32/i64 with hex), i32 for
// i1/i32, i64 for i64, a pointer for %p. hasValue false: the prefix line of a print with no operands.
std::string printfFormat(const Shape& shape, const std::string& prefix, int operand, DType dtype, bool isPtr, bool hex,
                         bool hasValue);

// The multi-dimensional index of row-major element `flat` of `shape` (empty for a scalar).
std::vector<int64_t> elementIndex(const Shape& shape, int64_t flat);

}  // namespace tl
