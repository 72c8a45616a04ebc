// The common IR: SSA values, operations with source locations, nested regions, kernels.
//
// One data structure serves every IR level (block IR now; thread-mapped IR adds its own master
// op list beside BlockOps.def). An op is a plain struct — kind, operands, results, attributes,
// regions, location — in the spirit of MLIR's generic form; what each kind requires is written
// once in its master list and checked by ir/Verifier.cpp.
//
//   Function  (a kernel: name, parameters, the constexpr values it was specialized for)
//    └ Region body       (arguments = the kernel parameters)
//       └ Op ...          (program_id, load, for, ...)
//          └ Region ...   (a for's body, an if's branches; arguments = iv and carried values)
//
// Ownership: a Region owns its ops and its arguments; an Op owns its results and regions.
// Values are referenced by raw pointer; a pass that removes an op must first replace its uses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/Diagnostics.h"
#include "ir/Type.h"

namespace tl {

// ---------------------------------------------------------------------------------------------
// Op kinds: one enum over every level's master list.
enum class OpKind : uint16_t {
#define BLOCK_OP(Kind, Mnemonic, Category, Levels) Kind,
#include "ir/BlockOps.def"
#define THREAD_OP(Kind, Mnemonic, Category) Kind,
#include "ir/ThreadOps.def"
  NumKinds
};

enum class OpCategory {
  Leaf,         // no operands: constants, ids, arange
  Shape,        // moves elements without computing: splat, broadcast, expand_dims
  Elementwise,  // result element i depends only on operand elements i
  Memory,       // load / store
  Reduction,    // reduce, argmax, dot
  Control,      // ops with regions: for, if, while
  Terminator,   // yield, return
  Warp,         // communication between the lanes of a warp: shuffles
  Sync,         // barriers
  Debug,        // device_print / device_assert and their thread ops: no results, never removed or merged
};

enum class IRLevel {
  Block,   // ops act on whole tiles
  Thread,  // ops are what one thread runs (the thread-mapped IR issue)
};

// Which levels an op kind may appear in.
enum class OpLevels {
  Block,   // block IR only
  Thread,  // thread IR only
  Both,    // both (constants, elementwise math, control flow)
};

struct OpInfo {
  const char* mnemonic;
  OpCategory category;
  OpLevels levels;
  bool allowedIn(IRLevel level) const {
    return levels == OpLevels::Both || (level == IRLevel::Block) == (levels == OpLevels::Block);
  }
};

const OpInfo& opInfo(OpKind kind);
inline const char* mnemonic(OpKind kind) { return opInfo(kind).mnemonic; }
std::optional<OpKind> opKindFromMnemonic(std::string_view mnemonic);

// ---------------------------------------------------------------------------------------------
// Attributes: small named constants on an op (axis = 0, pred = "lt", value = -inf,
// indices = [3, 0, 1, 2]).
using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

struct NamedAttr {
  std::string name;
  Attr value;
  bool operator==(const NamedAttr&) const = default;
};

class Op;
class Region;

// An SSA value: the result of an op, or an argument of a region.
class Value {
 public:
  Type type;
  std::string name;         // hint for printing (the source variable name), may be empty
  Op* def = nullptr;        // defining op, or nullptr for a region argument
  Region* owner = nullptr;  // for region arguments: the region
  unsigned index = 0;       // result number / argument number

  bool isRegionArg() const { return def == nullptr; }
};

class Region {
 public:
  explicit Region(Op* parent = nullptr) : parentOp(parent) {}

  Op* parentOp;  // nullptr for a function body
  std::vector<std::unique_ptr<Value>> args;
  std::vector<std::unique_ptr<Op>> ops;

  Value* addArg(Type type, std::string name = {});
  Value* arg(size_t i) const { return args.at(i).get(); }
  // The last op (a terminator in verified IR), or nullptr when empty.
  Op* terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
};

class Op {
 public:
  Op(OpKind kind, Loc loc) : kind(kind), loc(loc) {}

  OpKind kind;
  Loc loc;  // where in the .tl source this op came from
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::vector<NamedAttr> attrs;  // kept in insertion order (printing is deterministic)
  std::vector<std::unique_ptr<Region>> regions;
  Region* parent = nullptr;  // the region holding this op

  const OpInfo& info() const { return opInfo(kind); }
  Value* operand(size_t i) const { return operands.at(i); }
  size_t numOperands() const { return operands.size(); }
  Value* result(size_t i = 0) const { return results.at(i).get(); }
  size_t numResults() const { return results.size(); }
  Region& region(size_t i) const { return *regions.at(i); }

  Value* addResult(Type type, std::string name = {});
  Region& addRegion();

  bool hasAttr(std::string_view name) const;
  const Attr* attr(std::string_view name) const;
  int64_t intAttr(std::string_view name) const;      // throws IRError when absent/wrong kind
  double floatAttr(std::string_view name) const;     // accepts an int attr too
  const std::string& strAttr(std::string_view name) const;
  const std::string* strAttrIf(std::string_view name) const;  // nullptr when absent or not a string
  const std::vector<int64_t>& intsAttr(std::string_view name) const;
  void setAttr(std::string name, Attr value);
};

// True for ops that must stay even when their results are unused: stores, atomics, barriers,
// terminators, prints and assertions, every while (it may never end), and for/if whose regions
// contain any of those.
bool hasSideEffects(const Op& op);

// A kernel parameter as the user declared it.
struct Param {
  enum class Kind {
    Pointer,   // a buffer pointer: region arg of type ptr<dtype>
    Scalar,    // a runtime scalar: region arg of scalar type
  };
  std::string name;
  Kind kind = Kind::Scalar;
  Loc loc;
};

// The bounds ptxas puts on .maxnreg (below 24 it raises the count to 24; above 255 it ignores it).
constexpr int kMinMaxRegisters = 24;
constexpr int kMaxMaxRegisters = 255;

// A kernel specialized for one set of argument dtypes and constexpr values.
class Function {
 public:
  IRLevel level = IRLevel::Block;  // which master op list its ops come from
  int numWarps = 0;                // thread IR: warps per block (block IR with layouts: the layouts' warps)
  int64_t sharedBytes = 0;         // thread IR: shared memory per block, in bytes
  int maxRegisters = 0;            // registers per thread ptxas may use (PTX .maxnreg; the launch's
                                   // maxnreg, as Triton's), 0: ptxas chooses
  std::string name;
  Loc loc;
  std::shared_ptr<const SourceFile> source;  // for diagnostics; may be null (parsed IR text)
  std::vector<Param> params;                  // runtime params, in order; body.args match them
  std::vector<std::pair<std::string, int64_t>> constexprs;  // the specialization, in order
  Region body;

  Function() : body(nullptr) {}
  Value* param(size_t i) const { return body.arg(i); }
};

// ---------------------------------------------------------------------------------------------
// Traversal and rewriting helpers.

// Visits every op in `region` and nested regions, pre-order (an op before its regions' ops).
void walk(const Region& region, const std::function<void(Op&)>& fn);
// Replaces every use of `from` by `to` in `region` and everything nested in it.
void replaceAllUsesWith(Region& region, Value* from, Value* to);
// Number of uses of `v` inside `region` (recursively).
size_t countUses(const Region& region, const Value* v);
// A new function with fn's header — level, num_warps, shared bytes, name, location, source,
// params, constexprs — and an empty body (no arguments, no ops). Lowerings start from it.
std::unique_ptr<Function> cloneHeader(const Function& fn);
// Deep copy of a function (values remapped).
std::unique_ptr<Function> cloneFunction(const Function& fn);

}  // namespace tl
