// The textual form of the IR: printFunction() writes it, parseFunction() (ir/Parser.h) reads it
// back. The two round-trip: print(parse(print(f))) == print(f) for every kernel (tested).
//
//   func @softmax_kernel(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %N: i32, %stride: i32) constexprs(BLOCK_N = 1024) loc(2:1) {
//     %row = program_id {axis = 0} : i32 loc(3:11)
//     %cols = arange {start = 0, end = 1024} : <1024xi32> loc(4:12)
//     ...
//     return loc(10:5)
//   }
//
// Value names come from the source variable (a hint kept on the Value), made unique with a
// numeric suffix; unnamed values print as %0, %1, ... The full grammar is in docs/ir.md.
#pragma once

#include <string>
#include <unordered_map>

#include "ir/IR.h"

namespace tl {

struct PrintOptions {
  bool locs = true;  // print `loc(line:col)` after each op
};

std::string printFunction(const Function& fn, const PrintOptions& opts = {});

// The name printFunction gives each value of `fn` ("x", "x.1", "7"; without the '%'), for
// tools that point at printed values (the visualizer's value list).
std::unordered_map<const Value*, std::string> printedValueNames(const Function& fn);

// Pieces of the format, shared with tools that print IR fragments (docs/ir.md has the grammar):
// a double as the shortest text that reads back exactly ("1.0", "1e-30", "inf", "-inf", "nan";
// always with '.', 'e', "inf" or "nan", so it never reads as an integer).
std::string formatDouble(double v);
// A string attribute in double quotes, with \" \\ \n \t and \xHH escapes.
std::string quoteString(const std::string& s);
// An attribute value: integer, formatDouble() or quoteString().
std::string attrString(const Attr& a);

}  // namespace tl
