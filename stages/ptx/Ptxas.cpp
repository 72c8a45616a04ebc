// Runs ptxas on a PTX text, picks the assembler, and parses what ptxas reports (contract in
// Ptxas.h).
//
// ptxas -v prints, for each entry:
//   ptxas info    : Compiling entry function 'softmax_kernel' for 'sm_90'
//   ptxas info    : Function properties for softmax_kernel
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 18 registers, used 1 barriers, 16 bytes smem, 368 bytes cmem[0]
// nvJitLink's -verbose info log holds the same lines (the stack line as "ptxas         .     0
// bytes stack frame, ..."), then its linker's summary ("info    : used 47 registers, ..., 1040
// bytes smem"), which is skipped. The numbers are taken from ptxas' lines (a module holds one
// kernel; with several, the largest of each is kept).
#include "ptx/Ptxas.h"

#include "ptx/NvJitLink.h"

#include "ir/FileRead.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

extern char** environ;

namespace tl {

namespace {

bool isExecutable(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// A temporary file that removes itself. mkstemps creates it with mode 0600 and a unique name.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/tl-ptxas-XXXXXX" + suffix;
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    fd_ = mkstemps(buf.data(), static_cast<int>(suffix.size()));
    if (fd_ >= 0) path_ = buf.data();
  }
  ~TempFile() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  bool write(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  std::string read() const {
    // ptxas' own output, bounded like a cache payload; unreadable reads as empty (ptxas failed).
    return tryReadFileBounded(path_, FileKind::CachePayload, nullptr).value_or("");
  }

 private:
  int fd_ = -1;
  std::string path_;
};

int largest(const std::string& log, const std::regex& re) {
  int best = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it)
    best = std::max(best, std::atoi((*it)[1].str().c_str()));
  return best;
}

}  // namespace

const char* assemblerName(Assembler a) {
  switch (a) {
    case Assembler::Auto: return "auto";
    case Assembler::Ptxas: return "ptxas";
    case Assembler::NvJitLink: return "nvjitlink";
  }
  return "auto";
}

void parsePtxasReport(const std::string& log, PtxasInfo& info) {
  // ptxas' own lines: "ptxas ..." and the indented stack/spill line of `ptxas -v`.
  std::string own;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("ptxas", 0) == 0 || (!line.empty() && (line[0] == ' ' || line[0] == '\t'))) own += line + "\n";
  info.registers = largest(own, std::regex(R"(Used (\d+) registers)"));
  info.sharedBytes = largest(own, std::regex(R"((\d+) bytes smem)"));
  info.stackFrameBytes = largest(own, std::regex(R"((\d+) bytes stack frame)"));
  info.spillStoreBytes = largest(own, std::regex(R"((\d+) bytes spill stores)"));
  info.spillLoadBytes = largest(own, std::regex(R"((\d+) bytes spill loads)"));
}

std::vector<std::string> ptxasPerformanceNotes(const std::string& log) {
  std::vector<std::string> notes;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("Potential Performance Loss");
    if (at == std::string::npos) continue;
    const size_t code = line.rfind('(', at);  // "(C7514) " before it, when ptxas gives one
    notes.push_back(line.substr(code != std::string::npos && line.find("ptxas") < code ? code : at));
  }
  return notes;
}

bool isAssemblerArch(const std::string& arch, std::string* why) {
  if (arch.rfind("sm_", 0) == 0 && arch.size() >= 5 && arch.find_first_not_of("0123456789a", 3) == std::string::npos)
    return true;
  if (why) *why = "not a GPU architecture: '" + arch + "'";
  return false;
}

std::string findPtxas(std::string* why) {
  if (const char* env = std::getenv("TL_PTXAS"); env && *env) {
    if (isExecutable(env)) return env;
    if (why) *why = std::string("$TL_PTXAS=") + env + " is not an executable file";
    return "";
  }
  if (isExecutable("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && isExecutable(dir + "/ptxas")) return dir + "/ptxas";
  }
  if (why) *why = "ptxas not found ($TL_PTXAS, /usr/local/cuda/bin/ptxas, PATH): install the CUDA toolkit to check PTX";
  return "";
}

PtxasInfo runPtxas(const std::string& ptx, const std::string& arch, std::string* cubinOut) {
  PtxasInfo info;
  info.assembler = findPtxas(&info.skipped);
  if (info.assembler.empty()) return info;
  if (!isAssemblerArch(arch, &info.skipped)) return info;

  TempFile input(".ptx"), output(".cubin"), log(".log");
  if (!input.ok() || !output.ok() || !log.ok() || !input.write(ptx)) {
    info.skipped = std::string("cannot create temporary files for ptxas: ") + std::strerror(errno);
    return info;
  }

  // ptxas -arch=sm_90 -v in.ptx -o out.cubin   (stdout and stderr into the log file)
  const std::string archFlag = "-arch=" + arch;
  std::vector<std::string> argv = {info.assembler, archFlag, "-v", input.path(), "-o", output.path()};
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.path().c_str(), O_WRONLY | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, info.assembler.c_str(), &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    info.skipped = "cannot run " + info.assembler + ": " + std::strerror(rc);
    return info;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  info.ran = true;
  info.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  info.log = log.read();
  parsePtxasReport(info.log, info);
  if (info.ok && cubinOut) *cubinOut = output.read();
  return info;
}

PtxasInfo assemblePtx(const std::string& ptx, const std::string& arch, std::string* cubinOut, Assembler which) {
  if (which == Assembler::Ptxas) return runPtxas(ptx, arch, cubinOut);
  std::string why;
  if (std::unique_ptr<NvJitLink> lib = NvJitLink::open(&why)) {
    PtxasInfo info = lib->assemble(ptx, arch, cubinOut);
    // A library that loads but cannot start (an option an older nvJitLink does not know) is
    // not a rejection of the PTX: Auto then runs the process.
    if (info.ran || which == Assembler::NvJitLink) return info;
    why = info.skipped;
  }
  if (which == Assembler::NvJitLink) {
    PtxasInfo info;
    info.skipped = "--assembler=nvjitlink: " + why;
    return info;
  }
  PtxasInfo info = runPtxas(ptx, arch, cubinOut);
  info.assemblerNote = "nvJitLink not used: " + why;
  return info;
}

}  // namespace tl
