#include "ir/IR.h"

#include <unordered_map>

namespace tl {

static const OpInfo kOpInfos[] = {
#define BLOCK_OP(Kind, Mnemonic, Category, Levels) {Mnemonic, OpCategory::Category, OpLevels::Levels},
#include "ir/BlockOps.def"
#define THREAD_OP(Kind, Mnemonic, Category) {Mnemonic, OpCategory::Category, OpLevels::Thread},
#include "ir/ThreadOps.def"
};
static_assert(sizeof(kOpInfos) / sizeof(kOpInfos[0]) == static_cast<size_t>(OpKind::NumKinds));

const OpInfo& opInfo(OpKind kind) { return kOpInfos[static_cast<size_t>(kind)]; }

std::optional<OpKind> opKindFromMnemonic(std::string_view m) {
  for (size_t i = 0; i < static_cast<size_t>(OpKind::NumKinds); ++i)
    if (m == kOpInfos[i].mnemonic) return static_cast<OpKind>(i);
  return std::nullopt;
}

Value* Region::addArg(Type type, std::string name) {
  auto v = std::make_unique<Value>();
  v->type = std::move(type);
  v->name = std::move(name);
  v->owner = this;
  v->index = static_cast<unsigned>(args.size());
  args.push_back(std::move(v));
  return args.back().get();
}

Value* Op::addResult(Type type, std::string name) {
  auto v = std::make_unique<Value>();
  v->type = std::move(type);
  v->name = std::move(name);
  v->def = this;
  v->index = static_cast<unsigned>(results.size());
  results.push_back(std::move(v));
  return results.back().get();
}

Region& Op::addRegion() {
  regions.push_back(std::make_unique<Region>(this));
  return *regions.back();
}

bool Op::hasAttr(std::string_view name) const { return attr(name) != nullptr; }

const Attr* Op::attr(std::string_view name) const {
  for (const auto& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}

int64_t Op::intAttr(std::string_view name) const {
  const Attr* a = attr(name);
  if (!a || !std::holds_alternative<int64_t>(*a))
    throw IRError(loc, std::string(mnemonic(kind)) + ": missing integer attribute '" +
                           std::string(name) + "'");
  return std::get<int64_t>(*a);
}

double Op::floatAttr(std::string_view name) const {
  const Attr* a = attr(name);
  if (a && std::holds_alternative<double>(*a)) return std::get<double>(*a);
  if (a && std::holds_alternative<int64_t>(*a)) return static_cast<double>(std::get<int64_t>(*a));
  throw IRError(loc, std::string(mnemonic(kind)) + ": missing numeric attribute '" +
                         std::string(name) + "'");
}

const std::string& Op::strAttr(std::string_view name) const {
  const Attr* a = attr(name);
  if (!a || !std::holds_alternative<std::string>(*a))
    throw IRError(loc, std::string(mnemonic(kind)) + ": missing string attribute '" +
                           std::string(name) + "'");
  return std::get<std::string>(*a);
}

const std::string* Op::strAttrIf(std::string_view name) const {
  const Attr* a = attr(name);
  return a ? std::get_if<std::string>(a) : nullptr;
}

const std::vector<int64_t>& Op::intsAttr(std::string_view name) const {
  const Attr* a = attr(name);
  if (!a || !std::holds_alternative<std::vector<int64_t>>(*a))
    throw IRError(loc, std::string(mnemonic(kind)) + ": missing integer-list attribute '" +
                           std::string(name) + "'");
  return std::get<std::vector<int64_t>>(*a);
}

bool hasSideEffects(const Op& op) {
  switch (op.kind) {
    case OpKind::Store:
    case OpKind::StGlobal:
    case OpKind::StShared:
    case OpKind::Barrier:
    case OpKind::WgmmaFence:
    case OpKind::WgmmaCommit:
    case OpKind::WgmmaWait:
    case OpKind::FenceProxyAsync:
    case OpKind::CpAsync:
    case OpKind::CpAsyncCommit:
    case OpKind::CpAsyncWait:
    case OpKind::Yield:
    case OpKind::Return:
    case OpKind::Condition:
    case OpKind::AtomicRMW:
    case OpKind::AtomicCAS:
    case OpKind::DebugBarrier:
    case OpKind::AtomGlobal:
    case OpKind::AtomCasGlobal:
    case OpKind::DevicePrint:
    case OpKind::DeviceAssert:
    case OpKind::PrintRegs:
    case OpKind::AssertRegs:
      return true;
    case OpKind::While:  // may never end: removing it would change what the kernel does
      return true;
    case OpKind::For:
    case OpKind::If: {
      bool found = false;
      for (const auto& r : op.regions)
        for (const auto& inner : r->ops) found = found || (inner->kind != OpKind::Yield && hasSideEffects(*inner));
      return found;
    }
    default:
      return false;
  }
}

void Op::setAttr(std::string name, Attr value) {
  for (auto& a : attrs)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  attrs.push_back({std::move(name), std::move(value)});
}

void walk(const Region& region, const std::function<void(Op&)>& fn) {
  for (const auto& op : region.ops) {
    fn(*op);
    for (const auto& r : op->regions) walk(*r, fn);
  }
}

void replaceAllUsesWith(Region& region, Value* from, Value* to) {
  walk(region, [&](Op& op) {
    for (auto& v : op.operands)
      if (v == from) v = to;
  });
}

size_t countUses(const Region& region, const Value* v) {
  size_t n = 0;
  walk(region, [&](Op& op) {
    for (Value* o : op.operands) n += (o == v);
  });
  return n;
}

static void cloneRegion(const Region& src, Region& dst, std::unordered_map<const Value*, Value*>& map) {
  for (const auto& a : src.args) map[a.get()] = dst.addArg(a->type, a->name);
  for (const auto& op : src.ops) {
    auto copy = std::make_unique<Op>(op->kind, op->loc);
    copy->attrs = op->attrs;
    copy->parent = &dst;
    for (Value* o : op->operands) {
      auto it = map.find(o);
      copy->operands.push_back(it == map.end() ? o : it->second);
    }
    for (const auto& r : op->results) map[r.get()] = copy->addResult(r->type, r->name);
    for (const auto& r : op->regions) cloneRegion(*r, copy->addRegion(), map);
    dst.ops.push_back(std::move(copy));
  }
}

std::unique_ptr<Function> cloneHeader(const Function& fn) {
  auto out = std::make_unique<Function>();
  out->level = fn.level;
  out->numWarps = fn.numWarps;
  out->sharedBytes = fn.sharedBytes;
  out->maxRegisters = fn.maxRegisters;
  out->name = fn.name;
  out->loc = fn.loc;
  out->source = fn.source;
  out->params = fn.params;
  out->constexprs = fn.constexprs;
  return out;
}

std::unique_ptr<Function> cloneFunction(const Function& fn) {
  auto out = cloneHeader(fn);
  std::unordered_map<const Value*, Value*> map;
  cloneRegion(fn.body, out->body, map);
  return out;
}

}  // namespace tl
