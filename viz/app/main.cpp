// tl-viz: the visualizer's entry point. The options are viz/model/CommandLine.h (tested in
// tests/viz without a window); the window, panels and screenshots are viz/app/App.h.
//
// Headless (CI, these machines): xvfb-run -a -s "-screen 0 1600x1000x24" tl-viz ...
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "viz/app/App.h"

int main(int argc, char** argv) {
  tl::viz::AppOptions o;
  if (auto code = tl::viz::parseCommandLine(argc, argv, o, std::cout, std::cerr)) return *code;
  int rc = tl::viz::runApp(o);
  // The Session's worker may still be finishing a simulation step (App abandons it at exit,
  // Session::abandonOnDestroy): end the process without running static destructors under it.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}
