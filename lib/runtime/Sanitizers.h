// Whether this build runs under AddressSanitizer (scripts/sanitize.sh), for the few places that
// limit a process's address space: ASan reserves terabytes of shadow memory up front, so
// RLIMIT_AS (`ulimit -v`) would stop a sanitized process before main. Under ASan those places
// bound memory another way (ASan's hard_rss_limit_mb) or not at all, and say so.
#pragma once

#include <string>

namespace tl {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// A shell prefix that caps a command's memory at `mib` MiB: `ulimit -v`, or under ASan its
// resident-set limit (the executables of one build share its sanitizer).
inline std::string shellMemoryLimit(long mib) {
  if (kAddressSanitizer) return "export ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=" + std::to_string(mib) + "\"; ";
  return "ulimit -v " + std::to_string(mib * 1024) + "; ";
}

}  // namespace tl
