// print_regs and assert_regs (ThreadOps.def) in LLVM IR, the way CUDA C's printf and assert
// compile (the CUDA device-runtime ABI):
//
//   print_regs  -> for each register r whose mask bit is on:
//                    i32 @vprintf(ptr %format, ptr %args)
//                  %format: a private constant string, runtime/DevicePrint.h's printfFormat (the
//                  same line the CPU stages print); %args: one buffer (a stack struct with every
//                  field at its natural alignment, as clang lays out printf's arguments) holding
//                  the three ctaids (i32), the element's index per dim (i32) and the value:
//                  floats widened to double (f16/bf16 through f32), i1 zero-extended to i32,
//                  i32/i64 as they are, pointers as their 64-bit address; with hex the value's
//                  bits (f32 -> i32, f16/bf16 -> zero-extended i32) for "0x%08x".
//   assert_regs -> for each register r whose condition is 0: vprintf of
//                    "<file>:<line>:<col>: error: device assertion failed: <msg> (pid (..) idx (..))"
//                  then void @__assertfail(ptr %msg, ptr %file, i32 %line, ptr %function, i64 1),
//                  which stops the kernel (the launch fails with CUDA_ERROR_ASSERT; tl-ptx then
//                  names the kernel's assertions, main.cpp).
// Every call sits in its own `masked` block (ifThen), so threads whose bit is off skip it.
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "ptx/CodegenInternal.h"

#include "runtime/DevicePrint.h"

namespace tl::ptx {

namespace {

llvm::Value* ctaid(llvm::IRBuilder<>& b, int axis) {
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  return b.CreateIntrinsic(ids[axis], {}, {});
}

}  // namespace

// vprintf(format, args): the args in a stack buffer allocated once, in the entry block.
void KernelEmitter::callVprintf(llvm::Value* format, const std::vector<llvm::Value*>& args) {
  llvm::Type* ptr = llvm::PointerType::get(ctx_, 0);
  llvm::FunctionCallee vprintf =
      module_.getOrInsertFunction("vprintf", llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr}, false));
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  llvm::StructType* st = llvm::StructType::get(ctx_, types);
  llvm::IRBuilder<> entry(&kernel_->getEntryBlock(), kernel_->getEntryBlock().getFirstInsertionPt());
  llvm::AllocaInst* buf = entry.CreateAlloca(st, nullptr, "printf.args");
  for (size_t k = 0; k < args.size(); ++k) b_.CreateStore(args[k], b_.CreateStructGEP(st, buf, unsigned(k)));
  llvm::Value* generic = b_.CreateAddrSpaceCast(buf, ptr);
  b_.CreateCall(vprintf, {format, generic});
}

// A register as vprintf's argument for dtype d (see the file comment).
llvm::Value* KernelEmitter::printfArg(llvm::Value* x, const Type& t, bool hex) {
  if (t.isPtr) return b_.CreatePtrToInt(x, b_.getInt64Ty());
  if (hex) {
    if (t.dtype == DType::I64) return x;
    if (t.dtype == DType::F32) return b_.CreateBitCast(x, b_.getInt32Ty());
    if (t.dtype == DType::F16 || t.dtype == DType::BF16) return b_.CreateZExt(b_.CreateBitCast(x, b_.getInt16Ty()), b_.getInt32Ty());
    return t.dtype == DType::I32 ? x : b_.CreateZExt(x, b_.getInt32Ty());
  }
  if (isFloat(t.dtype)) return b_.CreateFPExt(toF32(x), b_.getDoubleTy());
  if (t.dtype == DType::I1) return b_.CreateZExt(x, b_.getInt32Ty());
  return x;
}

void KernelEmitter::emitPrint(const Op& op) {
  const std::vector<int64_t>& shapeAttr = op.intsAttr("shape");
  const Shape shape(shapeAttr.begin(), shapeAttr.end());
  const bool hasValue = op.numOperands() > 1;
  const bool hex = op.intAttr("hex") != 0;
  const Type valueType = hasValue ? op.operand(1)->type : Type::scalar(DType::I1);
  const std::string fmt = printfFormat(shape, op.strAttr("prefix"), static_cast<int>(op.intAttr("operand")),
                                       valueType.dtype, valueType.isPtr, hex, hasValue);
  llvm::Value* format = b_.CreateGlobalString(fmt, "printf.format", 0, &module_);
  std::vector<std::vector<llvm::Value*>> cols;
  for (size_t k = 0; k < op.numOperands(); ++k) cols.push_back(regs(get(op.operand(k))));
  for (size_t r = 0; r < cols[0].size(); ++r) {
    ifThen(cols[0][r], [&]() -> llvm::Value* {
      std::vector<llvm::Value*> args{ctaid(b_, 0), ctaid(b_, 1), ctaid(b_, 2)};
      if (hasValue) {
        for (size_t d = 0; d < shape.size(); ++d) args.push_back(cols[2 + d][r]);
        args.push_back(printfArg(cols[1][r], valueType, hex));
      }
      callVprintf(format, args);
      return nullptr;
    }, nullptr);
  }
}

void KernelEmitter::emitAssert(const Op& op) {
  const std::vector<int64_t>& shapeAttr = op.intsAttr("shape");
  const Shape shape(shapeAttr.begin(), shapeAttr.end());
  const std::string& msg = op.strAttr("msg");
  const std::string path = sourcePath();
  // The located line, as the CPU stages word it (their caret line is the CPU's; the GPU says where).
  std::string where = path + ":" + std::to_string(op.loc.line) + ":" + std::to_string(op.loc.col) +
                      ": error: device assertion failed";
  std::string escaped;
  for (char c : where + (msg.empty() ? "" : ": " + msg)) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  std::string fmt = escaped + " (pid (%u, %u, %u)";
  if (!shape.empty()) {
    fmt += " idx (";
    for (size_t d = 0; d < shape.size(); ++d) fmt += d ? ", %i" : "%i";
    fmt += ")";
  }
  fmt += ")\n";
  llvm::Value* format = b_.CreateGlobalString(fmt, "assert.format", 0, &module_);
  llvm::Value* message = b_.CreateGlobalString(msg.empty() ? "device_assert" : msg, "assert.msg", 0, &module_);
  llvm::Value* file = b_.CreateGlobalString(path, "assert.file", 0, &module_);
  llvm::Value* function = b_.CreateGlobalString(fn_.name, "assert.function", 0, &module_);
  llvm::Type* ptr = llvm::PointerType::get(ctx_, 0);
  llvm::FunctionCallee assertfail = module_.getOrInsertFunction(
      "__assertfail", llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, b_.getInt32Ty(), ptr, b_.getInt64Ty()}, false));
  std::vector<std::vector<llvm::Value*>> cols;
  for (size_t k = 0; k < op.numOperands(); ++k) cols.push_back(regs(get(op.operand(k))));
  for (size_t r = 0; r < cols[0].size(); ++r) {
    ifThen(b_.CreateNot(cols[0][r]), [&]() -> llvm::Value* {
      std::vector<llvm::Value*> args{ctaid(b_, 0), ctaid(b_, 1), ctaid(b_, 2)};
      for (size_t d = 0; d < shape.size(); ++d) args.push_back(cols[1 + d][r]);
      callVprintf(format, args);
      b_.CreateCall(assertfail, {message, file, b_.getInt32(op.loc.line), function, b_.getInt64(1)});
      return nullptr;
    }, nullptr);
  }
}

}  // namespace tl::ptx
