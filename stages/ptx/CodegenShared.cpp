// The block's shared memory in the generated module (contract): declares KernelEmitter::shared_,
// the array every ld.shared / st.shared of the thread IR addresses (byte offsets into it), when
// the function uses any (Function::sharedBytes > 0).
#include "ptx/CodegenInternal.h"

namespace tl::ptx {

// The block's shared memory: one 16-byte-aligned byte array of fn_.sharedBytes.
void KernelEmitter::declareShared() {
  if (fn_.sharedBytes <= 0) return;
  auto* arr = llvm::ArrayType::get(b_.getInt8Ty(), static_cast<uint64_t>(fn_.sharedBytes));
  shared_ = new llvm::GlobalVariable(module_, arr, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(arr),
                                     "tl_shared", nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
  shared_->setAlignment(llvm::Align(16));
}

}  // namespace tl::ptx
