// "Did you mean": the closest known name to a misspelt one, for the front end's messages
// (unknown names, functions, methods, keyword arguments, decorators, @launch keywords).
//
//   error(loc, "unknown name '" + n + "'" + didYouMean(n, candidates));
//   // -> "unknown name 'offest'; did you mean 'offset'?"
//
// Distance: optimal string alignment (insert, delete, replace, swap two neighbours: each 1), so
// `offest` is 1 from `offset`. A candidate equal up to case (`n` for `N`) is the best match.
// Close enough to help: at most 1 edit for words of up to 4 characters, 2 up to 8, 3 beyond,
// and fewer edits than either word is long (no `y` for `x`). Among equally close candidates the
// first one listed wins, so a suggestion is deterministic. Nothing close: no suggestion.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace tl {

// Optimal string alignment distance between a and b.
inline size_t editDistance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// The candidate closest to `word` within the limits above, or "" when none is close enough.
// `word` itself (an exact match) is never suggested.
inline std::string closestName(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 64) return "";
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string lw = lower(word);
  const size_t limit = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::string best;
  size_t bestD = limit + 1;
  for (const auto& c : candidates) {
    if (c == word || c.empty() || c.size() > 64) continue;
    size_t dist = lower(c) == lw ? 0 : editDistance(word, c);
    if (dist > 0 && (dist >= word.size() || dist >= c.size())) continue;
    if (dist < bestD) {
      bestD = dist;
      best = c;
    }
  }
  return best;
}

// "; did you mean 'x'?" for the closest candidate, or "" when none is close enough.
inline std::string didYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = closestName(word, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

}  // namespace tl
