// The typed loops behind tl-block's ops: one function per op family, each dispatching once on
// the tiles' storage (Tile.h) and then running a tight loop over whole arrays.
//
// Expects: operand tiles whose types obey the op's rules (verified IR) and an output tile the
// caller has already reshape()d to the op's result type; the output never aliases an operand.
// Guarantees: the element semantics written in BlockInterpreter.cpp's header comment (the same
// as tl-scalar's), f16/bf16 results rounded to their dtype, no access outside the arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "block/Tile.h"
#include "ir/IR.h"

namespace tl::block {

// Comparison predicates of `cmp`.
enum class Pred : uint8_t {
  Lt,  // a < b
  Le,  // a <= b
  Gt,  // a > b
  Ge,  // a >= b
  Eq,  // a == b
  Ne,  // a != b (true when either is NaN)
};

// What `reduce` combines with.
enum class ReduceKind : uint8_t {
  Sum,  // wrapping sum for ints; f32 accumulation for floats
  Max,  // NaN-propagating maximum
  Min,  // NaN-propagating minimum
};

// What `scan` combines with (BlockOps.def: scan).
enum class ScanKind : uint8_t {
  Sum,   // wrapping sum for ints; float add in the dtype (f16/bf16 rounded every step)
  Prod,  // wrapping product for ints; float mul in the dtype
  Max,   // NaN-propagating maximum
  Min,   // NaN-propagating minimum
};

// Rounds every element of an f16/bf16 tile to its dtype (no-op for other dtypes).
void roundToOwnDType(Tile& t);
// Float value of an f16/bf16/f32 element after rounding to `dtype`.
float roundFloat(float v, DType dtype);

void fillInt(Tile& out, int64_t value);        // int/i1 constant (i32 wraps, i1 is value != 0)
void fillFloat(Tile& out, double value);       // float constant, rounded to out's dtype
void fillArange(Tile& out, int64_t start);     // out[i] = start + i (i32)
void splat(const Tile& scalar, Tile& out);     // every element = the scalar
void broadcast(const Tile& in, Tile& out);     // size-1 dims of `in` grow to out's shape
void copyElements(const Tile& in, Tile& out);  // same elements, another shape (expand_dims)
void transpose(const Tile& in, Tile& out);     // trans: out[j][i] = in[i][j] (rank 2)
// trans with `order`: out[idx] = in[src], src[order[j]] = idx[j] (any rank)
void permute(const Tile& in, const std::vector<int>& order, Tile& out);
void join(const Tile& a, const Tile& b, Tile& out);      // out[..., k] = (a, b)[k][...]
void split(const Tile& in, int64_t index, Tile& out);   // out[...] = in[..., index]
void convert(const Tile& in, Tile& out);       // dtype conversion (out's dtype)
void unary(OpKind kind, const Tile& in, Tile& out);
// Elementwise binary op. For integer div/rem, returns the index of the first zero divisor
// (and computes nothing); otherwise -1.
int64_t binary(OpKind kind, const Tile& a, const Tile& b, Tile& out);
// fma: out = a*b + c with one rounding (fmaf), f16/bf16 rounded once more to the dtype.
void fma(const Tile& a, const Tile& b, const Tile& c, Tile& out);
void compare(Pred pred, const Tile& a, const Tile& b, Tile& out);
void select(const Tile& cond, const Tile& a, const Tile& b, Tile& out);
// out[i] = p[i] + off[i] * dtypeBytes(pointee): pointers are byte addresses (wrapping).
void addptr(const Tile& p, const Tile& off, Tile& out);
// ptrcast: i64 <-> pointer (or pointer -> pointer): the 64-bit values, retyped.
void ptrcast(const Tile& in, Tile& out);
void reduce(ReduceKind kind, int axis, const Tile& in, Tile& out);
void argmax(int axis, const Tile& in, Tile& out);
// Inclusive scan along `axis` in the reference's sequential order (from index 0, or from the
// end with `reverse`), each step rounded to the dtype: matches tl-scalar bit for bit.
void scan(ScanKind kind, int axis, bool reverse, const Tile& in, Tile& out);
// out = acc + a @ b, accumulated in f32 (rank 3: one product per leading batch index); `tf32`
// reads every input as tf32 first (precision "tf32": truncToTf32); an f16 out (out_dtype f16)
// is rounded once at the end, as tl-scalar.
void dot(const Tile& a, const Tile& b, const Tile& acc, Tile& out, bool tf32 = false);
// device_print: element i of t as runtime/DevicePrint.h writes it (printInt / printFloat /
// printPointer of the element's dtype).
std::string elementText(const Tile& t, int64_t i, bool hex);
// device_assert: the first element of an i1 tile that is 0, or -1.
int64_t firstFalse(const Tile& cond);

}  // namespace tl::block
