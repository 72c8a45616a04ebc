// The block's shared memory in the generated module (contract): declares KernelEmitter::shared_,
// the array every ld.shared / st.shared of the thread IR addresses (byte offsets into it), when
// the function uses any (Function::sharedBytes > 0). Up to 48 KB it is a static array of
// sharedBytes; above, an external array of unknown size, i.e. dynamic shared memory, whose size
// the launch supplies (ptx/DynamicShared.h has the rule and why).
#include "ptx/CodegenInternal.h"
#include "ptx/DynamicShared.h"

namespace tl::ptx {

// The block's shared memory: one 16-byte-aligned (1024 with wgmma) byte array in addrspace(3), named tl_shared.
//   static:  @tl_shared = internal addrspace(3) global [N x i8] undef, align 16
//            -> .shared .align 16 .b8 tl_shared[N];
//   dynamic: @tl_shared = external addrspace(3) global [0 x i8], align 16
//            -> .extern .shared .align 16 .b8 tl_shared[];
// Addresses are byte offsets from its start either way (CodegenMemory.cpp's sharedAddress).
void KernelEmitter::declareShared() {
  if (fn_.sharedBytes <= 0) return;
  if (usesDynamicShared(fn_.sharedBytes)) {
    auto* arr = llvm::ArrayType::get(b_.getInt8Ty(), 0);
    shared_ = new llvm::GlobalVariable(module_, arr, false, llvm::GlobalValue::ExternalLinkage, nullptr, "tl_shared",
                                       nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
  } else {
    auto* arr = llvm::ArrayType::get(b_.getInt8Ty(), static_cast<uint64_t>(fn_.sharedBytes));
    shared_ = new llvm::GlobalVariable(module_, arr, false, llvm::GlobalValue::InternalLinkage,
                                       llvm::UndefValue::get(arr), "tl_shared", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, kShared);
  }
  // wgmma's operands are swizzled on address bits 4-9: their buffers sit at multiples of 1024
  // (SharedMemory.cpp), so the array starts on one too.
  bool wgmma = false;
  walk(fn_.body, [&](Op& op) { wgmma |= op.kind == OpKind::Wgmma; });
  shared_->setAlignment(llvm::Align(wgmma ? 1024 : 16));
}

}  // namespace tl::ptx
