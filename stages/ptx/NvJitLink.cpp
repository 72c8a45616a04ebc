// libnvJitLink loaded at run time (see NvJitLink.h for the contract).
//
// The entry points are declared here with the C ABI of nvJitLink.h rather than taken from it, so
// this file builds where the CUDA toolkit is not installed. nvJitLink.h's inline wrappers call
// versioned symbols (nvJitLinkCreate -> __nvJitLinkCreate_13_0); the library also exports every
// plain name, stable across 12.x and 13.x, and those are what dlsym looks up. Where the header
// is installed, its constants are checked against the ones used here.
#include "ptx/NvJitLink.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#if __has_include(<nvJitLink.h>)
#include <nvJitLink.h>  // only to check the constants below; nothing is linked
static_assert(NVJITLINK_SUCCESS == 0 && NVJITLINK_INPUT_PTX == 2 && sizeof(nvJitLinkResult) == sizeof(int),
              "nvJitLink.h's constants differ from the ones NvJitLink.cpp uses");
#endif

namespace tl {

namespace {

constexpr int kSuccess = 0;   // NVJITLINK_SUCCESS
constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX

// nvJitLinkResult names, in the order of nvJitLink.h's enum (CUDA 13.0).
const char* resultName(int r) {
  static const char* const names[] = {
      "NVJITLINK_SUCCESS",           "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT", "NVJITLINK_ERROR_PTX_COMPILE",       "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",    "NVJITLINK_ERROR_THREADPOOL",          "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",    "NVJITLINK_ERROR_NULL_INPUT",          "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH", "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN", "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
  if (r >= 0 && r < int(sizeof(names) / sizeof(names[0]))) return names[r];
  return "nvJitLink error";
}

// One candidate library: what dlopen is given, and how a failure is described.
struct Candidate {
  std::string path;
  bool fromEnv = false;
};

std::vector<Candidate> candidates() {
  if (const char* env = std::getenv("TL_NVJITLINK"); env && *env) return {{env, true}};
  std::vector<Candidate> c = {{"libnvJitLink.so.13"}, {"libnvJitLink.so"},
                              {"/usr/local/cuda/lib64/libnvJitLink.so.13"}, {"/usr/local/cuda/lib64/libnvJitLink.so"}};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* dir = std::getenv(var); dir && *dir)
      for (const char* name : {"libnvJitLink.so.13", "libnvJitLink.so"})
        c.push_back({std::string(dir) + "/lib64/" + name});
  return c;
}

}  // namespace

// The entry points, typed as nvJitLink.h declares them (the handle is nvJitLink.h's opaque
// `struct nvJitLink*`; nvJitLinkResult and nvJitLinkInputType are C enums, passed as int).
struct NvJitLink::Api {
  using Handle = struct nvJitLink*;
  int (*create)(Handle*, uint32_t, const char**) = nullptr;
  int (*addData)(Handle, int, const void*, size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*getLinkedCubinSize)(Handle, size_t*) = nullptr;
  int (*getLinkedCubin)(Handle, void*) = nullptr;
  int (*getErrorLogSize)(Handle, size_t*) = nullptr;
  int (*getErrorLog)(Handle, char*) = nullptr;
  int (*getInfoLogSize)(Handle, size_t*) = nullptr;
  int (*getInfoLog)(Handle, char*) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*version)(unsigned*, unsigned*) = nullptr;
};

NvJitLink::NvJitLink() : api_(std::make_unique<Api>()) {}

NvJitLink::~NvJitLink() {
  if (lib_) dlclose(lib_);  // RTLD_NODELETE: the library stays loaded for the next open()
}

std::unique_ptr<NvJitLink> NvJitLink::open(std::string* why) {
  void* lib = nullptr;
  std::string path, errors;
  for (const Candidate& c : candidates()) {
    lib = dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (lib) {
      path = c.path;
      break;
    }
    const char* err = dlerror();
    if (c.fromEnv) {
      if (why) *why = "$TL_NVJITLINK=" + c.path + " cannot be loaded" + (err ? std::string(" (") + err + ")" : "");
      return nullptr;
    }
  }
  if (!lib) {
    if (why) {
      std::string where = "libnvJitLink.so.13, libnvJitLink.so, /usr/local/cuda/lib64";
      if (std::getenv("CUDA_HOME") && *std::getenv("CUDA_HOME")) where += ", $CUDA_HOME/lib64";
      if (std::getenv("CUDA_PATH") && *std::getenv("CUDA_PATH")) where += ", $CUDA_PATH/lib64";
      *why = "libnvJitLink not found (" + where + ")";
    }
    return nullptr;
  }
  std::unique_ptr<NvJitLink> n(new NvJitLink());
  n->lib_ = lib;
  n->path_ = path;
  Api& a = *n->api_;
  struct Entry {
    const char* name;
    void** slot;
  };
  auto slot = [](auto& fn) { return reinterpret_cast<void**>(&fn); };
  const Entry table[] = {
      {"nvJitLinkCreate", slot(a.create)},
      {"nvJitLinkAddData", slot(a.addData)},
      {"nvJitLinkComplete", slot(a.complete)},
      {"nvJitLinkGetLinkedCubinSize", slot(a.getLinkedCubinSize)},
      {"nvJitLinkGetLinkedCubin", slot(a.getLinkedCubin)},
      {"nvJitLinkGetErrorLogSize", slot(a.getErrorLogSize)},
      {"nvJitLinkGetErrorLog", slot(a.getErrorLog)},
      {"nvJitLinkGetInfoLogSize", slot(a.getInfoLogSize)},
      {"nvJitLinkGetInfoLog", slot(a.getInfoLog)},
      {"nvJitLinkDestroy", slot(a.destroy)},
      {"nvJitLinkVersion", slot(a.version)},
  };
  for (const Entry& e : table) {
    *e.slot = dlsym(lib, e.name);
    if (!*e.slot) {
      if (why) *why = path + " lacks " + e.name + " (not a libnvJitLink of CUDA 12 or later?)";
      return nullptr;  // ~NvJitLink closes it
    }
  }
  unsigned major = 0, minor = 0;
  if (a.version(&major, &minor) != kSuccess) {
    if (why) *why = path + ": nvJitLinkVersion failed";
    return nullptr;
  }
  n->version_ = "nvJitLink " + std::to_string(major) + "." + std::to_string(minor);
  return n;
}

PtxasInfo NvJitLink::assemble(const std::string& ptx, const std::string& arch, std::string* cubinOut) const {
  PtxasInfo info;
  info.assembler = version_;
  if (!isAssemblerArch(arch, &info.skipped)) return info;
  const Api& a = *api_;
  const std::string archFlag = "-arch=" + arch;
  const char* options[] = {archFlag.c_str(), "-verbose", "-no-cache"};
  Api::Handle h = nullptr;
  int r = a.create(&h, 3, options);
  if (r != kSuccess) {
    info.skipped = version_ + ": nvJitLinkCreate(" + archFlag + " -verbose -no-cache): " + resultName(r);
    if (h) a.destroy(&h);
    return info;
  }
  info.ran = true;
  // A log as text (empty when the call fails or there is none; the size counts the NUL).
  auto readLog = [&](int (*sizeOf)(Api::Handle, size_t*), int (*get)(Api::Handle, char*)) {
    size_t n = 0;
    if (sizeOf(h, &n) != kSuccess || n <= 1) return std::string();
    std::string text(n, '\0');
    if (get(h, text.data()) != kSuccess) return std::string();
    text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
    return text;
  };
  // nvJitLinkAddData compiles the PTX (ptxas' errors surface here); Complete links.
  r = a.addData(h, kInputPtx, ptx.data(), ptx.size(), "tl-ptx input");
  const char* failed = r != kSuccess ? "nvJitLinkAddData" : nullptr;
  if (!failed && (r = a.complete(h)) != kSuccess) failed = "nvJitLinkComplete";
  info.log = readLog(a.getInfoLogSize, a.getInfoLog);
  info.ok = !failed;
  if (failed) {
    std::string err = readLog(a.getErrorLogSize, a.getErrorLog);
    info.log += err;
    if (err.empty()) info.log += std::string(failed) + ": " + resultName(r) + "\n";
  }
  parsePtxasReport(info.log, info);
  if (info.ok && cubinOut) {
    size_t n = 0;
    std::string cubin;
    if (a.getLinkedCubinSize(h, &n) == kSuccess && n > 0) {
      cubin.resize(n);
      if (a.getLinkedCubin(h, cubin.data()) != kSuccess) cubin.clear();
    }
    if (cubin.empty()) {
      info.ok = false;
      info.log += "nvJitLinkGetLinkedCubin: no cubin\n";
    }
    *cubinOut = std::move(cubin);
  }
  a.destroy(&h);
  return info;
}

}  // namespace tl
