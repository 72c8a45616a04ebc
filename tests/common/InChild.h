// Runs `fn` in a child process with at most 512 MiB more address space than this one and a
// time limit: "" when fn returned "", else what it returned or why it did not finish (a test of
// input that could block or fill memory must not take the suite down with it).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace tl::test {

inline std::string inChild(const std::function<std::string()>& fn, int seconds = 20) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    long pages = 0;
    if (std::ifstream statm("/proc/self/statm"); statm >> pages) {
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(512) << 20);
      setrlimit(RLIMIT_AS, &lim);
    }
    std::string r;
    try {
      r = fn();
    } catch (const std::exception& e) {
      r = std::string("threw: ") + e.what();
    }
    if (!r.empty() && write(fds[1], r.data(), r.size()) < 0) r.clear();
    _exit(r.empty() ? 0 : 1);
  }
  close(fds[1]);
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(fds[0]);
      return "timed out (blocked?)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) report.append(buf, size_t(n));
  close(fds[0]);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status)) + " " + report;
  return WEXITSTATUS(status) == 0 ? "" : report.empty() ? "failed" : report;
}

}  // namespace tl::test
