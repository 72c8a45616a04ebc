// The host target, LLVM's optimization pipeline and ORC's JIT for tl-cpu (contract in CpuJit.h).
#include "cpu/CpuJit.h"

#include "cpu/CpuCache.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace tl::cpu {

namespace {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::string errorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

}  // namespace

std::string CpuTarget::str() const {
  return isa + " (" + cpu + "), " + std::to_string(vectorBytes / 4) + " x f32 per vector" +
         (vectorMath ? ", libmvec" : ", scalar libm");
}

CpuTarget hostTarget(const std::string& isa) {
  initializeLLVM();
  CpuTarget t;
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  const bool has512 = features.lookup("avx512f") && features.lookup("avx512vl") && features.lookup("avx512dq");
  const bool has256 = features.lookup("avx2") && features.lookup("fma") && features.lookup("f16c");
  std::string want = isa.empty() ? (has512 ? "avx512" : has256 ? "avx2" : "sse4.2") : isa;
  if (want != "avx512" && want != "avx2" && want != "sse4.2")
    throw std::invalid_argument("unknown --isa '" + want + "' (expected avx512, avx2 or sse4.2)");
  if ((want == "avx512" && !has512) || (want == "avx2" && !has256))
    throw std::invalid_argument("this CPU (" + t.cpu + ") has no " + want);
  for (const auto& f : features) {
    if (!f.getValue()) continue;
    const std::string name = f.getKey().str();
    // A narrower ISA than the host's: the wider extensions are left out.
    if (want != "avx512" && name.rfind("avx512", 0) == 0) continue;
    if (want == "sse4.2" && (name.rfind("avx", 0) == 0 || name == "fma" || name == "f16c")) continue;
    t.features += (t.features.empty() ? "+" : ",+") + name;
  }
  if (want != "avx512") t.features += ",-avx512f";
  if (want == "sse4.2") t.features += ",-avx";
  t.isa = want;
  t.vectorBytes = want == "avx512" ? 64 : want == "avx2" ? 32 : 16;
  static const bool libmvec = [] {
    std::string err;
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &err);
  }();
  t.vectorMath = libmvec;
  return t;
}

namespace {

std::unique_ptr<llvm::TargetMachine> targetMachine(const CpuTarget& target, int optLevel, llvm::orc::JITTargetMachineBuilder& jtmb) {
  jtmb.setCPU(target.cpu);
  llvm::SubtargetFeatures features(target.features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  jtmb.setCodeGenOptLevel(optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                          : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                          : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                          : llvm::CodeGenOptLevel::None);
  auto tm = jtmb.createTargetMachine();
  if (!tm) throw std::runtime_error("tl-cpu: no target machine for the host: " + errorText(tm.takeError()));
  return std::move(*tm);
}

// Block IR -> optimized LLVM IR -> an x86 object file (and the IR / assembly when asked).
std::string compileToObject(const Function& fn, const CpuTarget& target, const CodegenOptions& cg, const JitOptions& jo,
                            llvm::TargetMachine& tm, CpuKernel& k) {
  auto t0 = std::chrono::steady_clock::now();
  CpuModule m = generateModule(fn, target, cg);
  k.times.codegenMs = msSince(t0);
  k.scratchBytes = m.scratchBytes;
  k.ops = m.ops;
  k.prints = m.prints;
  m.module->setDataLayout(tm.createDataLayout());
  m.module->setTargetTriple(tm.getTargetTriple().str());
  for (llvm::Function& f : *m.module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", target.cpu);
    f.addFnAttr("target-features", target.features);
    // Explicit 512-bit vectors stay 512-bit on CPUs that prefer 256 (skylake-avx512).
    f.addFnAttr("min-legal-vector-width", std::to_string(target.vectorBytes * 8));
    f.addFnAttr("prefer-vector-width", std::to_string(target.vectorBytes * 8));
  }

  t0 = std::chrono::steady_clock::now();
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    const llvm::OptimizationLevel level = jo.optLevel >= 3 ? llvm::OptimizationLevel::O3
                                          : jo.optLevel == 2 ? llvm::OptimizationLevel::O2
                                          : jo.optLevel == 1 ? llvm::OptimizationLevel::O1
                                                             : llvm::OptimizationLevel::O0;
    llvm::ModulePassManager mpm = jo.optLevel <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
    mpm.run(*m.module, mam);
  }
  k.times.optimizeMs = msSince(t0);
  if (jo.keepIR) {
    llvm::raw_string_ostream os(k.llvmIR);
    m.module->print(os, nullptr);
  }
  auto emit = [&](llvm::CodeGenFileType type) {
    llvm::SmallString<0> bytes;
    llvm::raw_svector_ostream os(bytes);
    llvm::legacy::PassManager pm;
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m.module);
    if (tm.addPassesToEmitFile(pm, os, nullptr, type)) throw std::runtime_error("tl-cpu: LLVM cannot emit code for this target");
    pm.run(*copy);
    return bytes.str().str();
  };
  if (jo.keepAssembly) k.assembly = emit(llvm::CodeGenFileType::AssemblyFile);
  t0 = std::chrono::steady_clock::now();
  std::string object = emit(llvm::CodeGenFileType::ObjectFile);
  k.times.objectMs = msSince(t0);
  return object;
}

}  // namespace

CpuKernel compileKernel(const Function& fn, const CpuTarget& target, const CodegenOptions& cg, const JitOptions& jo) {
  initializeLLVM();
  CpuKernel k;
  k.tracksStores = cg.trackStores;
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(target, jo.optLevel, jtmb);

  const bool useCache = jo.cache && !jo.keepIR && !jo.keepAssembly;
  std::optional<CachedKernel> hit;
  auto t0 = std::chrono::steady_clock::now();
  if (useCache) {
    k.times.cacheKey = CpuCache::keyOf(fn, target, cg, jo);
    hit = jo.cache->lookup(k.times.cacheKey, &k.times.cacheMiss);
  }
  k.times.cacheMs = msSince(t0);
  std::string object;
  if (hit) {
    object = std::move(hit->object);
    k.scratchBytes = hit->scratchBytes;
    k.ops = opsAt(fn, hit->opOrdinals);
    k.prints = hit->prints;
    k.times.cacheHit = true;
  } else {
    object = compileToObject(fn, target, cg, jo, *tm, k);
    if (useCache) {
      t0 = std::chrono::steady_clock::now();
      CachedKernel e{object, k.scratchBytes, opOrdinals(fn, k.ops), k.prints};
      std::string error;
      jo.cache->store(k.times.cacheKey, e, &error);  // a cache that cannot be written only costs the next run its compile
      k.times.cacheMs += msSince(t0);
    }
  }

  t0 = std::chrono::steady_clock::now();
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) throw std::runtime_error("tl-cpu: cannot create the JIT: " + errorText(jit.takeError()));
  llvm::orc::JITDylib& lib = (*jit)->getMainJITDylib();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process) throw std::runtime_error("tl-cpu: " + errorText(process.takeError()));
  lib.addGenerator(std::move(*process));
  llvm::orc::SymbolMap helpers;
  auto bind = [&](const char* name, auto* fn) {
    helpers[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
  };
  bind("tl_cpu_check_access", &tl_cpu_check_access);
  bind("tl_cpu_quick_check", &tl_cpu_quick_check);
  bind("tl_cpu_fail", &tl_cpu_fail);
  bind("tl_cpu_atomic", &tl_cpu_atomic);
  bind("tl_cpu_print", &tl_cpu_print);
  bind("tl_cpu_fp8_to_float", &tl_cpu_fp8_to_float);
  bind("tl_cpu_float_to_fp8", &tl_cpu_float_to_fp8);
  if (auto e = lib.define(llvm::orc::absoluteSymbols(std::move(helpers))))
    throw std::runtime_error("tl-cpu: " + errorText(std::move(e)));
  if (auto e = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "tl_cpu_program.o")))
    throw std::runtime_error("tl-cpu: " + errorText(std::move(e)));
  auto sym = (*jit)->lookup("tl_cpu_program");
  if (!sym) throw std::runtime_error("tl-cpu: " + errorText(sym.takeError()));
  k.program = sym->toPtr<ProgramFn>();
  k.jit = std::shared_ptr<llvm::orc::LLJIT>(std::move(*jit));
  k.times.jitMs = msSince(t0);
  return k;
}

}  // namespace tl::cpu
