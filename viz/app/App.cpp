// tl-viz's window, frame loop, screenshots and frame-rate measurement (see App.h).
#include "viz/app/App.h"

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#define GL_GLEXT_PROTOTYPES 1
#define GLFW_INCLUDE_GLEXT
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "viz/app/Controls.h"
#include "viz/app/Screenshot.h"
#include "viz/panels/Panels.h"

namespace fs = std::filesystem;

namespace tl::viz {

namespace {

// Frames drawn after the session finished before a screenshot is taken: windows that size
// themselves and tables that measure their columns need a frame or two to settle.
constexpr int kSettleFrames = 4;
// Frames at the start of --frames that are not counted (first-use costs: font atlas, shaders).
constexpr int kWarmupFrames = 10;

const char* kFontPaths[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/TTF/DejaVuSansMono.ttf",
};

void glfwError(int code, const char* what) { std::cerr << "tl-viz: GLFW error " << code << ": " << what << "\n"; }

// What a frame draws: the whole app, or one panel filling the window.
struct View {
  const PanelInfo* panel = nullptr;  // nullptr: the whole app (controls + tabs)
  PanelId selectTab = PanelId::Stages;
  bool forceTab = false;             // select `selectTab` this frame
};

class App {
 public:
  explicit App(const AppOptions& options) : options_(options), controls_(options) {
    ui_.sourceLine = options.line;
    // Closing the window must not wait for a simulation step: main ends with std::_Exit.
    session_.abandonOnDestroy();
  }
  ~App() { shutdown(); }

  int run();

 private:
  AppOptions options_;
  KernelControls controls_;
  Session session_;
  UiState ui_;
  GLFWwindow* window_ = nullptr;
  bool imguiReady_ = false;
  uint64_t lastGeneration_ = 0;
  Phase lastPhase_ = Phase::Empty;
  std::string lastKernel_;
  uint64_t submitted_ = 0;
  // The memory instruction ui_.memInstr named in the snapshot it was chosen in: an edit can
  // renumber instructions, so a new snapshot keeps the id only where it is still this op at
  // this source location.
  struct MemSelection {
    uint64_t generation = 0;  // the snapshot `op` and `loc` were read from (0: none)
    int32_t instr = -1;
    std::string op;
    Loc loc;
  };
  MemSelection memSelection_;
  View view_;
  double lastBuildMs_ = 0;  // the last frame: ImGui (panels, layout, draw lists), on the CPU
  double lastDrawMs_ = 0;   // the last frame: OpenGL (rasterizing and presenting it)
  bool selectionApplied_ = false;  // options_.selection was checked and set
  bool selectionError_ = false;    // ... and was out of range (the app ends with exit code 1)

  bool init(bool visible);
  void shutdown();
  void submit() { submitted_ = session_.submit(controls_.inputs()); }
  void frame(Offscreen* target);
  void drawApp(const SessionData& data, const Progress& progress);
  void drawSinglePanel(const PanelInfo& panel, const SessionData& data);
  void onNewData(const SessionData& data);
  void noteMemSelection(const SessionData& data);
  void applySelection(const SessionData& data);
  bool waitForSession(Offscreen* target);

  [[noreturn]] static void timedOut();
  int interactive();
  int screenshots();
  int measureFrames();
};

bool App::init(bool visible) {
  glfwSetErrorCallback(glfwError);
  if (!glfwInit()) {
    std::cerr << "tl-viz: cannot open a window (no display?). Headless: xvfb-run -a -s \"-screen 0 1600x1000x24\" tl-viz ...\n";
    return false;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  std::string title = "tl-viz - " + options_.kernelPath;
  window_ = glfwCreateWindow(options_.width, options_.height, title.c_str(), nullptr, nullptr);
  if (!window_) {
    std::cerr << "tl-viz: cannot create an OpenGL 3.3 window\n";
    return false;
  }
  glfwMakeContextCurrent(window_);
  glfwSwapInterval(options_.frames > 0 ? 0 : 1);  // --frames measures, vsync would cap it

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed: nothing to remember between runs
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 0;
  style.FrameRounding = 3;
  style.TabRounding = 3;
  for (const char* path : kFontPaths) {
    std::error_code ec;
    if (fs::exists(path, ec) && io.Fonts->AddFontFromFileTTF(path, 15.0f)) break;
  }
  if (io.Fonts->Fonts.empty()) io.Fonts->AddFontDefault();
  ImGui_ImplGlfw_InitForOpenGL(window_, true);
  ImGui_ImplOpenGL3_Init("#version 150");
  imguiReady_ = true;
  return true;
}

void App::shutdown() {
  if (imguiReady_) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    imguiReady_ = false;
  }
  if (window_) {
    glfwDestroyWindow(window_);
    window_ = nullptr;
    glfwTerminate();
  }
}

// A new snapshot: selections that belonged to the previous kernel or launch start over.
void App::onNewData(const SessionData& data) {
  // Each generation publishes twice (Compiled, then Simulated): act once on each.
  if (data.generation == lastGeneration_ && data.phase == lastPhase_) return;
  bool newGeneration = data.generation != lastGeneration_;
  lastGeneration_ = data.generation;
  lastPhase_ = data.phase;
  // A kernel that does not compile: select its first error's line, so the source column
  // highlights where it is.
  if (newGeneration && !data.errors.empty() && data.errors.front().line > 0) ui_.sourceLine = data.errors.front().line;
  if (data.phase != Phase::Simulated) return;
  if (data.kernelName != lastKernel_) {
    lastKernel_ = data.kernelName;
    ui_.value.clear();
    ui_.memInstr = -1;
    ui_.memWarp = 0;
    ui_.memBlock = 0;
  } else if (ui_.memInstr >= 0 && data.errors.empty()) {
    // The same kernel, edited: instruction ids may have shifted. Keep the chosen id only if it
    // still names the same op at the same source location; otherwise start over (-1: the Memory
    // panel's default, the first global load). A snapshot with errors draws no instructions: the
    // check waits for the next good one.
    auto it = std::find_if(data.memInstrs.begin(), data.memInstrs.end(),
                           [&](const MemInstr& m) { return m.instr == ui_.memInstr; });
    bool same = it != data.memInstrs.end() && memSelection_.generation != 0 && memSelection_.instr == ui_.memInstr &&
                it->op == memSelection_.op && it->loc == memSelection_.loc;
    if (!same) ui_.memInstr = -1;
  }
  // The occupancy sliders and the resident-blocks slider start at the compiled kernel's point.
  ui_.occThreads = ui_.occRegisters = ui_.occSharedBytes = 0;
  ui_.residentBlocks = 0;
  if (!selectionApplied_ && data.errors.empty()) applySelection(data);
}

// --instr, --value, --block, --warp: checked against the first simulated snapshot, then set
// once (the user may change them afterwards). Out of range: the error, and the app ends with 1.
void App::applySelection(const SessionData& data) {
  selectionApplied_ = true;
  ResolvedSelection r = resolveSelection(data, options_.selection);
  if (!r.ok) {
    std::cerr << "tl-viz: error: " << r.error << "\n";
    selectionError_ = true;
    return;
  }
  if (r.instr) {
    ui_.memInstr = *r.instr;
    for (const MemInstr& m : data.memInstrs)
      if (m.instr == *r.instr && m.loc.line > 0) ui_.sourceLine = m.loc.line;
  }
  if (!r.value.empty()) ui_.value = r.value;
  if (r.block) ui_.memBlock = *r.block;
  if (r.warp) {
    ui_.memWarp = *r.warp;
    ui_.focusWarp = *r.warp;
  }
}

void App::drawApp(const SessionData& data, const Progress& progress) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float controlsWidth = std::clamp(display.x * 0.27f, 320.0f, 520.0f);
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(controlsWidth, display.y));
  if (ImGui::Begin("Kernel", nullptr, fixed)) {
    if (controls_.draw(data, progress, ui_)) submit();
  }
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(controlsWidth, 0));
  ImGui::SetNextWindowSize(ImVec2(display.x - controlsWidth, display.y));
  if (ImGui::Begin("Panels", nullptr, fixed | ImGuiWindowFlags_NoTitleBar)) {
    if (ImGui::BeginTabBar("panels")) {
      for (const auto& p : allPanels()) {
        ImGuiTabItemFlags flags = view_.forceTab && view_.selectTab == p.id ? ImGuiTabItemFlags_SetSelected : 0;
        if (ImGui::BeginTabItem(p.title, nullptr, flags)) {
          ImGui::BeginChild(p.key, ImVec2(0, 0), false);
          p.draw(data, ui_);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
    view_.forceTab = false;
  }
  ImGui::End();
}

void App::drawSinglePanel(const PanelInfo& panel, const SessionData& data) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(display);
  std::string title = std::string(panel.title) + " - " + options_.kernelPath + "###panel";
  if (ImGui::Begin(title.c_str(), nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse))
    panel.draw(data, ui_);
  ImGui::End();
}

// Remembers the op and source location of the selected memory instruction in `data` (a
// simulated snapshot), so onNewData can tell whether a later snapshot's same id is the same
// instruction.
void App::noteMemSelection(const SessionData& data) {
  if (data.phase != Phase::Simulated || ui_.memInstr < 0) return;
  if (memSelection_.generation == data.generation && memSelection_.instr == ui_.memInstr) return;
  for (const MemInstr& m : data.memInstrs)
    if (m.instr == ui_.memInstr) {
      memSelection_ = {data.generation, m.instr, m.op, m.loc};
      return;
    }
}

// One frame: draw the current snapshot into `target` (or the window) and present it.
void App::frame(Offscreen* target) {
  auto start = std::chrono::steady_clock::now();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  if (target) ImGui::GetIO().DisplaySize = ImVec2(static_cast<float>(target->width()), static_cast<float>(target->height()));
  ImGui::NewFrame();

  std::shared_ptr<const SessionData> data = session_.current();
  Progress progress = session_.progress();
  onNewData(*data);
  if (view_.panel)
    drawSinglePanel(*view_.panel, *data);
  else
    drawApp(*data, progress);
  noteMemSelection(*data);
  ++ui_.frame;

  ImGui::Render();
  auto built = std::chrono::steady_clock::now();
  int w = 0, h = 0;
  if (target) {
    target->bind();
    w = target->width();
    h = target->height();
  } else {
    glfwGetFramebufferSize(window_, &w, &h);
  }
  glViewport(0, 0, w, h);
  glClearColor(0.09f, 0.09f, 0.10f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (target) {
    glFinish();
    Offscreen::unbind();
  } else {
    glfwSwapBuffers(window_);
    glFinish();
  }
  auto drawn = std::chrono::steady_clock::now();
  lastBuildMs_ = std::chrono::duration<double, std::milli>(built - start).count();
  lastDrawMs_ = std::chrono::duration<double, std::milli>(drawn - built).count();
}

// Draws frames (the UI stays live) until the submitted job is finished. False on timeout.
bool App::waitForSession(Offscreen* target) {
  auto start = std::chrono::steady_clock::now();
  while (!session_.waitFor(submitted_, 0.02)) {
    glfwPollEvents();
    frame(target);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > options_.timeoutSeconds) {
      std::cerr << "tl-viz: the session did not finish within " << options_.timeoutSeconds << " s\n";
      return false;
    }
  }
  return true;
}

// --screenshot / --frames gave up waiting (waitForSession said why): exit with status 2 at once.
// Returning would run the destructors, and ~Session joins its worker thread, which may be in the
// middle of a long simulation step that polls for cancellation only between steps, so the
// process could hang well past the timeout it promised. std::_Exit skips destructors (and
// atexit handlers), so flush what was printed first; the OS releases the window and memory.
void App::timedOut() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(2);
}

int App::interactive() {
  if (!init(true)) return 1;
  submit();
  while (!glfwWindowShouldClose(window_)) {
    // Idle: wake on input (and a few times a second for hover effects); busy: animate.
    if (session_.progress().busy)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.1);
    frame(nullptr);
    if (selectionError_) return 1;
  }
  return 0;
}

int App::screenshots() {
  if (!init(false)) return 1;
  Offscreen target;
  std::string error;
  if (!target.create(options_.width, options_.height, &error)) {
    std::cerr << "tl-viz: " << error << "\n";
    return 1;
  }
  // What to draw, and where each picture goes.
  std::vector<std::pair<const PanelInfo*, std::string>> shots;
  if (options_.panel == "all") {
    std::string pattern = options_.screenshot;
    if (pattern.find("{key}") == std::string::npos) {
      std::error_code ec;
      fs::create_directories(pattern, ec);
      pattern = (fs::path(pattern) / "{key}.png").string();
    }
    auto named = [&](const std::string& key) {
      std::string p = pattern;
      p.replace(p.find("{key}"), 5, key);
      return p;
    };
    for (const auto& p : allPanels()) shots.push_back({&p, named(p.key)});
    shots.push_back({nullptr, named("app")});
  } else if (!options_.panel.empty()) {
    const PanelInfo* p = findPanel(options_.panel);
    if (!p) {
      std::cerr << "tl-viz: no panel '" << options_.panel << "' (stages, threads, memory, occupancy, latency, fusion, timings, all)\n";
      return 1;
    }
    shots.push_back({p, options_.screenshot});
  } else {
    shots.push_back({nullptr, options_.screenshot});
  }

  submit();
  if (!waitForSession(&target)) timedOut();
  auto data = session_.current();
  for (const auto& e : data->errors) std::cerr << e.rendered;
  frame(&target);  // the first frame on the finished snapshot checks --instr/--value/--block/--warp
  if (selectionError_) return 1;
  int status = 0;
  for (const auto& [panel, path] : shots) {
    view_.panel = panel;
    view_.forceTab = true;
    for (int i = 0; i < kSettleFrames; ++i) {
      glfwPollEvents();
      frame(&target);
    }
    if (!target.writePng(path, &error)) {
      std::cerr << "tl-viz: " << error << "\n";
      status = 1;
    } else {
      std::cout << "wrote " << path << " (" << target.width() << "x" << target.height() << ")\n";
    }
  }
  if (status == 0 && !data->errors.empty()) {
    std::cerr << "tl-viz: the screenshots show the kernel's errors (exit code 3)\n";
    status = 3;
  }
  return status;
}

int App::measureFrames() {
  if (!init(true)) return 1;
  if (!options_.panel.empty()) {
    view_.panel = findPanel(options_.panel);
    if (!view_.panel) {
      std::cerr << "tl-viz: no panel '" << options_.panel << "'\n";
      return 1;
    }
  }
  submit();
  if (!waitForSession(nullptr)) timedOut();
  frame(nullptr);
  if (selectionError_) return 1;
  std::vector<double> ms, build, draw;
  auto last = std::chrono::steady_clock::now();
  for (int i = 0; i < options_.frames + kWarmupFrames; ++i) {
    glfwPollEvents();
    frame(nullptr);
    auto now = std::chrono::steady_clock::now();
    if (i >= kWarmupFrames) {
      ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
      build.push_back(lastBuildMs_);
      draw.push_back(lastDrawMs_);
    }
    last = now;
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  double frameMs = median(ms);
  std::printf("tl-viz: %zu frames of %s (%s), %dx%d: median %.2f ms per frame = %.1f frames per second "
              "(ImGui %.2f ms + OpenGL %.2f ms; fastest frame %.2f ms, slowest %.2f ms)\n",
              ms.size(), options_.kernelPath.c_str(), view_.panel ? view_.panel->key : "the whole app", options_.width,
              options_.height, frameMs, frameMs > 0 ? 1000.0 / frameMs : 0.0, median(build), median(draw),
              ms.empty() ? 0 : ms.front(), ms.empty() ? 0 : ms.back());
  return 0;
}

int App::run() {
  if (!options_.panel.empty() && options_.panel != "all" && !findPanel(options_.panel)) {
    std::cerr << "tl-viz: no panel '" << options_.panel << "' (stages, threads, memory, occupancy, latency, fusion, "
              << "timings; all with --screenshot)\n";
    return 1;
  }
  if (options_.panel == "all" && options_.screenshot.empty()) {
    std::cerr << "tl-viz: --panel all needs --screenshot DIR\n";
    return 1;
  }
  if (!options_.screenshot.empty()) return screenshots();
  if (options_.frames > 0) return measureFrames();
  return interactive();
}

}  // namespace

int runApp(const AppOptions& options) {
  auto app = std::make_unique<App>(options);
  return app->run();
}

}  // namespace tl::viz
