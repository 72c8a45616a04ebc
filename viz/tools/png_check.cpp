// tl-png-check: checks the screenshots the headless tests make (viz/CMakeLists.txt).
//
//   tl-png-check WIDTH HEIGHT a.png b.png ...
//
// Each PNG must exist, decode, be exactly WIDTH x HEIGHT, and show real content:
//   - at least kMinColors distinct colors (text, grids and curves are drawn in many colors;
//     an empty window has a handful);
//   - the most common color (the window background) covers at most kMaxBackground of the
//     picture (a panel that only says "simulating..." is almost all background).
// Prints one line per file with the numbers; exits 1 when any file fails.
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unordered_map>

namespace {

constexpr size_t kMinColors = 24;
constexpr double kMaxBackground = 0.93;

bool check(const char* path, int wantW, int wantH) {
  int w = 0, h = 0, channels = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(stbi_load(path, &w, &h, &channels, 3), stbi_image_free);
  if (!pixels) {
    std::printf("FAIL %s: cannot read (%s)\n", path, stbi_failure_reason());
    return false;
  }
  if (w != wantW || h != wantH) {
    std::printf("FAIL %s: %dx%d, expected %dx%d\n", path, w, h, wantW, wantH);
    return false;
  }
  std::unordered_map<uint32_t, size_t> counts;
  const size_t n = static_cast<size_t>(w) * h;
  const unsigned char* p = pixels.get();
  for (size_t i = 0; i < n; ++i, p += 3) ++counts[uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]];
  size_t most = 0;
  for (const auto& [color, count] : counts) most = std::max(most, count);
  double background = static_cast<double>(most) / static_cast<double>(n);
  bool ok = counts.size() >= kMinColors && background <= kMaxBackground;
  std::printf("%s %s: %dx%d, %zu colors, background %.1f%%%s\n", ok ? "ok  " : "FAIL", path, w, h, counts.size(),
              100.0 * background,
              ok ? "" : counts.size() < kMinColors ? " (too few colors: empty?)" : " (mostly background: empty?)");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: tl-png-check WIDTH HEIGHT FILE.png...\n");
    return 2;
  }
  int w = std::atoi(argv[1]), h = std::atoi(argv[2]);
  if (w <= 0 || h <= 0) {
    std::fprintf(stderr, "tl-png-check: WIDTH and HEIGHT must be positive\n");
    return 2;
  }
  bool ok = true;
  for (int i = 3; i < argc; ++i) ok &= check(argv[i], w, h);
  return ok ? 0 : 1;
}
