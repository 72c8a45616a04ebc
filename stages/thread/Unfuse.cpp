// The unfused lowering (contract and rules: Unfuse.h) and the compulsory-traffic count used to
// compare it with the fused kernel.
//
// How it works, in three steps:
//   1. plan():  classify every top-level op (kernel op / recomputed / store / return), decide
//               where each store goes and which kernel results other kernels need (those get a
//               scratch buffer);
//   2. KernelBuilder: for each kernel, build a fresh Function that recomputes the cheap values it
//               needs, loads the materialized ones from scratch, computes its op (or clones its
//               loop whole) and stores what later kernels need;
//   3. kernelTraffic(): count each kernel's loads and stores per buffer, capped at buffer size.
#include "thread/Unfuse.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <optional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "runtime/Memory.h"

namespace tl {
namespace {

// ---------------------------------------------------------------------------------------------
// Small IR helpers.

// Values that ops nested in `op`'s regions (or `op` itself) use but that are defined outside it,
// in first-use order.
std::vector<Value*> inputsOf(const Op& op) {
  std::vector<Value*> out;
  std::unordered_set<const Value*> inside, seen;
  auto use = [&](Value* v) {
    if (!inside.count(v) && seen.insert(v).second) out.push_back(v);
  };
  for (Value* v : op.operands) use(v);
  std::function<void(const Region&)> region = [&](const Region& r) {
    for (const auto& a : r.args) inside.insert(a.get());
    for (const auto& o : r.ops) {
      for (Value* v : o->operands) use(v);
      for (const auto& res : o->results) inside.insert(res.get());
      for (const auto& sub : o->regions) region(*sub);
    }
  };
  for (const auto& r : op.regions) region(*r);
  return out;
}

bool containsKind(const Op& op, OpKind kind) {
  bool found = false;
  for (const auto& r : op.regions) walk(*r, [&](Op& o) { found |= o.kind == kind; });
  return found || op.kind == kind;
}

// Which pointer parameter a pointer value points into: its index in fn.params, kUnknown when it
// cannot be told statically, kCycle while following a loop-carried pointer back to itself.
constexpr int kUnknown = -1;
constexpr int kCycle = -2;

int combineBuffers(int a, int b) {
  if (a == kCycle) return b;
  if (b == kCycle) return a;
  return a == b ? a : kUnknown;
}

int traceBuffer(const Function& fn, const Value* v, std::set<const Value*>& visiting) {
  if (!visiting.insert(v).second) return kCycle;
  int result = kUnknown;
  if (v->isRegionArg()) {
    const Region* owner = v->owner;
    if (owner == &fn.body) {
      result = static_cast<int>(v->index);
    } else if (owner && owner->parentOp && owner->parentOp->kind == OpKind::For && v->index >= 1) {
      // A loop-carried pointer: where it starts and what the body yields back must agree.
      const Op& forOp = *owner->parentOp;
      size_t k = v->index - 1;
      result = traceBuffer(fn, forOp.operand(3 + k), visiting);
      if (const Op* y = owner->terminator(); y && k < y->numOperands())
        result = combineBuffers(result, traceBuffer(fn, y->operand(k), visiting));
    }
  } else {
    const Op& d = *v->def;
    switch (d.kind) {
      case OpKind::AddPtr:
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::ConvertLayout:
        result = traceBuffer(fn, d.operand(0), visiting);
        break;
      case OpKind::Select:
        result = combineBuffers(traceBuffer(fn, d.operand(1), visiting), traceBuffer(fn, d.operand(2), visiting));
        break;
      case OpKind::For: {
        const Region& body = d.region(0);
        result = traceBuffer(fn, body.arg(v->index + 1), visiting);
        break;
      }
      case OpKind::If: {
        result = kCycle;
        for (const auto& r : d.regions)
          if (const Op* y = r->terminator(); y && v->index < y->numOperands())
            result = combineBuffers(result, traceBuffer(fn, y->operand(v->index), visiting));
        break;
      }
      default:
        break;
    }
  }
  visiting.erase(v);
  return result;
}

int bufferOf(const Function& fn, const Value* ptr) {
  std::set<const Value*> visiting;
  int b = traceBuffer(fn, ptr, visiting);
  return b < 0 ? kUnknown : b;
}

std::string kernelSuffix(const Op& op) {
  std::string m = mnemonic(op.kind);
  if (op.kind == OpKind::Reduce) return op.strAttr("kind");  // "max", "sum": what PyTorch calls it
  return m;
}

std::string locText(const Function& fn, Loc loc) {
  std::string file = fn.source ? fn.source->path() : std::string();
  if (auto slash = file.find_last_of('/'); slash != std::string::npos) file = file.substr(slash + 1);
  std::ostringstream os;
  if (!file.empty()) os << file << ":";
  os << loc.line << ":" << loc.col;
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Step 1: the plan.

enum class Role {
  Recompute,  // re-created by every kernel that needs it
  Kernel,     // computed by its own kernel
  Store,      // a store: joins its value's kernel or gets its own (decided in plan())
  Return,     // the body's terminator
};

struct KernelPlan {
  const Op* root = nullptr;               // the op it computes (a store for a copy kernel)
  std::vector<const Op*> stores;          // original stores that joined this kernel
  std::vector<const Value*> materialized; // root results stored to scratch
  std::string name;
};

struct ScratchBuffer {
  std::string param;
  Type ptrType;       // ptr<dtype>
  BufferSpec spec;
};

struct Plan {
  std::unordered_map<const Op*, Role> role;
  std::unordered_map<const Op*, int> kernelOf;              // Kernel-role ops and stores
  std::unordered_map<const Value*, size_t> scratchOf;       // materialized value -> scratch index
  std::vector<KernelPlan> kernels;
  std::vector<ScratchBuffer> scratch;
  int64_t programs = 1;
};

class Planner {
 public:
  Planner(const Function& fn, const LaunchConfig& launch) : fn_(fn), launch_(launch) {}

  Plan run() {
    plan_.programs = launch_.grid[0] * launch_.grid[1] * launch_.grid[2];
    findHazards();
    for (const auto& op : fn_.body.ops) classify(*op);
    assignKernels();
    chooseMaterialized();
    return std::move(plan_);
  }

 private:
  const Function& fn_;
  const LaunchConfig& launch_;
  Plan plan_;
  std::unordered_set<const Value*> data_;  // top-level values that depend on a load
  std::set<int> loaded_, stored_;
  bool strict_ = false;          // stores stay in place, in their own kernels
  bool unknownStore_ = false;    // a store whose buffer is unknown: no load may be re-read
  std::unordered_map<const Value*, int> depsMemo_;
  std::unordered_map<const Value*, std::vector<const Value*>> needsMemo_;

  bool isData(const Value* v) const { return data_.count(v) != 0; }

  // Which buffers are loaded and stored, from where: decides whether stores may move.
  void findHazards() {
    std::map<int, std::set<const Op*>> storeSites;  // buffer -> top-level ops storing to it
    for (const auto& top : fn_.body.ops) {
      auto visit = [&](Op& o) {
        if (o.kind == OpKind::Load) loaded_.insert(bufferOf(fn_, o.operand(0)));
        if (o.kind == OpKind::Store) {
          int b = bufferOf(fn_, o.operand(0));
          if (b == kUnknown) unknownStore_ = true;
          stored_.insert(b);
          storeSites[b].insert(top.get());
        }
      };
      visit(*top);
      for (const auto& r : top->regions) walk(*r, visit);
    }
    strict_ = unknownStore_ || loaded_.count(kUnknown);
    for (int b : stored_) strict_ |= loaded_.count(b) != 0;
    for (const auto& [b, sites] : storeSites) strict_ |= sites.size() > 1;
  }

  void classify(const Op& op) {
    Role role = Role::Recompute;
    std::vector<Value*> inputs = inputsOf(op);
    bool dataIn = std::any_of(inputs.begin(), inputs.end(), [&](Value* v) { return isData(v); });
    bool dataOut = dataIn;
    switch (op.kind) {
      case OpKind::Return:
        role = Role::Return;
        break;
      case OpKind::Store:
        role = Role::Store;
        break;
      case OpKind::AtomicRMW:
      case OpKind::AtomicCAS:
        // A read-modify-write of memory: a kernel of its own, run exactly once (never
        // recomputed), its old values data.
        dataOut = true;
        role = Role::Kernel;
        break;
      case OpKind::For:
      case OpKind::If:
      case OpKind::While: {
        bool loads = containsKind(op, OpKind::Load) || containsKind(op, OpKind::AtomicRMW) ||
                     containsKind(op, OpKind::AtomicCAS);
        dataOut = dataIn || loads;
        if (dataOut || hasSideEffects(op)) role = Role::Kernel;
        break;
      }
      case OpKind::Load: {
        dataOut = true;
        int b = bufferOf(fn_, op.operand(0));
        bool reread = !dataIn && b != kUnknown && !stored_.count(b) && !unknownStore_;
        role = reread ? Role::Recompute : Role::Kernel;
        break;
      }
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::ConvertLayout:
      case OpKind::AddPtr:
        break;  // views and address arithmetic: always recomputed
      default:
        // Computing ops on data are kernels, except those producing pointers (a select between
        // two pointer tiles): pointers cannot live in scratch, so they are recomputed.
        if (dataOut && op.numResults() > 0 && !op.result()->type.isPtr) role = Role::Kernel;
        break;
    }
    if (dataOut)
      for (const auto& r : op.results) data_.insert(r.get());
    plan_.role[&op] = role;
  }

  // The last kernel whose result computing `v` needs (-1: none: params and recomputed values).
  int deps(const Value* v) {
    if (v->isRegionArg()) return -1;
    if (auto it = depsMemo_.find(v); it != depsMemo_.end()) return it->second;
    const Op* d = v->def;
    int k = -1;
    if (plan_.role.at(d) == Role::Kernel) {
      k = plan_.kernelOf.at(d);
    } else {
      for (Value* in : inputsOf(*d)) k = std::max(k, deps(in));
    }
    depsMemo_[v] = k;
    return k;
  }

  void newKernel(const Op& root) {
    int k = static_cast<int>(plan_.kernels.size());
    KernelPlan kp;
    kp.root = &root;
    kp.name = fn_.name + "." + std::to_string(k + 1) + "_" + kernelSuffix(root);
    plan_.kernels.push_back(std::move(kp));
    plan_.kernelOf[&root] = k;
  }

  void assignKernels() {
    for (const auto& op : fn_.body.ops) {
      Role role = plan_.role.at(op.get());
      if (role == Role::Kernel) {
        newKernel(*op);
      } else if (role == Role::Store) {
        // Join the kernel computing the stored value when everything else the store needs is
        // ready by then and moving the store earlier cannot change what any load sees.
        const Value* value = op->operand(1);
        int home = -1;
        if (!strict_ && !value->isRegionArg() && plan_.role.at(value->def) == Role::Kernel) {
          home = plan_.kernelOf.at(value->def);
          for (size_t i = 0; i < op->numOperands(); ++i)
            if (i != 1 && deps(op->operand(i)) > home) home = -1;
        }
        if (home >= 0) {
          plan_.kernels[home].stores.push_back(op.get());
          plan_.kernelOf[op.get()] = home;
        } else {
          newKernel(*op);
        }
      }
    }
  }

  // Kernel results that computing `v` inside a kernel reads (through recomputed ops).
  const std::vector<const Value*>& needs(const Value* v) {
    if (auto it = needsMemo_.find(v); it != needsMemo_.end()) return it->second;
    std::vector<const Value*> out;
    if (!v->isRegionArg()) {
      const Op* d = v->def;
      if (plan_.role.at(d) == Role::Kernel) {
        out.push_back(v);
      } else {
        for (Value* in : inputsOf(*d))
          for (const Value* n : needs(in))
            if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
    }
    return needsMemo_[v] = std::move(out);
  }

  void chooseMaterialized() {
    std::set<const Value*> chosen;
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      KernelPlan& kp = plan_.kernels[k];
      std::vector<const Op*> ops{kp.root};
      ops.insert(ops.end(), kp.stores.begin(), kp.stores.end());
      for (const Op* op : ops)
        for (Value* in : inputsOf(*op))
          for (const Value* n : needs(in))
            if (plan_.kernelOf.at(n->def) != static_cast<int>(k)) chosen.insert(n);
    }
    // Scratch buffers in kernel order, results in order.
    for (KernelPlan& kp : plan_.kernels)
      for (const auto& r : kp.root->results)
        if (chosen.count(r.get())) addScratch(kp, r.get());
  }

  void addScratch(KernelPlan& kp, const Value* v) {
    const Op& op = *v->def;
    if (v->type.isPtr)
      throw IRError(op.loc, "unfuse: the pointer '" + v->name + "' computed by this " + mnemonic(op.kind) +
                                " is used by a later op; pointers cannot be materialized in a scratch buffer");
    int k = plan_.kernelOf.at(&op);
    std::string base = "tmp" + std::to_string(k + 1) + "_" + kernelSuffix(op);
    if (op.numResults() > 1) base += "_r" + std::to_string(v->index);
    std::string name = base;
    auto taken = [&](const std::string& n) {
      for (const auto& p : fn_.params)
        if (p.name == n) return true;
      return launch_.buffer(n) != nullptr;
    };
    while (taken(name)) name += "_";

    ScratchBuffer sb;
    sb.param = name;
    sb.ptrType = Type::ptr(v->type.dtype);
    sb.spec.param = name;
    sb.spec.dtype = v->type.dtype;
    sb.spec.shape = {plan_.programs};
    for (int64_t d : v->type.shape) sb.spec.shape.push_back(d);
    sb.spec.fill = Fill::Zeros;
    sb.spec.output = false;
    sb.spec.loc = op.loc;
    uint64_t bytes = uint64_t(plan_.programs) * uint64_t(v->type.numel()) * uint64_t(dtypeBytes(v->type.dtype));
    if (plan_.programs <= 0 || bytes > Memory::kMaxBufferBytes)
      throw std::runtime_error("unfuse: the scratch buffer for line " + std::to_string(op.loc.line) + " (" +
                               mnemonic(op.kind) + ", " + std::to_string(plan_.programs) + " programs x " +
                               v->type.str() + ") would take " + std::to_string(bytes) +
                               " bytes, over the interpreters' limit of " + std::to_string(Memory::kMaxBufferBytes));
    plan_.scratchOf[v] = plan_.scratch.size();
    plan_.scratch.push_back(std::move(sb));
    kp.materialized.push_back(v);
  }
};

// ---------------------------------------------------------------------------------------------
// Step 2: building one kernel.

class KernelBuilder {
 public:
  KernelBuilder(const Function& src, const Plan& plan, int k, const std::array<int64_t, 3>& grid)
      : src_(src), plan_(plan), k_(k), grid_(grid) {}

  std::unique_ptr<Function> build() {
    const KernelPlan& kp = plan_.kernels[k_];
    auto fn = cloneHeader(src_);
    fn->name = kp.name;
    for (size_t i = 0; i < src_.params.size(); ++i)
      map_[src_.param(i)] = fn->body.addArg(src_.param(i)->type, src_.param(i)->name);
    for (const ScratchBuffer& sb : plan_.scratch) {
      fn->params.push_back(Param{sb.param, Param::Kind::Pointer, sb.spec.loc});
      scratchArgs_.push_back(fn->body.addArg(sb.ptrType, sb.param));
    }
    fn_ = fn.get();
    b_.setInsertionPointToEnd(&fn->body);
    rootLoc_ = kp.root->loc;

    cloneTopOp(*kp.root);
    for (const Op* st : kp.stores) cloneTopOp(*st);
    b_.setLoc(rootLoc_);
    for (const Value* v : kp.materialized) {
      Value* ptr = scratchAddress(v);
      b_.store(ptr, map_.at(v));
    }
    b_.setLoc(rootLoc_);
    b_.ret();
    if (std::string err = verifyFunction(*fn); !err.empty())
      throw IRError(rootLoc_, "unfuse: kernel " + kp.name + " does not verify:\n" + err);
    return fn;
  }

 private:
  const Function& src_;
  const Plan& plan_;
  int k_;
  std::array<int64_t, 3> grid_;  // the launch's grid
  Function* fn_ = nullptr;
  Builder b_;
  Loc rootLoc_;
  std::unordered_map<const Value*, Value*> map_;
  std::vector<Value*> scratchArgs_;
  Value* program_ = nullptr;                      // the linear program id, built on first use
  std::map<Shape, Value*> offsets_;                // p * numel(S) + row-major index, per shape S

  // The kernel's copy of source value `v`: recomputed, loaded from scratch, or already there.
  Value* get(const Value* v) {
    if (auto it = map_.find(v); it != map_.end()) return it->second;
    if (v->isRegionArg()) throw IRError(rootLoc_, "unfuse: value '" + v->name + "' is not a kernel parameter");
    const Op& d = *v->def;
    Role role = plan_.role.at(&d);
    if (role == Role::Kernel && plan_.kernelOf.at(&d) != k_) {
      auto s = plan_.scratchOf.find(v);
      if (s == plan_.scratchOf.end())
        throw IRError(d.loc, "unfuse: internal error: '" + v->name + "' was not materialized");
      b_.setLoc(rootLoc_);
      Value* loaded = b_.load(scratchAddress(v));
      loaded->name = v->name;
      return map_[v] = loaded;
    }
    cloneTopOp(d);
    return map_.at(v);
  }

  // Clones a top-level op of the source at the end of the kernel body, its inputs first.
  void cloneTopOp(const Op& op) {
    std::vector<Value*> inputs = inputsOf(op);
    for (Value* in : inputs) get(in);
    if (op.regions.empty()) {
      std::vector<Value*> operands;
      for (Value* o : op.operands) operands.push_back(map_.at(o));
      std::vector<Type> types;
      for (const auto& r : op.results) types.push_back(r->type);
      b_.setLoc(op.loc);
      Op* copy = b_.create(op.kind, operands, types, op.attrs);
      for (size_t i = 0; i < op.numResults(); ++i) {
        copy->result(i)->name = op.result(i)->name;
        map_[op.result(i)] = copy->result(i);
      }
      return;
    }
    // A for or if: copied whole, with everything inside it.
    fn_->body.ops.push_back(cloneOp(op, fn_->body));
    b_.setInsertionPointToEnd(&fn_->body);
    if (auto err = verifyOp(*fn_->body.ops.back())) throw IRError(op.loc, "unfuse: " + *err);
  }

  std::unique_ptr<Op> cloneOp(const Op& op, Region& dst) {
    auto copy = std::make_unique<Op>(op.kind, op.loc);
    copy->attrs = op.attrs;
    copy->parent = &dst;
    for (Value* o : op.operands) copy->operands.push_back(map_.at(o));
    for (const auto& r : op.results) map_[r.get()] = copy->addResult(r->type, r->name);
    for (const auto& r : op.regions) {
      Region& nr = copy->addRegion();
      for (const auto& a : r->args) map_[a.get()] = nr.addArg(a->type, a->name);
      for (const auto& inner : r->ops) nr.ops.push_back(cloneOp(*inner, nr));
    }
    return copy;
  }

  // pid0 + g0 * (pid1 + g1 * pid2), skipping axes of size 1 at the top.
  Value* programIndex() {
    if (program_) return program_;
    b_.setLoc(rootLoc_);
    int top = 2;
    while (top > 0 && grid_[top] == 1) --top;
    Value* p = b_.programId(top);
    for (int axis = top - 1; axis >= 0; --axis) {
      p = b_.binary(OpKind::Mul, p, b_.numPrograms(axis));
      p = b_.binary(OpKind::Add, p, b_.programId(axis));
    }
    p->name = "program";
    return program_ = p;
  }

  // p * numel(shape) + the row-major index of every element of a tile of `shape`: where this
  // program's tile lives in a scratch buffer (the same offsets for every buffer of that shape).
  Value* scratchOffsets(const Shape& shape) {
    if (auto it = offsets_.find(shape); it != offsets_.end()) return it->second;
    Value* p = programIndex();
    b_.setLoc(rootLoc_);
    Type idxType = Type::tile(DType::I32, shape);
    Value* sum = nullptr;
    int64_t stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      Value* t = b_.arange(0, shape[d]);
      for (int a = 0; a < d; ++a) t = b_.expandDims(t, 0);
      for (int a = d + 1; a < static_cast<int>(shape.size()); ++a) t = b_.expandDims(t, a);
      if (t->type.shape != shape) t = b_.broadcast(t, shape);
      if (stride != 1) t = b_.binary(OpKind::Mul, t, b_.constInt(idxType, stride));
      sum = sum ? b_.binary(OpKind::Add, sum, t) : t;
      stride *= shape[d];
    }
    Value* first = b_.binary(OpKind::Mul, p, b_.constInt(Type::scalar(DType::I32), stride));
    return offsets_[shape] = b_.binary(OpKind::Add, b_.splat(first, shape), sum);
  }

  // Pointer(s) to where `v` lives in its scratch buffer, for this program.
  Value* scratchAddress(const Value* v) {
    Value* base = scratchArgs_.at(plan_.scratchOf.at(v));
    if (v->type.isScalar()) {
      Value* p = programIndex();
      b_.setLoc(rootLoc_);
      return b_.addptr(base, p);
    }
    Value* offs = scratchOffsets(v->type.shape);
    b_.setLoc(rootLoc_);
    return b_.addptr(b_.splat(base, v->type.shape), offs);
  }
};

// One line per kernel: what it computes and which buffers it reads and writes.
std::string describe(const Function& src, const Function& kernel, const KernelPlan& kp) {
  std::vector<std::string> reads, writes;
  auto add = [](std::vector<std::string>& list, const std::string& s) {
    if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
  };
  walk(kernel.body, [&](Op& op) {
    const bool atomic = op.kind == OpKind::AtomicRMW || op.kind == OpKind::AtomicCAS;  // reads and writes
    if (op.kind != OpKind::Load && op.kind != OpKind::Store && !atomic) return;
    int b = bufferOf(kernel, op.operand(0));
    std::string name = b >= 0 ? kernel.params[b].name : "?";
    if (op.kind != OpKind::Store) add(reads, name);
    if (op.kind != OpKind::Load) add(writes, name);
  });
  auto join = [](const std::vector<std::string>& l) {
    std::string s;
    for (const auto& x : l) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("-") : s;
  };
  std::ostringstream os;
  os << kernel.name << ": " << mnemonic(kp.root->kind);
  if (kp.root->kind == OpKind::Reduce) os << " " << kp.root->strAttr("kind");
  os << " at " << locText(src, kp.root->loc) << "; reads " << join(reads) << "; writes " << join(writes);
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Step 3: traffic.

// The value of a scalar int computed from constants, scalar arguments and the grid, if it is one.
std::optional<int64_t> evalInt(const Function& fn, const LaunchConfig& launch, const Value* v, int depth = 0) {
  if (depth > 64 || !v->type.isScalar() || v->type.isPtr || !isInt(v->type.dtype)) return std::nullopt;
  if (v->isRegionArg()) {
    if (v->owner != &fn.body || v->index >= fn.params.size()) return std::nullopt;
    auto it = launch.scalars.find(fn.params[v->index].name);
    if (it == launch.scalars.end() || !isInt(it->second.dtype)) return std::nullopt;
    return it->second.i;
  }
  const Op& d = *v->def;
  auto operand = [&](size_t i) { return evalInt(fn, launch, d.operand(i), depth + 1); };
  switch (d.kind) {
    case OpKind::Constant:
      if (const Attr* a = d.attr("value"); a && std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a);
      return std::nullopt;
    case OpKind::NumPrograms:
      return launch.grid.at(static_cast<size_t>(std::clamp<int64_t>(d.intAttr("axis"), 0, 2)));
    case OpKind::Convert:
      return operand(0);
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Maximum: case OpKind::Minimum: {
      auto a = operand(0), b = operand(1);
      if (!a || !b) return std::nullopt;
      switch (d.kind) {
        case OpKind::Add: return *a + *b;
        case OpKind::Sub: return *a - *b;
        case OpKind::Mul: return *a * *b;
        case OpKind::Div: return *b ? std::optional<int64_t>(*a / *b) : std::nullopt;
        case OpKind::Rem: return *b ? std::optional<int64_t>(*a % *b) : std::nullopt;
        case OpKind::Maximum: return std::max(*a, *b);
        default: return std::min(*a, *b);
      }
    }
    default:
      return std::nullopt;
  }
}

class TrafficCounter {
 public:
  TrafficCounter(const Function& fn, const LaunchConfig& launch) : fn_(fn), launch_(launch) {}

  KernelTraffic run() {
    KernelTraffic t;
    t.name = fn_.name;
    t.programs = launch_.grid[0] * launch_.grid[1] * launch_.grid[2];
    region(fn_.body, static_cast<double>(t.programs), t);
    for (size_t i = 0; i <= fn_.params.size(); ++i) {
      bool unknown = i == fn_.params.size();
      int key = unknown ? kUnknown : static_cast<int>(i);
      auto r = reads_.find(key), w = writes_.find(key);
      if (r == reads_.end() && w == writes_.end()) continue;
      BufferTraffic bt;
      bt.param = unknown ? "?" : fn_.params[i].name;
      double cap = unknown ? -1 : bufferBytes(bt.param);
      auto capped = [&](double bytes) { return static_cast<int64_t>(cap >= 0 ? std::min(bytes, cap) : bytes); };
      if (r != reads_.end()) bt.readBytes = capped(r->second);
      if (w != writes_.end()) bt.writeBytes = capped(w->second);
      t.readBytes += bt.readBytes;
      t.writeBytes += bt.writeBytes;
      t.buffers.push_back(bt);
    }
    return t;
  }

 private:
  const Function& fn_;
  const LaunchConfig& launch_;
  std::map<int, double> reads_, writes_;  // buffer -> footprint bytes (uncapped)

  double bufferBytes(const std::string& param) const {
    const BufferSpec* spec = launch_.buffer(param);
    if (!spec) return -1;
    double n = 1;
    for (int64_t d : spec->shape) n *= static_cast<double>(std::max<int64_t>(d, 0));
    return n * dtypeBytes(spec->dtype);
  }

  void region(const Region& r, double times, KernelTraffic& t) {
    for (const auto& op : r.ops) {
      switch (op->kind) {
        case OpKind::Load:
        case OpKind::Store: {
          const Type& ptr = op->operand(0)->type;
          double bytes = static_cast<double>(ptr.numel()) * dtypeBytes(ptr.dtype) * times;
          (op->kind == OpKind::Load ? reads_ : writes_)[bufferOf(fn_, op->operand(0))] += bytes;
          break;
        }
        case OpKind::AtomicRMW:
        case OpKind::AtomicCAS: {  // reads and writes its elements
          const Type& ptr = op->operand(0)->type;
          double bytes = static_cast<double>(ptr.numel()) * dtypeBytes(ptr.dtype) * times;
          reads_[bufferOf(fn_, op->operand(0))] += bytes;
          writes_[bufferOf(fn_, op->operand(0))] += bytes;
          break;
        }
        case OpKind::While: {  // the trip count is data: each region counted once, an estimate
          t.estimated = true;
          for (const auto& reg : op->regions) region(*reg, times, t);
          break;
        }
        case OpKind::For: {
          std::optional<int64_t> trips = tripCount(*op);
          if (!trips) t.estimated = true;
          region(op->region(0), times * static_cast<double>(trips.value_or(1)), t);
          break;
        }
        case OpKind::If: {
          bool memory = containsKind(*op, OpKind::Load) || containsKind(*op, OpKind::Store);
          if (memory) t.estimated = true;  // both branches counted: an upper bound
          for (const auto& reg : op->regions) region(*reg, times, t);
          break;
        }
        default:
          break;
      }
    }
  }

  std::optional<int64_t> tripCount(const Op& forOp) const {
    auto lo = evalInt(fn_, launch_, forOp.operand(0));
    auto hi = evalInt(fn_, launch_, forOp.operand(1));
    auto step = evalInt(fn_, launch_, forOp.operand(2));
    if (!lo || !hi || !step || *step == 0) return std::nullopt;
    // In 128 bits: hi - lo and span + step - 1 overflow int64 for range(0, 2**63 - 1, 2**62).
    const __int128 span = *step > 0 ? __int128(*hi) - *lo : __int128(*lo) - *hi;
    const __int128 s = *step > 0 ? __int128(*step) : -__int128(*step);
    if (span <= 0) return 0;
    const __int128 trips = (span + s - 1) / s;
    return trips > INT64_MAX ? INT64_MAX : int64_t(trips);
  }
};

std::string withCommas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

int64_t countUnfusedKernels(const Function& blockIR, const LaunchConfig& launch) {
  if (blockIR.level != IRLevel::Block) throw IRError(blockIR.loc, "unfuse: expects block IR");
  return int64_t(Planner(blockIR, launch).run().kernels.size());
}

UnfusedKernels unfuse(const Function& blockIR, const LaunchConfig& launch) {
  if (blockIR.level != IRLevel::Block) throw IRError(blockIR.loc, "unfuse: expects block IR");
  if (std::string err = verifyFunction(blockIR); !err.empty())
    throw IRError(blockIR.loc, "unfuse: the input does not verify:\n" + err);
  walk(blockIR.body, [](Op& op) {
    for (const auto& r : op.results)
      if (r->type.layout) throw IRError(op.loc, "unfuse: expects block IR without layouts (unfuse before the layout passes)");
  });
  for (int64_t g : launch.grid)
    if (g <= 0) throw std::runtime_error("unfuse: the grid has a dimension <= 0");

  Plan plan = Planner(blockIR, launch).run();
  // Each kernel takes every scratch buffer as a parameter, so the IR grows with the square of
  // the kernel count: refuse before building what a generated body of 20000 statements implies.
  if (int64_t(plan.kernels.size()) > kMaxUnfusedKernelsBuilt)
    throw std::runtime_error("the unfused version of '" + blockIR.name + "' would have " +
                             std::to_string(plan.kernels.size()) + " kernels; tilelab builds at most " +
                             std::to_string(kMaxUnfusedKernelsBuilt));
  UnfusedKernels out;
  out.launch = launch;
  for (const ScratchBuffer& sb : plan.scratch) out.launch.buffers.push_back(sb.spec);
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    KernelBuilder kb(blockIR, plan, static_cast<int>(k), launch.grid);
    std::unique_ptr<Function> kernel = kb.build();
    // Tidy each kernel as its input was tidied: the recomputed index math and the scratch
    // addressing may compute one value twice (an arange of the same size, say); CSE merges them.
    blockPipeline().run(*kernel);
    out.kernels.push_back(std::move(kernel));
    out.descriptions.push_back(describe(blockIR, *out.kernels.back(), plan.kernels[k]));
  }
  return out;
}

KernelTraffic kernelTraffic(const Function& fn, const LaunchConfig& launch) { return TrafficCounter(fn, launch).run(); }

FusionTraffic fusionTraffic(const Function& fusedBlockIR, const LaunchConfig& launch, const UnfusedKernels& unfused) {
  FusionTraffic t;
  t.fused = kernelTraffic(fusedBlockIR, launch);
  t.fusedBytes = t.fused.totalBytes();
  for (const auto& k : unfused.kernels) {
    t.unfused.push_back(kernelTraffic(*k, unfused.launch));
    t.unfusedBytes += t.unfused.back().totalBytes();
  }
  t.launchesUnfused = static_cast<int>(unfused.kernels.size());
  return t;
}

std::string formatFusionTraffic(const FusionTraffic& t) {
  std::ostringstream os;
  auto line = [&](const std::string& name, int64_t r, int64_t w, bool est) {
    std::string n = name;
    if (n.size() < 34) n.resize(34, ' ');
    os << "  " << n << " reads " << withCommas(r) << " B, writes " << withCommas(w) << " B, total "
       << withCommas(r + w) << " B" << (est ? " (estimated)" : "") << "\n";
  };
  os << "fused (1 launch):\n";
  line(t.fused.name, t.fused.readBytes, t.fused.writeBytes, t.fused.estimated);
  os << "unfused (" << t.launchesUnfused << " launch" << (t.launchesUnfused == 1 ? "" : "es") << "):\n";
  for (const auto& k : t.unfused) line(k.name, k.readBytes, k.writeBytes, k.estimated);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", t.ratio());
  os << "compulsory DRAM bytes: fused " << withCommas(t.fusedBytes) << ", unfused " << withCommas(t.unfusedBytes)
     << " (" << ratio << "x)\n";
  return os.str();
}

}  // namespace tl
