// Colors the panels share, as plain 0xAABBGGRR values (ImGui's IM_COL32 byte order), so they
// can be chosen and tested without a window: one color per warp, shades per lane, one per
// warp state and per stage highlight.
//
// Guarantees: deterministic; distinct warps (up to 32) get clearly distinct hues; lanes of one
// warp share its hue and differ in lightness; every color is opaque unless stated.
#pragma once

#include <cstdint>

#include "sim/SmModel.h"

namespace tl::viz {

using Rgba = uint32_t;  // 0xAABBGGRR

constexpr Rgba rgba(int r, int g, int b, int a = 255) {
  return Rgba(r & 255) | Rgba(g & 255) << 8 | Rgba(b & 255) << 16 | Rgba(a & 255) << 24;
}
inline int red(Rgba c) { return int(c & 255); }
inline int green(Rgba c) { return int(c >> 8 & 255); }
inline int blue(Rgba c) { return int(c >> 16 & 255); }
inline int alpha(Rgba c) { return int(c >> 24 & 255); }

// A hue per warp (golden-angle steps around the color wheel).
Rgba warpColor(int warp);
// The warp's hue, lighter for higher lanes (lane 0 darkest, lane 31 lightest).
Rgba laneColor(int warp, int lane);
// Issuing green, waiting on memory orange, at a barrier red, idle (ready) grey, done dark.
Rgba warpStateColor(WarpState s);
// Background of a highlighted line (selected source line and what it became).
Rgba highlightColor();
// Black or white, whichever reads better on `background`.
Rgba textColorOn(Rgba background);

}  // namespace tl::viz
