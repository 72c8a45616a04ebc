// Hashes and the tool's version, shared by every tool that names or records what it ran: the JIT
// cache's keys, the results files' source hashes, tl-sim's reports and tl-grade's records.
#pragma once

#include <string>
#include <string_view>

namespace tl {

// SHA-256 of `data`, as 64 lowercase hex digits (FIPS 180-4; tested against its vectors).
std::string sha256Hex(std::string_view data);

// The tool version compiled into the binary (TL_VERSION from CMake when defined), plus the size
// and modification time of the running executable, so a rebuilt compiler never reuses entries
// of an older build.
std::string toolVersion();

// Only TL_VERSION ("tilelab-dev" unless CMake defines it): what --version prints.
std::string releaseVersion();

}  // namespace tl
