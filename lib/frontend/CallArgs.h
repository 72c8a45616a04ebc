// Binding a call's arguments to a built-in's signature: the one set of rules, and of messages,
// for the built-ins of @launch (LaunchEval.cpp) and of kernels (SemaBuiltins.cpp).
//
//   bool ok = bindCallArgs(call, "randn", {"shape", "mean", "std"}, /*required*/ 1, stopAtFirst,
//                          [&](const ast::Expr& arg, size_t slot) { ...evaluate...; return ok; },
//                          [&](Loc loc, const std::string& msg) { error(loc, msg); });
//
// Expects: a Call expression (its positional `items` and `keywords`).
// Guarantees: every argument is evaluated exactly once, left to right, positionals first, by
// `evalArg(expr, slot)`; slot == sig.size() for an argument that has no slot (one too many, an
// unknown keyword), which is still evaluated so that errors inside it are reported. evalArg
// returns false when the argument itself failed (it reported why). Reports, located: too many
// arguments, an unknown keyword (listing the signature, with a "did you mean"), an argument given twice, a required
// one missing (only when nothing else failed). With stopAtFirst it returns at the first
// problem. Returns true when none occurred; `given[k]` says which slots were filled.
// `firstSlot` slots are already bound (a method call's tensor, `x.sum(0)`): positional arguments
// start after them.
#pragma once

#include <string>
#include <vector>

#include "frontend/AST.h"
#include "frontend/Suggest.h"

namespace tl {

template <typename EvalArg, typename Error>
bool bindCallArgs(const ast::Expr& call, const std::string& fname, const std::vector<std::string>& sig,
                  size_t required, bool stopAtFirst, std::vector<bool>& given, EvalArg&& evalArg, Error&& error,
                  size_t firstSlot = 0) {
  given.assign(sig.size(), false);
  for (size_t k = 0; k < firstSlot && k < sig.size(); ++k) given[k] = true;
  bool bound = true;      // every argument found its slot
  bool evaluated = true;  // every argument evaluated without error
  for (size_t k = 0; k < call.items.size(); ++k) {
    const size_t slot = k + firstSlot < sig.size() ? k + firstSlot : sig.size();
    if (!evalArg(*call.items[k], slot)) {
      evaluated = false;
      if (stopAtFirst) return false;
    }
    if (slot == sig.size()) {
      if (bound) error(call.items[k]->loc, fname + "() takes at most " + std::to_string(sig.size() - firstSlot) + " arguments");
      bound = false;
      if (stopAtFirst) return false;
      continue;
    }
    given[slot] = true;
  }
  for (const auto& kw : call.keywords) {
    size_t slot = sig.size();
    for (size_t k = 0; k < sig.size(); ++k)
      if (sig[k] == kw.name) slot = k;
    const bool twice = slot < sig.size() && given[slot];
    if (!evalArg(*kw.value, twice ? sig.size() : slot)) {
      evaluated = false;
      if (stopAtFirst) return false;
    }
    if (slot == sig.size()) {
      std::string list;
      for (const auto& s : sig) list += (list.empty() ? "" : ", ") + s;
      error(kw.loc, fname + "() has no argument '" + kw.name + "' (it takes " + list + ")" + didYouMean(kw.name, sig));
    } else if (twice) {
      error(kw.loc, fname + "() got argument '" + kw.name + "' twice");
    } else {
      given[slot] = true;
      continue;
    }
    bound = false;
    if (stopAtFirst) return false;
  }
  for (size_t k = 0; k < required && bound; ++k)
    if (!given[k]) {
      error(call.loc, fname + "() needs the argument '" + sig[k] + "'");
      bound = false;
    }
  return bound && evaluated;
}

}  // namespace tl
