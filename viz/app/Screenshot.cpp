// Offscreen framebuffer and PNG writing for --screenshot (see Screenshot.h).
#include "viz/app/Screenshot.h"

#define GL_GLEXT_PROTOTYPES 1
#define GLFW_INCLUDE_GLEXT
#include <GLFW/glfw3.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include <algorithm>
#include <vector>

namespace tl::viz {

Offscreen::~Offscreen() { destroy(); }

void Offscreen::destroy() {
  if (color_) glDeleteRenderbuffers(1, &color_);
  if (framebuffer_) glDeleteFramebuffers(1, &framebuffer_);
  color_ = framebuffer_ = 0;
}

bool Offscreen::create(int width, int height, std::string* error) {
  destroy();
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    if (error) *error = "screenshot size must be 1..16384 pixels each way";
    return false;
  }
  glGenFramebuffers(1, &framebuffer_);
  glGenRenderbuffers(1, &color_);
  glBindRenderbuffer(GL_RENDERBUFFER, color_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    if (error) *error = "the OpenGL framebuffer is incomplete (status " + std::to_string(status) + ")";
    destroy();
    return false;
  }
  width_ = width;
  height_ = height;
  return true;
}

void Offscreen::bind() const { glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_); }

void Offscreen::unbind() { glBindFramebuffer(GL_FRAMEBUFFER, 0); }

bool Offscreen::writePng(const std::string& path, std::string* error) const {
  if (!framebuffer_) {
    if (error) *error = "no offscreen target";
    return false;
  }
  std::vector<unsigned char> pixels(static_cast<size_t>(width_) * height_ * 3);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer_);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  // OpenGL's first row is the bottom one; PNG's is the top one.
  const size_t stride = static_cast<size_t>(width_) * 3;
  std::vector<unsigned char> flipped(pixels.size());
  for (int y = 0; y < height_; ++y)
    std::copy_n(pixels.begin() + static_cast<std::ptrdiff_t>(stride * (height_ - 1 - y)), stride,
                flipped.begin() + static_cast<std::ptrdiff_t>(stride * y));
  if (!stbi_write_png(path.c_str(), width_, height_, 3, flipped.data(), static_cast<int>(stride))) {
    if (error) *error = "cannot write " + path;
    return false;
  }
  return true;
}

}  // namespace tl::viz
