// The shared colors (Palette.h): warp hues by golden-angle steps, lane lightness ramps, and
// fixed colors per warp state.
#include "viz/model/Palette.h"

#include <algorithm>
#include <cmath>

namespace tl::viz {
namespace {

// HSL -> RGB (h in degrees, s and l in 0..1).
Rgba hsl(double h, double s, double l) {
  double c = (1 - std::fabs(2 * l - 1)) * s;
  double hp = std::fmod(h, 360.0) / 60.0;
  double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  double m = l - c / 2;
  auto byte = [&](double v) { return int(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return rgba(byte(r), byte(g), byte(b));
}

double warpHue(int warp) { return std::fmod(20.0 + 137.508 * std::max(warp, 0), 360.0); }

}  // namespace

Rgba warpColor(int warp) { return hsl(warpHue(warp), 0.65, 0.50); }

Rgba laneColor(int warp, int lane) {
  double t = std::clamp(lane, 0, 31) / 31.0;
  return hsl(warpHue(warp), 0.60, 0.30 + 0.45 * t);
}

Rgba warpStateColor(WarpState s) {
  switch (s) {
    case WarpState::Issuing: return rgba(76, 175, 80);
    case WarpState::WaitingMemory: return rgba(255, 152, 0);
    case WarpState::WaitingDependency: return rgba(171, 71, 188);
    case WarpState::WaitingBarrier: return rgba(229, 57, 53);
    case WarpState::Idle: return rgba(158, 158, 158);
    case WarpState::Done: return rgba(55, 55, 60);
  }
  return rgba(0, 0, 0);
}

Rgba highlightColor() { return rgba(255, 214, 0, 90); }

Rgba textColorOn(Rgba background) {
  // Relative luminance (Rec. 709 weights) on the 0..255 scale.
  double y = 0.2126 * red(background) + 0.7152 * green(background) + 0.0722 * blue(background);
  return y > 140 ? rgba(0, 0, 0) : rgba(255, 255, 255);
}

}  // namespace tl::viz
