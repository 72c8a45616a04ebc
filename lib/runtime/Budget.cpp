// WorkMeter (see Budget.h): the budget check and the progress line.
#include "runtime/Budget.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tl {

namespace {
constexpr int64_t kCheckEvery = int64_t(1) << 20;

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

WorkLimits& workLimits() {
  static WorkLimits limits;
  return limits;
}

int64_t elementSteps(const Op& op) {
  int64_t n = 1;
  for (const Value* v : op.operands) n = std::max(n, v->type.numel());
  for (const auto& r : op.results) n = std::max(n, r->type.numel());
  return n;
}

std::string shortCount(int64_t n) {
  if (n < 100000) return std::to_string(n);
  int exp = static_cast<int>(std::floor(std::log10(double(n))));
  double mant = double(n) / std::pow(10.0, exp);
  char buf[32];
  if (std::fabs(mant - std::round(mant)) < 1e-9) std::snprintf(buf, sizeof buf, "%de%d", int(std::round(mant)), exp);
  else std::snprintf(buf, sizeof buf, "%.3ge%d", mant, exp);
  return buf;
}

WorkMeter::WorkMeter(std::string engine, std::string unitName, int64_t units, int64_t defaultSteps, std::string step)
    : engine_(std::move(engine)), unitName_(std::move(unitName)), step_(std::move(step)), units_(units) {
  budget_ = workLimits().maxSteps > 0 ? workLimits().maxSteps : defaultSteps;
  nextCheck_ = std::min(budget_ + 1, kCheckEvery);
  start_ = lastPrint_ = std::chrono::steady_clock::now();
  tty_ = isatty(STDERR_FILENO) == 1;
}

WorkMeter::~WorkMeter() {
  if (printed_ && tty_) std::fputc('\n', stderr);
}

void WorkMeter::startUnit(int64_t index) {
  unit_ = index;
  // Units can be cheap (a grid of 1e9 small programs): look at the clock every 1024 of them.
  if (workLimits().progress && (index & 1023) == 0 && index > 0) progress();
}

void WorkMeter::check(Loc loc) {
  if (steps_ > budget_)
    throw RuntimeError(loc, "the run exceeded its work budget of " + shortCount(budget_) + " steps in " + unitName_ +
                                " " + std::to_string(unit_) + " of " + std::to_string(units_) + " (" + engine_ +
                                " was running this op; a step is " + step_ + "); raise it with --max-steps N, or run a smaller launch (--set, --grid)");
  nextCheck_ = std::min(budget_ + 1, steps_ + kCheckEvery);
  if (workLimits().progress) progress();
}

void WorkMeter::progress() {
  double elapsed = secondsSince(start_);
  if (elapsed < kProgressAfterSeconds || secondsSince(lastPrint_) < kProgressEverySeconds) return;
  lastPrint_ = std::chrono::steady_clock::now();
  char line[256];
  std::snprintf(line, sizeof line, "%s: %s %lld of %lld (%.1f%%), %s of %s steps, %.0f s", engine_.c_str(),
                unitName_.c_str(), static_cast<long long>(unit_ + 1), static_cast<long long>(units_),
                units_ > 0 ? 100.0 * double(unit_) / double(units_) : 0.0, shortCount(steps_).c_str(),
                shortCount(budget_).c_str(), elapsed);
  if (tty_) std::fprintf(stderr, "\r%s\033[K", line);
  else std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace tl
