// tl-viz's application: a GLFW window with Dear ImGui (OpenGL3 backend), the "Kernel" control
// window on the left (source editor, sizes, num_warps, GPU, progress, errors) and the panels
// (viz/panels/) as tabs in the main area. The compile + simulate work happens in a Session
// (viz/model/Session.h) on its own thread, so the UI never waits for it.
//
// Three modes share one frame function:
//   interactive   the window, until it is closed
//   --screenshot  renders offscreen (a framebuffer object) once the session is Simulated, a few
//                 frames more so the layout settles, then writes PNGs and exits
//   --frames N    renders N frames as fast as it can and prints the median frame rate
//
// Expects: a display (DISPLAY set; headless: xvfb-run -a -s "-screen 0 1600x1000x24").
// Guarantees: returns an exit code (0 ok, 1 bad options / no display / write failure / a
// selection option out of range, 2 the session did not finish in time, 3 screenshots written
// but the kernel has errors); never blocks the frame loop on the session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viz/model/CommandLine.h"

namespace tl::viz {

// The command line (viz/model/CommandLine.h).
using AppOptions = VizOptions;

int runApp(const AppOptions& options);

}  // namespace tl::viz
