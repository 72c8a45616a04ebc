// The front end's entry points (Frontend.h): parsing a file into a ParsedKernel, describing a
// kernel's parameters, and deriving the Specialization a launch asks for.
#include "frontend/Frontend.h"

#include "frontend/AST.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "frontend/Suggest.h"

#include <sstream>

namespace tl {

ParsedKernel::ParsedKernel() = default;
ParsedKernel::~ParsedKernel() = default;
ParsedKernel::ParsedKernel(ParsedKernel&&) noexcept = default;
ParsedKernel& ParsedKernel::operator=(ParsedKernel&&) noexcept = default;

std::string ParsedKernel::kernelName() const {
  const ast::Kernel* k = module ? module->mainKernel() : nullptr;
  return k ? k->name : std::string();
}

std::vector<ParsedKernel::ParamDecl> ParsedKernel::params() const {
  std::vector<ParamDecl> out;
  const ast::Kernel* k = module ? module->mainKernel() : nullptr;
  if (!k) return out;
  for (const auto& p : k->params) {
    ParamDecl d;
    d.name = p.name;
    d.loc = p.loc;
    d.isConstexpr = p.annot == ast::AnnotKind::Constexpr;
    if (p.annot == ast::AnnotKind::Pointer) d.annotated = Type::ptr(p.dtype);
    if (p.annot == ast::AnnotKind::Scalar) d.annotated = Type::scalar(p.dtype);
    out.push_back(std::move(d));
  }
  return out;
}

std::unique_ptr<ParsedKernel> parseKernelFile(std::shared_ptr<const SourceFile> file, DiagEngine& diag,
                                              const std::string& kernelName) {
  if (!file) {
    diag.error(Loc{}, "no source file");
    return nullptr;
  }
  auto pk = std::make_unique<ParsedKernel>();
  pk->file = file;
  std::vector<Token> toks = lex(*file, diag);
  pk->module = parseModule(toks, diag);
  if (!kernelName.empty()) {
    if (!pk->module->function(kernelName)) {
      std::vector<std::string> names;
      std::string list;
      for (const auto& k : pk->module->kernels) {
        names.push_back(k.name);
        list += (list.empty() ? "" : ", ") + k.name;
      }
      diag.error(Loc{1, 1}, "--kernel " + kernelName + ": the file has no function of that name" +
                                (list.empty() ? "" : " (it has " + list + ")") + didYouMean(kernelName, names));
      return nullptr;
    }
    pk->module->entryName = kernelName;
  }
  const ast::Kernel* main = pk->module->mainKernel();
  if (!main) {
    if (!diag.hasErrors()) diag.error(Loc{1, 1}, "no kernel in this file: expected '@jit' and 'def name(...):'");
    return pk->module->kernels.empty() ? nullptr : std::move(pk);
  }
  if (!main->decorator("jit"))
    diag.error(main->loc, "kernel '" + main->name + "' needs the @jit decorator on the line above 'def'");
  return pk;
}

Specialization specializationFor(const ParsedKernel& kernel, const LaunchConfig& launch) {
  Specialization s;
  s.numStages = launch.numStages;
  s.maxRegisters = launch.maxRegisters;
  for (const auto& p : kernel.params()) {
    if (p.isConstexpr) {
      auto it = launch.constexprs.find(p.name);
      if (it != launch.constexprs.end()) s.constexprs[p.name] = it->second;
      auto st = launch.stringConstexprs.find(p.name);
      if (st != launch.stringConstexprs.end()) s.stringConstexprs[p.name] = st->second;
      auto fl = launch.floatConstexprs.find(p.name);
      if (fl != launch.floatConstexprs.end()) s.floatConstexprs[p.name] = fl->second;
      continue;
    }
    if (const BufferSpec* b = launch.buffer(p.name)) {
      s.paramTypes[p.name] = Type::ptr(p.annotated ? p.annotated->dtype : b->dtype);
    } else if (auto it = launch.scalars.find(p.name); it != launch.scalars.end()) {
      s.paramTypes[p.name] = Type::scalar(p.annotated && !p.annotated->isPtr ? p.annotated->dtype : it->second.dtype);
    }
  }
  return s;
}

std::string Specialization::key() const {
  std::string k;
  for (const auto& [name, type] : paramTypes) k += (k.empty() ? "" : ",") + name + ":" + type.str();
  k += ";";
  bool first = true;
  for (const auto& [name, v] : constexprs) {
    k += (first ? "" : ",") + name + "=" + std::to_string(v);
    first = false;
  }
  for (const auto& [name, v] : floatConstexprs) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    k += (first ? "" : ",") + name + "=" + os.str();
    first = false;
  }
  for (const auto& [name, v] : stringConstexprs) {
    k += (first ? "" : ",") + name + "=\"" + v + "\"";
    first = false;
  }
  if (numStages > 0) k += ";num_stages=" + std::to_string(numStages);
  if (maxRegisters > 0) k += ";maxnreg=" + std::to_string(maxRegisters);
  return k;
}

}  // namespace tl
