#include "ir/Layout.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <stdexcept>

namespace tl {

namespace {

int product(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 1, std::multiplies<int>()); }

std::string listStr(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

bool isPermutation(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<int>(i)) return false;
  return true;
}

// Mixed-radix digits of `value`, the digit of dimension order[0] varying fastest.
std::vector<int64_t> digits(int64_t value, const std::vector<int64_t>& radix, const std::vector<int>& order) {
  std::vector<int64_t> d(radix.size(), 0);
  for (int dim : order) {
    d[dim] = value % radix[dim];
    value /= radix[dim];
  }
  return d;
}

}  // namespace

LayoutPtr Layout::blocked(std::vector<int> spt, std::vector<int> tpw, std::vector<int> wpc, std::vector<int> order) {
  size_t r = spt.size();
  if (r == 0 || tpw.size() != r || wpc.size() != r || order.size() != r || !isPermutation(order))
    throw std::invalid_argument("blocked layout: fields must have the tensor's rank and order must be a permutation");
  for (size_t d = 0; d < r; ++d)
    if (!isPowerOfTwo(spt[d]) || !isPowerOfTwo(tpw[d]) || !isPowerOfTwo(wpc[d]))
      throw std::invalid_argument("blocked layout: every field must be a power of two");
  if (product(tpw) != kWarpSize) throw std::invalid_argument("blocked layout: threadsPerWarp must multiply to 32");
  auto l = std::make_shared<Layout>();
  l->kind_ = Kind::Blocked;
  l->spt_ = std::move(spt);
  l->tpw_ = std::move(tpw);
  l->wpc_ = std::move(wpc);
  l->order_ = std::move(order);
  return l;
}

LayoutPtr Layout::slice(int dim, LayoutPtr parent) {
  if (!parent || dim < 0 || dim >= parent->rank()) throw std::invalid_argument("slice layout: bad dimension");
  auto l = std::make_shared<Layout>();
  l->kind_ = Kind::Slice;
  l->dim_ = dim;
  l->parent_ = std::move(parent);
  return l;
}

int Layout::rank() const { return kind_ == Kind::Blocked ? static_cast<int>(spt_.size()) : parent_->rank() - 1; }

int Layout::numWarps() const { return product(root().wpc_); }

// The full-rank shape of the blocked root, and which root dimension each of our dims is.
static void expand(const Layout& l, const Shape& shape, Shape& full, std::vector<int>& kept) {
  if (l.kind() == Layout::Kind::Blocked) {
    full = shape;
    kept.resize(shape.size());
    std::iota(kept.begin(), kept.end(), 0);
    return;
  }
  Shape withDim = shape;
  withDim.insert(withDim.begin() + l.sliceDim(), 1);
  std::vector<int> parentKept;
  expand(*l.parent(), withDim, full, parentKept);
  kept = parentKept;
  kept.erase(kept.begin() + l.sliceDim());
}

// Per root dimension: how many elements one thread holds (reps x sizePerThread), 1 for dims
// sliced away.
static std::vector<int64_t> elemsPerDim(const Layout& l, const Shape& full, const std::vector<int>& kept) {
  const auto &spt = l.sizePerThread(), &tpw = l.threadsPerWarp(), &wpc = l.warpsPerCTA();
  std::vector<int64_t> e(full.size(), 1);
  for (int d : kept) {
    int64_t tile = int64_t(spt[d]) * tpw[d] * wpc[d];
    int64_t reps = std::max<int64_t>(1, (full[d] + tile - 1) / tile);
    e[d] = reps * spt[d];
  }
  return e;
}

int64_t Layout::elemsPerThread(const Shape& shape) const {
  Shape full;
  std::vector<int> kept;
  expand(*this, shape, full, kept);
  auto e = elemsPerDim(*this, full, kept);
  return std::accumulate(e.begin(), e.end(), int64_t(1), std::multiplies<int64_t>());
}

std::vector<int64_t> Layout::coords(const Shape& shape, int thread, int64_t reg) const {
  Shape full;
  std::vector<int> kept;
  expand(*this, shape, full, kept);
  auto e = elemsPerDim(*this, full, kept);
  const auto &spt = sizePerThread(), &tpw = threadsPerWarp(), &wpc = warpsPerCTA(), &ord = order();
  std::vector<int64_t> tpw64(tpw.begin(), tpw.end()), wpc64(wpc.begin(), wpc.end());
  auto lane = digits(thread % kWarpSize, tpw64, ord);
  auto warp = digits(thread / kWarpSize, wpc64, ord);
  auto regd = digits(reg, e, ord);
  std::vector<int64_t> c;
  for (int d : kept) {
    int64_t rep = regd[d] / spt[d], i = regd[d] % spt[d];
    int64_t tile = int64_t(spt[d]) * tpw[d] * wpc[d];
    int64_t coord = rep * tile + (warp[d] * tpw[d] + lane[d]) * spt[d] + i;
    c.push_back(coord % full[d]);
  }
  return c;
}

int64_t Layout::replication(const Shape& shape) const {
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  return int64_t(numThreads()) * elemsPerThread(shape) / numel;
}

std::string Layout::str() const {
  if (kind_ == Kind::Slice) return "#slice<dim=" + std::to_string(dim_) + ", " + parent_->str() + ">";
  return "#blocked<spt=" + listStr(spt_) + ", tpw=" + listStr(tpw_) + ", wpc=" + listStr(wpc_) +
         ", order=" + listStr(order_) + ">";
}

bool Layout::operator==(const Layout& o) const {
  if (kind_ != o.kind_) return false;
  if (kind_ == Kind::Slice) return dim_ == o.dim_ && *parent_ == *o.parent_;
  return spt_ == o.spt_ && tpw_ == o.tpw_ && wpc_ == o.wpc_ && order_ == o.order_;
}

namespace {

struct LayoutReader {
  std::string_view t;
  size_t pos = 0;

  bool lit(std::string_view s) {
    while (pos < t.size() && t[pos] == ' ') ++pos;
    if (t.substr(pos, s.size()) != s) return false;
    pos += s.size();
    return true;
  }
  bool number(int& v) {
    while (pos < t.size() && t[pos] == ' ') ++pos;
    size_t b = pos;
    v = 0;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos])) && pos - b < 9) v = v * 10 + (t[pos++] - '0');
    return pos > b;
  }
  bool list(std::vector<int>& out) {
    if (!lit("[")) return false;
    int v;
    do {
      if (!number(v)) return false;
      out.push_back(v);
    } while (lit(","));
    return lit("]");
  }
  LayoutPtr layout() {
    if (lit("#slice<dim=")) {
      int dim;
      if (!number(dim) || !lit(",")) return nullptr;
      LayoutPtr parent = layout();
      if (!parent || !lit(">") || dim >= parent->rank()) return nullptr;
      return Layout::slice(dim, parent);
    }
    std::vector<int> spt, tpw, wpc, order;
    if (!(lit("#blocked<spt=") && list(spt) && lit(", tpw=") && list(tpw) && lit(", wpc=") && list(wpc) &&
          lit(", order=") && list(order) && lit(">")))
      return nullptr;
    try {
      return Layout::blocked(spt, tpw, wpc, order);
    } catch (const std::invalid_argument&) {
      return nullptr;
    }
  }
};

}  // namespace

LayoutPtr parseLayout(std::string_view text, size_t* consumed) {
  LayoutReader r{text};
  LayoutPtr l = r.layout();
  if (l && consumed) *consumed = r.pos;
  return l;
}

// Triton's BlockedEncodingAttr::get: starting from the contiguous dimension, give each
// dimension as many lanes (then warps) as its extent can use; the slowest dimension takes
// whatever lanes and warps are left (wrapping around if the tile is too small: replication).
LayoutPtr defaultBlockedLayout(const Shape& shape, int numWarps, int vecElems, std::vector<int> order) {
  int rank = static_cast<int>(shape.size());
  if (order.empty())
    for (int d = rank - 1; d >= 0; --d) order.push_back(d);  // row-major: last dim fastest
  std::vector<int> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  spt[order[0]] = static_cast<int>(std::clamp<int64_t>(vecElems, 1, shape[order[0]]));
  int64_t remainingThreads = int64_t(numWarps) * kWarpSize;
  int remainingLanes = kWarpSize, remainingWarps = numWarps, prevLanes = 1, prevWarps = 1;
  for (int k = 0; k < rank - 1; ++k) {
    int d = order[k];
    int64_t threadsPerCTA = std::clamp<int64_t>(remainingThreads, 1, std::max<int64_t>(1, shape[d] / spt[d]));
    tpw[d] = static_cast<int>(std::clamp<int64_t>(threadsPerCTA, 1, remainingLanes));
    wpc[d] = static_cast<int>(std::clamp<int64_t>(threadsPerCTA / tpw[d], 1, remainingWarps));
    remainingWarps /= wpc[d];
    remainingLanes /= tpw[d];
    remainingThreads /= threadsPerCTA;
    prevLanes *= tpw[d];
    prevWarps *= wpc[d];
  }
  tpw[order[rank - 1]] = kWarpSize / prevLanes;
  wpc[order[rank - 1]] = numWarps / prevWarps;
  return Layout::blocked(spt, tpw, wpc, order);
}

LayoutPtr fmaAccumulatorLayout(int64_t M, int64_t N, int numWarps) {
  for (int64_t sM = std::min<int64_t>(4, M), sN = std::min<int64_t>(4, N);;) {
    if ((M / sM) * (N / sN) >= int64_t(numWarps) * kWarpSize) {
      int t[2] = {1, 1}, w[2] = {1, 1};
      const int64_t ext[2] = {M, N}, s[2] = {sM, sN};
      auto perThread = [&](int d) { return ext[d] / (int64_t(t[d]) * w[d]); };
      auto fits = [&](int d) { return perThread(d) / 2 >= s[d]; };
      // Each doubling to the dimension with the larger per-thread extent that still has a chunk
      // to give; `first` breaks ties.
      auto pick = [&](int first) {
        const int other = 1 - first;
        if (!fits(first)) return other;
        if (!fits(other)) return first;
        return perThread(other) > perThread(first) ? other : first;
      };
      for (int lanes = 1; lanes < kWarpSize; lanes *= 2) t[pick(1)] *= 2;
      for (int warps = 1; warps < numWarps; warps *= 2) w[pick(0)] *= 2;
      if (perThread(0) >= s[0] && perThread(1) >= s[1])  // always, for power-of-two tiles
        return Layout::blocked({int(sM), int(sN)}, {t[0], t[1]}, {w[0], w[1]}, {1, 0});
    }
    if (sM == 1 && sN == 1) return nullptr;
    if (sM > 1) sM /= 2;  // rows first: the columns are the stores' vectors
    else sN /= 2;
  }
}

LayoutPtr transposedLayout(const Layout& l) {
  if (l.kind() != Layout::Kind::Blocked || l.rank() != 2)
    throw std::invalid_argument("transposedLayout: needs a rank-2 blocked layout, got " + l.str());
  return permutedLayout(l, {1, 0});
}

LayoutPtr permutedLayout(const Layout& l, const std::vector<int>& order) {
  const int r = l.rank();
  if (l.kind() != Layout::Kind::Blocked || static_cast<int>(order.size()) != r || !isPermutation(order))
    throw std::invalid_argument("permutedLayout: needs a blocked layout and a permutation of its dims, got " + l.str());
  std::vector<int> spt(r), tpw(r), wpc(r), inv(r), ord;
  for (int j = 0; j < r; ++j) {
    spt[j] = l.sizePerThread()[order[j]];
    tpw[j] = l.threadsPerWarp()[order[j]];
    wpc[j] = l.warpsPerCTA()[order[j]];
    inv[order[j]] = j;
  }
  for (int d : l.order()) ord.push_back(inv[d]);
  return Layout::blocked(spt, tpw, wpc, ord);
}

LayoutPtr joinedLayout(const Layout& l) {
  if (l.kind() != Layout::Kind::Blocked) throw std::invalid_argument("joinedLayout: needs a blocked layout, got " + l.str());
  std::vector<int> spt = l.sizePerThread(), tpw = l.threadsPerWarp(), wpc = l.warpsPerCTA(), ord = {l.rank()};
  spt.push_back(2);
  tpw.push_back(1);
  wpc.push_back(1);
  for (int d : l.order()) ord.push_back(d);
  return Layout::blocked(spt, tpw, wpc, ord);
}

LayoutPtr splitLayout(const Layout& l) {
  const int last = l.rank() - 1;
  if (l.kind() != Layout::Kind::Blocked || last < 1 || l.sizePerThread()[last] != 2 || l.threadsPerWarp()[last] != 1 ||
      l.warpsPerCTA()[last] != 1)
    return nullptr;
  std::vector<int> spt = l.sizePerThread(), tpw = l.threadsPerWarp(), wpc = l.warpsPerCTA(), ord;
  spt.pop_back();
  tpw.pop_back();
  wpc.pop_back();
  for (int d : l.order())
    if (d != last) ord.push_back(d);
  return Layout::blocked(spt, tpw, wpc, ord);
}

}  // namespace tl
