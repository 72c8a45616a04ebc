// The verifier: checks that IR obeys the rules written in the master op lists.
//
// Run after every pass by the pass manager, and by the builder on each op it creates, so a
// malformed op is caught where it was made, not three passes later.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tl {

// Checks one op's operand count, operand/result types and attributes, ignoring what is inside
// its regions except their argument and terminator signatures. std::nullopt when valid, else
// the reason ("add: operand types differ: <128xf32> vs <128xi32>").
std::optional<std::string> verifyOp(const Op& op);

// Checks the whole function: every op, SSA dominance (each operand is defined earlier in the
// same region or an enclosing one), terminators, region arguments. Returns all problems found,
// one per line, rendered with locations; empty when valid.
std::string verifyFunction(const Function& fn);

// The permutation a `trans` op applies (result dim j is operand dim order[j]): its `order`
// attribute, or [1, 0] for a rank-2 trans without one; empty when neither.
std::vector<int> transOrder(const Op& trans);

}  // namespace tl
