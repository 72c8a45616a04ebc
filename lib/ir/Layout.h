// Layouts: how a tile's elements are spread over the threads and warps of a program.
//
// A *blocked* layout (Triton's BlockedEncoding) says, per tile dimension d:
//   sizePerThread[d]   contiguous elements one thread holds along d   (its vector width)
//   threadsPerWarp[d]  lanes of a warp laid along d                    (product = 32)
//   warpsPerCTA[d]     warps laid along d                              (product = num_warps)
// and `order`, the dimensions from fastest- to slowest-varying (order[0] is the dimension
// along which consecutive registers, then consecutive lanes, then consecutive warps, go).
// One "layout tile" covers sizePerThread*threadsPerWarp*warpsPerCTA elements along each d; a
// larger tensor repeats it (each thread gets more registers), a smaller one wraps around
// (several threads hold the same element: replication).
//
// A *slice* layout is the layout of a reduction's result: the parent layout with dimension
// `dim` removed. Every lane and warp that differed only along `dim` holds the same elements.
//
// Register order within a thread: registers enumerate the per-thread elements of each
// dimension (reps x sizePerThread), with order[0] fastest. Because coordinates are
// base(lane, warp) + offset(register) (mod the shape), the register -> coordinate offsets are
// the same for every thread: lowering can permute registers statically.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Type.h"

namespace tl {

class Layout;
using LayoutPtr = std::shared_ptr<const Layout>;

constexpr int kWarpSize = 32;

class Layout {
 public:
  enum class Kind {
    Blocked,  // sizePerThread / threadsPerWarp / warpsPerCTA / order
    Slice,    // parent layout with dimension `dim` removed (a reduction's result)
  };

  static LayoutPtr blocked(std::vector<int> sizePerThread, std::vector<int> threadsPerWarp,
                           std::vector<int> warpsPerCTA, std::vector<int> order);
  static LayoutPtr slice(int dim, LayoutPtr parent);

  Kind kind() const { return kind_; }
  int rank() const;  // the rank of tensors this layout describes
  int numWarps() const;
  int numThreads() const { return numWarps() * kWarpSize; }

  // Blocked fields (for a slice, those of the innermost blocked parent, full rank).
  const std::vector<int>& sizePerThread() const { return root().spt_; }
  const std::vector<int>& threadsPerWarp() const { return root().tpw_; }
  const std::vector<int>& warpsPerCTA() const { return root().wpc_; }
  const std::vector<int>& order() const { return root().order_; }
  // Slice fields.
  int sliceDim() const { return dim_; }
  const LayoutPtr& parent() const { return parent_; }

  // Elements each thread holds for a tensor of `shape` (same for every thread).
  int64_t elemsPerThread(const Shape& shape) const;
  // The coordinates in a tensor of `shape` of register `reg` of thread `thread`
  // (thread = warp * 32 + lane).
  std::vector<int64_t> coords(const Shape& shape, int thread, int64_t reg) const;
  // How many threads hold each element (1: no replication).
  int64_t replication(const Shape& shape) const;

  // `#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>`, `#slice<dim=1, #blocked<...>>`
  std::string str() const;
  bool operator==(const Layout& o) const;

 private:
  const Layout& root() const { return kind_ == Kind::Blocked ? *this : parent_->root(); }
  Shape parentShape(const Shape& shape) const;  // re-insert the sliced dims with size 1

  Kind kind_ = Kind::Blocked;
  std::vector<int> spt_, tpw_, wpc_, order_;
  int dim_ = 0;
  LayoutPtr parent_;
};

// Parses the printed form (`#blocked<...>` / `#slice<...>`); nullptr when malformed.
LayoutPtr parseLayout(std::string_view text, size_t* consumed = nullptr);

// Triton's default blocked layout for a tile of `shape` run by `numWarps` warps, with
// `vecElems` contiguous elements per thread along order[0] (the widest access the axis
// analysis allows, at most 16 bytes): lanes, then warps, fill order[0] first.
LayoutPtr defaultBlockedLayout(const Shape& shape, int numWarps, int vecElems,
                               std::vector<int> order = {});

// The accumulator layout of an M x N dot on FMAs (fp32 IEEE, or inputs that tensor cores do not
// take) run by `numWarps` warps: a register tile. Each thread holds chunks of up to 4 x 4
// elements (sizePerThread [4, 4]), repeated across the tile, so that per k it needs only
// rows / 4 + cols / 4 vector loads of 16 bytes for rows x cols FMAs (the dot stages a
// transposed, LowerDot.cpp). Lanes, then warps, go one doubling at a time to the dimension
// whose per-thread extent is larger (N first on a tie for lanes, so a warp's B loads and C
// stores run along rows; M first for warps), never past one chunk per thread; a tile too small
// for that halves the chunks' rows, then their columns (the columns are the stores' vectors).
// nullptr when even 1 x 1 chunks leave threads idle.
LayoutPtr fmaAccumulatorLayout(int64_t M, int64_t N, int numWarps);

// The layout of trans(x) (out[j, i] = x[i, j]) when x has the rank-2 blocked layout `l`: the
// same fields with the two dimensions swapped, so register r of thread t holds the mirrored
// element of the one it held in x: a transpose that moves no data (Triton's tl.trans).
// Throws std::invalid_argument for anything but a rank-2 blocked layout.
LayoutPtr transposedLayout(const Layout& l);

// The layout of a permutation of x's dims (result dim j is operand dim order[j]; Triton's
// tl.permute) when x has the blocked layout `l`: every field permuted the same way, so register r
// of thread t holds the permuted element of the one it held in x: no data moves.
// Throws std::invalid_argument unless `l` is blocked and `order` a permutation of its dims.
LayoutPtr permutedLayout(const Layout& l, const std::vector<int>& order);

// join(a, b) with both operands in the blocked layout `l`: a new last dim of 2, held by every
// thread in its registers (sizePerThread 2, one lane, one warp, fastest in the register order),
// so register 2r + k of a thread is register r of a (k = 0) or b (k = 1): no data moves.
// Throws std::invalid_argument unless `l` is blocked.
LayoutPtr joinedLayout(const Layout& l);

// The inverse of joinedLayout: `l` blocked, its last dim held whole in each thread's registers
// (sizePerThread 2, threadsPerWarp 1, warpsPerCTA 1); the layout of split(x) drops that dim. nullptr
// when `l` is not such a layout (split then moves data).
LayoutPtr splitLayout(const Layout& l);

}  // namespace tl
