#include "ir/MmaLayout.h"

namespace tl {

int MmaInstr::regs(MmaOperand op) const {
  switch (op) {
    case MmaOperand::A: return m * k / kWarpSize;
    case MmaOperand::B: return k * n / kWarpSize;
    case MmaOperand::C: return m * n / kWarpSize;
  }
  return 0;
}

int MmaInstr::kRun() const { return in == DType::F32 ? 1 : isFp8(in) ? 4 : 2; }

std::string MmaInstr::shapeName() const {
  return "m" + std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k);
}

const char* MmaInstr::typeName() const {
  return in == DType::F16 ? "f16" : in == DType::BF16 ? "bf16" : in == DType::F32 ? "tf32" : in == DType::F8E4M3 ? "e4m3" : "e5m2";
}

std::string MmaInstr::ptx(DType acc) const {
  const char* t = typeName();
  const char* c = acc == DType::F16 ? "f16" : "f32";
  return "mma.sync.aligned." + shapeName() + ".row.col." + c + "." + t + "." + t + "." + c;
}

int MmaInstr::minArch() const { return isFp8(in) ? 89 : 80; }

std::optional<MmaInstr> mmaInstrFor(DType in, bool tf32) {
  switch (in) {
    case DType::F16: case DType::BF16: return MmaInstr{16, 8, 16, in};
    case DType::F8E4M3: case DType::F8E5M2: return MmaInstr{16, 8, 32, in};
    case DType::F32: return tf32 ? std::optional<MmaInstr>(MmaInstr{16, 8, 8, in}) : std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<MmaInstr> mmaInstrOf(DType in, int aRegs) {
  auto i = mmaInstrFor(in, true);
  if (!i || i->regs(MmaOperand::A) != aRegs) return std::nullopt;
  return i;
}

std::pair<int, int> mmaFragmentCoord(const MmaInstr& instr, MmaOperand op, int lane, int e) {
  const int g = lane >> 2, t = lane & 3;
  if (op == MmaOperand::C) return {g + 8 * (e >> 1), 2 * t + (e & 1)};
  if (instr.in == DType::F32) {  // m16n8k8 tf32
    if (op == MmaOperand::A) return {g + 8 * (e & 1), t + 4 * (e >> 1)};
    return {t + 4 * e, g};
  }
  const int run = instr.kRun();       // 2 (f16/bf16) or 4 (fp8) consecutive k per register
  const int half = instr.k / 2;       // 8 or 16: the second k half
  if (op == MmaOperand::A) {
    const int perReg = run;            // elements per 32-bit register
    const int reg = e / perReg;        // a register: 0 row g, 1 row g+8, 2 row g k+half, 3 row g+8 k+half
    return {g + 8 * (reg & 1), run * t + e % perReg + half * (reg >> 1)};
  }
  const int reg = e / run;  // 0: k 0..half-1, 1: the second half
  return {run * t + e % run + half * reg, g};
}

LayoutPtr mmaAccumulatorLayout(int64_t M, int64_t N, int numWarps, std::string* why, bool rowsOnly) {
  // Triton's warpsPerTile for MMA v2: double the warps along M while M has at least as many
  // 16-row pieces left per warp as N has 16-column pairs of 8-column pieces, else along N.
  int w0 = 1, w1 = 1;
  if (rowsOnly && M % (16 * int64_t(numWarps)) == 0) w0 = numWarps;
  while (w0 * w1 < numWarps) {
    if (M / (16 * w0) >= N / (16 * w1) && M / (16 * w0) >= 2) w0 *= 2;
    else if (N / (8 * w1) >= 2) w1 *= 2;
    else w0 *= 2;
  }
  if (M % (16 * w0) != 0 || N % (8 * w1) != 0) {
    if (why)
      *why = "a " + std::to_string(M) + " x " + std::to_string(N) + " accumulator does not divide into 16 x 8 pieces for " +
             std::to_string(numWarps) + " warps arranged " + std::to_string(w0) + " x " + std::to_string(w1) +
             " (needs M a multiple of " + std::to_string(16 * w0) + " and N of " + std::to_string(8 * w1) + ")";
    return nullptr;
  }
  return Layout::blocked({1, 2}, {8, 4}, {w0, w1}, {1, 0});
}

int64_t wgmmaAddress(const WgmmaOperandLayout& l, int64_t start, int64_t major, int64_t k) {
  const int64_t S = l.swizzle;
  const int64_t o = l.mnMajor ? (major % (S / 2)) * 2 + (major / (S / 2)) * l.lbo + (k % 8) * S + (k / 8) * l.sbo
                              : (major % 8) * S + (major / 8) * l.sbo + l.elemBytes * k;
  const int64_t addr = start + o;
  return addr ^ (((addr >> 7) & (S / 16 - 1)) << 4);
}

int wgmmaSwizzleCode(int swizzle) { return swizzle == 128 ? 1 : swizzle == 64 ? 2 : swizzle == 32 ? 3 : 0; }

uint64_t wgmmaDescriptor(const WgmmaOperandLayout& l, uint64_t start) {
  auto enc = [](uint64_t x) { return (x & 0x3FFFF) >> 4; };
  // K-major swizzled layouts do not use the leading byte offset: the ISA says "assumed 1".
  const uint64_t lbo = l.mnMajor ? enc(uint64_t(l.lbo)) : 1;
  return enc(start) | lbo << 16 | enc(uint64_t(l.sbo)) << 32 | uint64_t(wgmmaSwizzleCode(l.swizzle)) << 62;
}

}  // namespace tl
