// The front end's public face: .tl source -> AST -> (launch config, specialized block IR).
//
//   auto parsed = parseKernelFile(file, diag);           // lex + parse; syntax errors
//   LaunchConfig launch = evalLaunch(*parsed, overrides, diag);  // the @launch decorator
//   auto fn = compileKernel(*parsed, specializationFor(*parsed, launch), diag);  // block IR
//
// Every function reports located errors into `diag` and returns nullptr / an empty result when
// it cannot go on; none of them crashes or asserts on any input.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/Launch.h"
#include "ir/IR.h"

namespace tl {

namespace ast {
struct Module;  // frontend/AST.h
}

// A parsed .tl file: its source and AST. The AST may hold several functions; "the" kernel (the
// entry) is the one named by --kernel, else the function with @launch, else the first @jit one
// (ast::Module::mainKernel).
struct ParsedKernel {
  std::shared_ptr<const SourceFile> file;
  std::unique_ptr<ast::Module> module;
  ParsedKernel();
  ~ParsedKernel();
  ParsedKernel(ParsedKernel&&) noexcept;
  ParsedKernel& operator=(ParsedKernel&&) noexcept;

  std::string kernelName() const;
  // The kernel's parameters as declared: name, and whether constexpr / pointer annotated.
  struct ParamDecl {
    std::string name;
    bool isConstexpr = false;
    std::optional<Type> annotated;  // `x: *f32` -> ptr<f32>, `n: i32` -> i32
    Loc loc;
  };
  std::vector<ParamDecl> params() const;
};

// Lexes and parses. Returns nullptr only when nothing usable was parsed; check diag.hasErrors().
// `kernelName` (--kernel) names the entry function; empty: the default rule above.
std::unique_ptr<ParsedKernel> parseKernelFile(std::shared_ptr<const SourceFile> file, DiagEngine& diag,
                                              const std::string& kernelName = "");

// Evaluates the @launch decorator with the overrides applied. Errors (unknown name, a pointer
// parameter with no buffer, a grid that is not 1-3 positive ints, ...) go to diag.
LaunchConfig evalLaunch(const ParsedKernel& kernel, const std::vector<LaunchOverride>& overrides,
                        DiagEngine& diag);

// What a kernel is compiled for: one dtype per runtime parameter, one value per constexpr.
struct Specialization {
  std::map<std::string, Type> paramTypes;       // ptr<f32> for pointers, i32/f32/... for scalars
  std::map<std::string, int64_t> constexprs;
  std::map<std::string, std::string> stringConstexprs;  // ACTIVATION="leaky_relu"
  std::map<std::string, double> floatConstexprs;        // eps=1e-5
  int numStages = 0;                            // the launch's num_stages (0: not given), put on
                                                // each loop with a dot in its body
  int maxRegisters = 0;                         // the launch's maxnreg (0: not given): the
                                                // Function's maxRegisters (PTX .maxnreg)
  std::string key() const;                      // stable text, e.g. for caches
};
Specialization specializationFor(const ParsedKernel& kernel, const LaunchConfig& launch);

// Semantic analysis + IR generation: returns verified block IR, or nullptr with errors in diag
// (name, shape, dtype and constexpr errors, several per run where analysis can go on).
std::unique_ptr<Function> compileKernel(const ParsedKernel& kernel, const Specialization& spec,
                                        DiagEngine& diag);

}  // namespace tl
