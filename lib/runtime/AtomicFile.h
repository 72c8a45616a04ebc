// Writing a file so that a reader never sees half of it (the JIT caches and the results JSON
// of tl-ptx and tl-cpu), and where those caches live.
#pragma once

#include <string>
#include <string_view>

namespace tl {

// Writes `data` to `path` atomically: a temporary file in the same directory, then rename(2).
// Returns false with *error set when it cannot (the temporary file is removed).
bool writeFileAtomic(const std::string& path, std::string_view data, std::string* error);

// Where the JIT caches of tl-ptx and tl-cpu live: $TL_CACHE_DIR, else $XDG_CACHE_HOME/tilelab,
// else ~/.cache/tilelab, else ./.tilelab-cache.
std::string defaultCacheRoot();

}  // namespace tl
