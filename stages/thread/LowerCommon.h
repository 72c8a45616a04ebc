// Private to the lowering (stages/thread/Lower*.cpp): the Lowerer, which walks block IR and
// builds the thread IR, its index-math helpers, and LayoutGeom, the numbers a layout implies
// for one tile shape.
//
// Conventions of the thread IR built here:
//   - a tile of shape S with layout L becomes E = L.elemsPerThread(S) registers: a register
//     vector <E x T>, or a plain scalar T when E == 1 (thread IR's permute and reg_reduce give
//     scalars for one register, so one register is always a scalar);
//   - a block-IR scalar stays a scalar (every thread holds the same value);
//   - index math is i32 thread IR built from lane_id, warp_id and reg_index, emitted where it
//     is needed; the cleanup passes (cse) merge the repeats.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "thread/Layouts.h"
#include "thread/Lowering.h"

namespace tl::lower {

// What a layout means for one tile shape, per dimension of the *root* blocked layout (a slice
// layout's sliced dimensions are root dimensions of extent 1 that the value does not have).
//   register r of a thread has one digit per root dim (mixed radix e[], order[0] fastest);
//   along kept root dim d:  coordinate = (rep*tile[d] + (warpDigit*tpw[d] + laneDigit)*spt[d] + i) mod full[d]
//   with rep = digit / spt[d], i = digit % spt[d] (exactly Layout::coords).
struct LayoutGeom {
  std::vector<int> spt, tpw, wpc, order;     // the root blocked layout
  Shape full;                                // root-rank shape (sliced dims have extent 1)
  std::vector<int> kept;                     // value dim j -> root dim
  std::vector<int64_t> e;                    // registers per root dim (1 for sliced dims)
  std::vector<int64_t> regStride;            // register-number stride of each root dim's digit
  std::vector<int64_t> laneStride, warpStride;  // lane / warp-number stride of each digit
  std::vector<int64_t> tile;                 // spt*tpw*wpc: one layout tile along each dim
  int64_t numRegs = 1;                       // E
  int numWarps = 1;

  static LayoutGeom of(const Layout& layout, const Shape& shape);
  int rootRank() const { return static_cast<int>(spt.size()); }
  bool isKept(int rootDim) const;
  // Threads wrap around along kept root dim d (the layout tile is larger than the tile).
  bool wraps(int d) const { return tile[d] > full[d]; }
  std::vector<int64_t> digits(int64_t reg) const;
  int64_t regOf(const std::vector<int64_t>& digits) const;
};

// Row-major strides of a shape.
std::vector<int64_t> rowMajorStrides(const Shape& shape);

// For each register of `dstType`'s layout, the register of the SAME thread in `srcType`'s
// layout that holds element toSrc(dst coordinate); std::nullopt when that register differs
// between threads or some thread does not hold the element (then data must move between
// threads). `toSrc` maps a destination coordinate to a source coordinate.
using CoordMap = std::function<std::vector<int64_t>(const std::vector<int64_t>&)>;
std::optional<std::vector<int64_t>> staticRegisterMap(const Type& srcType, const Type& dstType,
                                                      const CoordMap& toSrc);

class Lowerer {
 public:
  explicit Lowerer(const Function& src, const LowerOptions& options = {}) : src_(src), options_(options) {}
  // Builds the (uncleaned) thread function; the shared buffers requested are in buffers().
  std::unique_ptr<Function> run();
  std::vector<SharedBuffer>& buffers() { return buffers_; }
  // Writes the allocated offsets into the base-address constants.
  void patchSharedBases();

 private:
  // --- driver (LowerCore.cpp)
  void lowerRegion(const Region& from, Region& to);
  void lowerOp(const Op& op);
  Value* get(const Value* blockValue) const;
  void set(const Value* blockValue, Value* threadValue);
  Type lowerType(const Type& t) const;
  [[noreturn]] void fail(const std::string& msg) const;

  // --- index math (LowerCore.cpp). `n` is a register count; n == 1 means a scalar.
  static int64_t regsOf(const Value* v) { return v->type.isScalar() ? 1 : v->type.shape[0]; }
  Value* constI32(int64_t value, int64_t n = 1);
  Value* constOf(const Type& scalarType, double f, int64_t i, int64_t n);  // float or int constant
  Value* constI32s(const std::vector<int64_t>& values);  // register r holds values[r] (a scalar for one)
  Value* splatTo(Value* v, int64_t n);          // a scalar to n registers (no-op when n == 1)
  Value* bin(OpKind kind, Value* a, Value* b);  // splats a scalar side to the other's registers
  Value* addC(Value* a, int64_t c);
  Value* mulC(Value* a, int64_t c);
  Value* divC(Value* a, int64_t c);             // non-negative a, c a power of two
  Value* andC(Value* a, int64_t c);
  Value* cmpC(const char* pred, Value* a, int64_t c);
  Value* andMask(Value* a, Value* b);           // null means "all true"
  Value* laneDigit(const LayoutGeom& g, int d);
  Value* warpDigit(const LayoutGeom& g, int d);
  Value* threadBase(const LayoutGeom& g, int d);     // (warpDigit*tpw + laneDigit)*spt: scalar
  Value* regOffsets(const LayoutGeom& g, int d);     // rep*tile + i per register
  Value* unwrapped(const LayoutGeom& g, int d);      // threadBase + regOffsets (before mod)
  Value* coord(const LayoutGeom& g, int valueDim);   // the coordinate of every register
  // Row-major element index (in `shape`, over the dims of g's value) of every register.
  Value* linearIndex(const LayoutGeom& g, const Shape& shape);
  // True in the registers this thread is the first owner of (replicas masked off); nullptr
  // when nothing is replicated. `freeWarpDim`: a root dim whose warp digit is not required to
  // be 0 (reduce: every warp along the axis writes its own partial).
  Value* ownerMask(const LayoutGeom& g, int freeWarpDim = -1);
  Value* permuteRegs(Value* v, const std::vector<int64_t>& indices);

  // A `for` loop being lowered: the block op, the thread-level loop made for it, and the
  // pre-order indices of the loop and its last nested op.
  struct LoopFrame {
    const Op* blockFor = nullptr;
    Op* threadFor = nullptr;
    int64_t firstIndex = 0, lastIndex = 0;
  };
  // --- shared memory (SharedMemory.cpp): a buffer for the current block op; returns an i32
  // constant holding its base address (patched after allocation).
  Value* sharedBase(int64_t bytes, const std::string& purpose, int64_t align = 16);
  // The same, live for the whole of `loop` (its ops may not reuse the space).
  Value* sharedBaseForLoop(int64_t bytes, const std::string& purpose, const LoopFrame& loop, int64_t align = 16);
  Value* sharedAddr(Value* elementIndex, int elemBytes, Value* base);  // index*bytes + base
  // `vec` consecutive registers per access (their addresses consecutive and aligned: the caller's
  // promise, which the verifier and the executor check).
  Value* ldShared(Value* addr, DType dtype, Value* mask = nullptr, int64_t vec = 1);
  void stShared(Value* addr, Value* value, Value* mask = nullptr, int64_t vec = 1);
  void barrier();
  void dropTrailingBarriers(Region& body);  // LowerCore.cpp
  int64_t lastOpIndex() const;  // the index (curIndex_) of the source function's last op
  std::unordered_set<const Op*> userBarriers_;  // debug_barrier's: never dropped

  // --- op families
  void lowerLeafOrElementwise(const Op& op);   // LowerElementwise.cpp
  void lowerArange(const Op& op);
  void lowerBroadcastLike(const Op& op);       // broadcast, expand_dims, trans (any permutation)
  void lowerLoad(const Op& op);                // LowerMemory.cpp
  void lowerStore(const Op& op);
  int64_t checkedVec(const Op& op, const Type& valueType);
  void lowerAtomic(const Op& op);              // atomic_rmw, atomic_cas
  void lowerDebugBarrier(const Op& op);
  void lowerPrint(const Op& op);               // LowerDebug.cpp: device_print, device_assert
  void lowerAssert(const Op& op);
  std::vector<Value*> registerCoords(const Type& t);  // each register's tile coordinates, per dim
  void lowerReduce(const Op& op);              // LowerReduce.cpp
  void lowerArgmax(const Op& op);
  Value* combine(const std::string& kind, Value* a, Value* b);
  std::vector<int64_t> groupedOrder(const LayoutGeom& g, int axisRootDim, int64_t j) const;
  void lowerScan(const Op& op);                // LowerScan.cpp
  void lowerDot(const Op& op);                 // LowerDot.cpp
  void lowerDotMma(const Op& op, const MmaInstr& instr, bool tf32x3);  // ... on tensor cores (tf32x3: three mma per tile)
  void lowerDotWgmma(const Op& op, const MmaInstr& instr);  // ... as warpgroup MMAs (LowerWgmma.cpp)
  // Stages a dot's operands (LowerDot.cpp): an operand computed outside the loop the dot is in
  // once, before the loop, into a buffer live for the whole loop (`wgmma`: fenced for the async
  // proxy before its barrier), the other here; a null stage function skips that operand.
  struct DotStaging {
    int64_t aBytes = 0, bBytes = 0, align = 16;
    std::string aWhat, bWhat;
    std::function<void(Value*)> stageA, stageB;
    bool fenceAsync = false;
  };
  // The bases of a and b; stagedInLoop: some operand was staged here, in the loop body (its
  // buffer may be reused only after a barrier).
  struct DotBases {
    Value* a = nullptr;
    Value* b = nullptr;
    bool stagedInLoop = false;
  };
  DotBases stageDotOperands(const Op& op, const DotStaging& st);
  std::vector<int64_t> mmaFragmentRegs(const Type& t, const MmaInstr& instr, int W0, int64_t w1, int64_t mTiles, const char* what);
  // The 16-byte-chunk XOR swizzle of a [rows][rowLen] shared buffer (LowerDot.cpp): chunk c of
  // row r is placed at chunk c ^ ((r / rowsPerLine) % chunksPerLine) of its row.
  struct Swizzle {
    int64_t rowLen = 0, elems = 0;  // elements per row and per 16-byte chunk
    int64_t rowsPerLine = 1, chunksPerLine = 1;  // rows per 128-byte line; chunks it XORs over
    static std::optional<Swizzle> of(int64_t rowLen, int bytes);  // none unless rowLen * bytes is a power of two >= 16
  };
  Value* swizzleXor(const Swizzle& sw, Value* row);  // the chunk XOR of a row
  // colBlock > 0: the columns are split into blocks of colBlock elements, block j at
  // j * blockStride elements (a wgmma operand's rows longer than its 128-byte swizzle atom);
  // rowMap (may be empty) renumbers the rows first.
  void stageOperand(const Value* operand, Value* base, int rowDim, int64_t stride, const Swizzle* swizzle = nullptr,
                    int64_t colBlock = 0, int64_t blockStride = 0, const std::function<Value*(Value*)>& rowMap = {});
  // Where a tensor-core dot's operand goes in shared memory: [rows][stride] with rowDim the
  // tile dim along the rows, swizzled, split in column blocks, rows renumbered (stageOperand's
  // arguments), in a buffer of `bytes` aligned to `align`. tensorCoreStaging: the staging of
  // operand 0 (a) or 1 (b) of a dot that lowerDotMma / lowerDotWgmma lowers; nullopt for any
  // other dot, and for an operand that is not staged (a chained dot's a in registers).
  struct OperandStaging {
    int rowDim = 0;
    int64_t stride = 0;
    std::optional<Swizzle> swizzle;
    int64_t colBlock = 0, blockStride = 0;
    std::function<Value*(Value*)> rowMap;
    int64_t bytes = 0, align = 16;
    std::string what;
  };
  std::optional<OperandStaging> tensorCoreStaging(const Op& dot, int operand);
  std::optional<OperandStaging> fmaStaging(const Op& dot, int operand);      // form B, 2-D (LowerDot.cpp)
  std::optional<OperandStaging> dotStaging(const Op& dot, int operand);      // either of the two
  std::optional<OperandStaging> mmaStaging(const Op& dot, int operand);     // LowerDot.cpp
  std::optional<OperandStaging> wgmmaStaging(const Op& dot, int operand);                          // LowerWgmma.cpp
  static bool wgmmaBKMajor(const Type& b);                                                          // LowerWgmma.cpp
  // A chained dot's a in registers (mma's accumulator layout): the m16n8k16 A fragment of m-tile
  // t, k step s is the C fragments of a's n-tiles 2s and 2s + 1 (k 16s..16s+7, then 16s+8..16s+15),
  // c0..c3 each: the ISA's a0..a7. pReg: mmaFragmentRegs of a, K: a's columns. LowerDot.cpp.
  Value* chainedAFragment(Value* a, const std::vector<int64_t>& pReg, int64_t K, int64_t t, int64_t s);
  void stageOperand(const Value* operand, Value* base, const OperandStaging& s);
  // Each register's shared byte address under the staging (and the first-owner mask).
  Value* stagedAddresses(const Type& t, Value* base, int rowDim, int64_t stride, const Swizzle* swizzle,
                         int64_t colBlock, int64_t blockStride, const std::function<Value*(Value*)>& rowMap);

  // --- load rings (LowerRing.cpp): a pipelined loop's loads of tensor-core dot operands copied
  // by cp_async straight into a ring of shared-memory slots (the contract is at its top).
  struct Ring {
    const Op* dot = nullptr;
    int operand = 0;                      // which dot operand it feeds
    const Value* head = nullptr;          // the carried value the dot reads (x_i)
    std::vector<size_t> chain;            // the block loop's carried indices (1-based body args)
    std::vector<const Op*> firstLoads;    // before the loop: iterations 0 .. L-1
    const Op* nextLoad = nullptr;         // in the body: iteration i + L
    OperandStaging staging;
    int64_t slotBytes = 0;
    bool elementwise = false;             // one 4-byte copy per register (its rows run across the staged rows)
    Value* base = nullptr;                // the ring's shared buffer (allocated at its first load)
    size_t buffer = 0;                    // its index in buffers_
  };
  struct LoopRings {
    std::vector<Ring> rings;
    int64_t ahead = 1, slots = 2;         // L and R
    std::vector<const Op*> inFlightDots;  // wgmma dots left in flight across iterations (wait 1)
    Value* slot = nullptr;                // the thread loop's slot counter (iteration % R)
    std::vector<const Op*> deferred;      // this body's next loads, issued after the first ring dot's barrier
    bool issued = false;
    const Ring* ringOf(const Value* operand) const;
  };
  void planRings();
  std::optional<Ring> ringFrom(const Op& loop, const Op& dot, int operand);
  bool lowerRingLoad(const Op& load);   // true when `load` is a ring's (it is then lowered)
  void copyToSlot(const Ring& ring, const Op& load, Value* slotIndex);
  LoopRings* ringsOf(const Op& blockFor);
  LoopRings* ringsOfDot(const Op& dot);   // the rings of the loop whose body the dot is in
  Value* slotIndexAhead(const LoopRings& lr, int64_t ahead);  // (slot + ahead) % R
  std::unordered_map<const Op*, LoopRings> loopRings_;
  std::unordered_map<const Op*, const Op*> ringLoadLoop_;  // a ring load -> its loop

  // What the FMA k loop loads (the addresses at k = 0), and how the loaded values map to the
  // accumulator's registers (empty: one value per register, in register order).
  struct FmaOperands {
    Value* aAddr = nullptr;
    Value* bAddr = nullptr;
    std::vector<int64_t> aIdx, bIdx;
    int64_t aVec = 1, bVec = 1;  // A's and B's vector widths
  };
  FmaOperands distinctFmaOperands(const Op& op, const LayoutGeom& gc, Value* aBase, Value* bBase);
  void lowerConvertLayout(const Op& op);       // LowerConvert.cpp
  // Moves `regs` (a tile of srcType) into dstType's registers through shared memory; dst dim
  // j reads source dim srcDimOfDst[j] (-1: none; source dims of extent 1 read index 0).
  Value* exchangeViaShared(Value* regs, const Type& srcType, const Type& dstType,
                           const std::vector<int>& srcDimOfDst, const std::string& purpose);
  // The general form: the source goes to shared memory at its row-major index; destination
  // register r reads index readOffset + sum_j coord_j(r) * readStrides[j].
  Value* exchangeLinear(Value* regs, const Type& srcType, const Type& dstType,
                        const std::vector<int64_t>& readStrides, int64_t readOffset, const std::string& purpose);
  // The row padding (in elements) of a 2-D conversion's [R][C + pad] buffer with the fewest
  // shared-memory wavefronts (LowerConvert.cpp).
  int64_t exchangeRowPad(const Type& srcType, const Type& dstType) const;
  // The widest vector (a power of two, at most 16 bytes) in which each thread's consecutive
  // registers of `t` sit at consecutive, aligned indices offset + sum_j coord_j * strides[j] of a
  // 16-byte-aligned buffer; with `stores`, the registers of a group are also all owners (ownerMask)
  // or all replicas, so one predicate covers the group (LowerConvert.cpp).
  int64_t exchangeVec(const Type& t, const std::vector<int64_t>& strides, int64_t offset, bool stores) const;
  // The read half (after the writes and their barrier): ld_shared, then a barrier.
  Value* readExchanged(Value* base, const Type& dstType, const std::vector<int64_t>& readStrides, int64_t readOffset);
  void lowerReshape(const Op& op);             // LowerShape.cpp
  void lowerJoin(const Op& op);
  void lowerSplit(const Op& op);
  void lowerFor(const Op& op);                 // LowerControl.cpp
  void lowerYield(const Op& op);
  void lowerIf(const Op& op);
  void lowerWhile(const Op& op);

  const Function& src_;
  LowerOptions options_;
  std::unique_ptr<Function> dst_;
  Builder b_;
  std::unordered_map<const Value*, Value*> map_;
  Value* lane_ = nullptr;
  Value* warp_ = nullptr;
  Value* threadId_ = nullptr;
  const Op* cur_ = nullptr;  // the block op being lowered (locations, shared-buffer owners)
  int64_t curIndex_ = -1;    // its pre-order index
  int64_t nextIndex_ = 0;
  std::vector<SharedBuffer> buffers_;
  std::vector<Op*> baseConsts_;  // buffers_[i]'s base-address constant
  std::vector<LoopFrame> loops_;  // the `for` loops being lowered, innermost last
  // The innermost loop when `op` sits at the top of its body, else nullptr.
  const LoopFrame* enclosingLoop(const Op& op) const;
  // True when `v` is computed outside `loop` (by an op or region not nested in it).
  static bool definedOutside(const Value* v, const Op& loop);
};

}  // namespace tl::lower
