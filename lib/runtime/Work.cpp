// What a launch does, counted from its block IR without running it: the FLOPs of a dot kernel
// and the element ops tl-scalar would evaluate (which picks a reference engine small enough to
// finish), for the results JSON of tl-ptx and tl-cpu; and the UTC timestamp those files carry.
#include "runtime/Work.h"

#include <cmath>
#include <ctime>
#include <optional>

namespace tl {

namespace {

// Walks block IR multiplying by loop trip counts (what estimateScalarOps and dotFlops share).
class WorkCounter {
 public:
  WorkCounter(const Function& fn, const LaunchConfig& launch) : fn_(fn), launch_(launch) {}

  // Element ops of one program (all ops) or FLOPs of one program (dots only).
  double count(const Region& region, bool dotFlopsOnly) const {
    double total = 0;
    for (const auto& op : region.ops) {
      if (op->kind == OpKind::For) {
        double trips = tripCount(*op).value_or(1);
        total += trips * count(op->region(0), dotFlopsOnly);
      } else if (op->kind == OpKind::While) {
        // The trip count is only known at run time: the condition and the body are counted once
        // each (an estimate: a lower bound when the loop runs, an upper one when it never does).
        total += count(op->region(0), dotFlopsOnly) + count(op->region(1), dotFlopsOnly);
      } else if (op->kind == OpKind::If) {
        double most = 0;  // the costlier branch: an upper estimate
        for (const auto& r : op->regions) most = std::max(most, count(*r, dotFlopsOnly));
        total += most;
      } else if (op->kind == OpKind::Dot) {
        total += (dotFlopsOnly ? 2.0 : 1.0) * dotVolume(*op);
      } else if (!dotFlopsOnly) {
        total += op->numResults() ? double(op->result(0)->type.numel()) : 1.0;
      }
    }
    return total;
  }

  double programs() const { return double(launch_.grid[0]) * double(launch_.grid[1]) * double(launch_.grid[2]); }

 private:
  // M*N*K of a dot (a: MxK, b: KxN).
  static double dotVolume(const Op& op) {
    const Shape& a = op.operand(0)->type.shape;
    const Shape& b = op.operand(1)->type.shape;
    if (a.size() != 2 || b.size() != 2) return double(op.result(0)->type.numel());
    return double(a[0]) * double(a[1]) * double(b[1]);
  }

  // The value of an integer scalar when it is a constant or a scalar parameter of the launch.
  std::optional<int64_t> intValue(const Value* v) const {
    if (v->def && v->def->kind == OpKind::Constant) {
      const Attr* a = v->def->attr("value");
      if (a && std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a);
      return std::nullopt;
    }
    if (!v->def && v->owner == &fn_.body && v->index < fn_.params.size()) {
      auto it = launch_.scalars.find(fn_.params[v->index].name);
      if (it != launch_.scalars.end() && isInt(it->second.dtype)) return it->second.i;
    }
    return std::nullopt;
  }

  std::optional<double> tripCount(const Op& forOp) const {
    if (forOp.numOperands() < 3) return std::nullopt;
    auto lo = intValue(forOp.operand(0)), hi = intValue(forOp.operand(1)), step = intValue(forOp.operand(2));
    if (!lo || !hi || !step || *step <= 0) return std::nullopt;
    if (*hi <= *lo) return 0.0;
    return std::ceil((double(*hi) - double(*lo)) / double(*step));
  }

  const Function& fn_;
  const LaunchConfig& launch_;
};

std::optional<double> launchNumber(const LaunchConfig& launch, const std::string& name) {
  for (const auto& [k, v] : launch.names) {
    if (k != name) continue;
    try {
      size_t used = 0;
      double d = std::stod(v, &used);
      if (used == v.size()) return d;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

}  // namespace

double dotFlops(const Function& blockIR, const LaunchConfig& launch) {
  bool hasDot = false;
  walk(blockIR.body, [&](Op& op) { hasDot = hasDot || op.kind == OpKind::Dot; });
  if (!hasDot) return 0;
  auto m = launchNumber(launch, "M"), n = launchNumber(launch, "N"), k = launchNumber(launch, "K");
  if (m && n && k) return 2.0 * *m * *n * *k;
  WorkCounter wc(blockIR, launch);
  return wc.programs() * wc.count(blockIR.body, true);
}

double estimateScalarOps(const Function& blockIR, const LaunchConfig& launch) {
  WorkCounter wc(blockIR, launch);
  return wc.programs() * wc.count(blockIR.body, false);
}

std::string utcTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tl
