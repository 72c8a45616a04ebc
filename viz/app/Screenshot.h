// Offscreen rendering for --screenshot: an OpenGL framebuffer object the frame is drawn into
// (so the picture does not depend on the window being visible or on screen), read back with
// glReadPixels and written as a PNG with stb_image_write.
//
// Expects: a current OpenGL 3 context (GLFW's). Guarantees: the PNG is width x height RGB, top
// row first (OpenGL's rows are bottom-up: they are flipped); errors come back as text, never as
// an exception or a crash.
#pragma once

#include <string>

namespace tl::viz {

class Offscreen {
 public:
  Offscreen() = default;
  ~Offscreen();
  Offscreen(const Offscreen&) = delete;
  Offscreen& operator=(const Offscreen&) = delete;

  // Creates (or re-creates) a width x height color target. False with *error on failure.
  bool create(int width, int height, std::string* error);
  // Makes it the draw target (until unbind()).
  void bind() const;
  static void unbind();
  // Reads the target back and writes it as PNG. False with *error on failure.
  bool writePng(const std::string& path, std::string* error) const;

  int width() const { return width_; }
  int height() const { return height_; }

 private:
  unsigned framebuffer_ = 0, color_ = 0;
  int width_ = 0, height_ = 0;
  void destroy();
};

}  // namespace tl::viz
