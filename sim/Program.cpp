// Compiling thread IR into the executor's form (see Program.h): number every value's slots,
// decode attributes, assign pre-order instruction ids.
#include "sim/Program.h"

#include <string>
#include <unordered_map>

namespace tl::sim {

namespace {

// A warp's register file is capped (64 Mi slots = 512 MiB) so a malformed or absurd function
// fails with a message instead of exhausting memory.
constexpr uint64_t kMaxSlotsPerWarp = uint64_t(1) << 26;

class Compiler {
 public:
  explicit Compiler(Program& prog) : prog_(prog) {}

  void run(const Function& fn) {
    fn_ = &fn;
    prog_.body.args = defineArgs(fn.body);
    compileRegion(fn.body, prog_.body, 1);
    prog_.slotsPerWarp = static_cast<uint32_t>(next_);
  }

 private:
  Program& prog_;
  const Function* fn_ = nullptr;
  std::unordered_map<const Value*, ValRef> refs_;
  uint64_t next_ = 0;

  ValRef define(const Value* v, Loc loc) {
    ValRef r;
    r.n = static_cast<uint32_t>(v->type.numel());
    r.dtype = v->type.dtype;
    r.isPtr = v->type.isPtr;
    r.off = static_cast<uint32_t>(next_);
    next_ += 32ull * r.n;
    if (next_ > kMaxSlotsPerWarp)
      throw IRError(loc, "the thread function needs more than " + std::to_string(kMaxSlotsPerWarp) +
                             " register slots per warp; the executor cannot run it");
    refs_[v] = r;
    return r;
  }

  std::vector<ValRef> defineArgs(const Region& r) {
    std::vector<ValRef> out;
    Loc loc = r.parentOp ? r.parentOp->loc : Loc{};
    for (const auto& a : r.args) out.push_back(define(a.get(), loc));
    return out;
  }

  ValRef use(const Value* v, const Op& op) const {
    auto it = refs_.find(v);
    if (it == refs_.end()) throw IRError(op.loc, std::string(mnemonic(op.kind)) + ": operand has no value");
    return it->second;
  }

  void compileRegion(const Region& r, CRegion& out, int depth) {
    if (depth > prog_.maxDepth) prog_.maxDepth = depth;
    out.ops.reserve(r.ops.size());
    for (const auto& opPtr : r.ops) {
      const Op& op = *opPtr;
      if (!op.info().allowedIn(IRLevel::Thread))
        throw IRError(op.loc, std::string("the thread executor cannot run the block-level op '") +
                                  mnemonic(op.kind) + "'");
      out.ops.emplace_back();
      COp& c = out.ops.back();
      c.op = &op;
      c.kind = op.kind;
      c.instr = static_cast<int32_t>(prog_.instructions.size());
      prog_.instructions.push_back(&op);  // pre-order: the op before its regions' ops
      for (Value* v : op.operands) c.in.push_back(use(v, op));
      decodeAttrs(op, c);
      if (op.kind == OpKind::AtomGlobal || op.kind == OpKind::AtomCasGlobal) decodeSync(op, c);
      c.regions.resize(op.regions.size());
      for (size_t k = 0; k < op.regions.size(); ++k) {
        c.regions[k].args = defineArgs(op.region(k));
        compileRegion(op.region(k), c.regions[k], depth + 1);
      }
      // Results are defined after the regions (they are not visible inside them).
      for (const auto& res : op.results) c.out.push_back(define(res.get(), op.loc));
    }
  }

  // sem -> the atomic's place in the happens-before order between programs (sim/GlobalRaces.h).
  void decodeSync(const Op& op, COp& c) const {
    const std::string sem = op.hasAttr("sem") ? op.strAttr("sem") : "acq_rel";
    c.release = sem == "acq_rel" || sem == "release";
    c.acquire = (sem == "acq_rel" || sem == "acquire") && countUses(fn_->body, op.result()) > 0;
  }

  static void decodeAttrs(const Op& op, COp& c) {
    switch (op.kind) {
      case OpKind::LdGlobal: case OpKind::StGlobal: case OpKind::LdShared: case OpKind::StShared: case OpKind::CpAsync:
        c.attr = op.intAttr("vec");
        break;
      case OpKind::CpAsyncWait: c.attr = op.intAttr("pending"); break;
      case OpKind::ShflXor: c.attr = op.intAttr("offset"); break;
      case OpKind::Ldmatrix: c.attr = op.intAttr("count") | op.intAttr("trans") << 8; break;
      case OpKind::Extract: c.attr = op.intAttr("index"); break;
      case OpKind::BlockId: case OpKind::NumBlocks: c.attr = op.intAttr("axis"); break;
      case OpKind::RegReduce: {
        c.attr = op.intAttr("group");
        const std::string& k = op.strAttr("kind");
        c.combine = k == "sum" ? OpKind::Add : k == "max" ? OpKind::Maximum : OpKind::Minimum;
        break;
      }
      case OpKind::Cmp: c.pred = parseCmpPred(op.strAttr("pred")); break;
      case OpKind::Constant: c.constant = constantSlot(op, op.result()->type.dtype); break;
      case OpKind::Permute: c.indices = op.intsAttr("indices"); break;
      case OpKind::AtomGlobal: c.attr = static_cast<int64_t>(parseAtomicKind(op.strAttr("kind"))); break;
      case OpKind::AtomCasGlobal: c.attr = static_cast<int64_t>(AtomicKind::Cas); break;
      default: break;
    }
  }
};

}  // namespace

std::unique_ptr<Program> compileProgram(const Function& fn) {
  auto prog = std::make_unique<Program>();
  Compiler(*prog).run(fn);
  return prog;
}

}  // namespace tl::sim
