#!/usr/bin/env python3
"""Inputs for the tensor-core accumulation probe (bench/gpu/accum_probe_h200.sh).

How does a wgmma add up its products? tests/thread/kernels/ring_dot.tl computes C = A @ B^T (BT=1)
from two .npy files, so that every element of C is one experiment: the dot of a row of A with a
row of B, both chosen here. The rows are drawn from families that expose an accumulator's
behaviour (wide exponent spreads, one large term among small ones, cancellation, sparse rows,
terms one ulp apart), with exponent and mantissa fields drawn directly so that every value is
exactly representable in the input dtype. The GPU's C, the inputs and tl-thread's C are
compared bit for bit by `compare` (sim/ThreadExecutor.cpp models the accumulation).

  accum_probe.py gen DIR --dtype f8e4m3 --M 2048 --N 64 --K 64 --seed 1   # DIR/a.npy, DIR/b.npy
  accum_probe.py compare GPU.npy MODEL.npy                                 # bit-exact agreement
"""
import argparse
import os
import sys

import numpy as np

# dtype: (exponent bits, mantissa bits, bias, largest finite exponent field, tilelab .npy note)
FORMATS = {
    "f8e4m3": (4, 3, 7, 15, "float8e4nv"),  # exponent field 15 is finite except mantissa 7 (NaN)
    "f8e5m2": (5, 2, 15, 30, "float8e5"),
    "bf16": (8, 7, 127, 254, "bfloat16"),
    "f16": (5, 10, 15, 30, None),
    "f32": (8, 23, 127, 254, None),  # read by the tensor core as tf32: its low 13 mantissa bits ignored
}


def encode(dtype, sign, efield, mant):
    """Bit patterns from fields (arrays of equal shape)."""
    eb, mb, _, emax, _ = FORMATS[dtype]
    efield = np.clip(efield, 0, emax)
    mant = mant & ((1 << mb) - 1)
    if dtype == "f8e4m3":  # e4m3 has no infinity; 0x7f / 0xff are NaN
        mant = np.where((efield == 15) & (mant == 7), 6, mant)
    return (sign.astype(np.uint32) << (eb + mb)) | (efield.astype(np.uint32) << mb) | mant.astype(np.uint32)


def rows(dtype, rng, count, K):
    """`count` rows of K bit patterns, family by row index modulo 8."""
    eb, mb, bias, emax, _ = FORMATS[dtype]
    span = min(emax - 1, 40) // 2  # exponent spread kept inside f32's range for the wide formats
    lo, hi = max(0, bias - span), min(emax, bias + span)
    out = np.zeros((count, K), dtype=np.uint32)
    for i in range(count):
        fam = i % 8
        sign = rng.integers(0, 2, K)
        mant = rng.integers(0, 1 << mb, K)
        if fam == 0:  # randn-like: exponents near the bias
            e = rng.integers(bias - 3, bias + 3, K, endpoint=True)
        elif fam == 1:  # every finite exponent in range, subnormals included
            e = rng.integers(lo, hi, K, endpoint=True)
        elif fam == 2:  # one sign, a wide spread
            sign[:] = rng.integers(0, 2)
            e = rng.integers(max(lo, bias - 8), bias + 2, K, endpoint=True)
        elif fam == 3:  # sparse: 1-4 terms at random places
            e = np.zeros(K, dtype=np.int64)
            mant[:] = 0
            for k in rng.choice(K, rng.integers(1, 5), replace=False):
                e[k] = rng.integers(max(lo, 1), hi, endpoint=True)
                mant[k] = rng.integers(0, 1 << mb)
        elif fam == 4:  # one large term among small ones
            e = rng.integers(max(lo, bias - 9), bias, K, endpoint=True)
            e[rng.integers(0, K)] = rng.integers(bias + 3, hi, endpoint=True)
        elif fam == 5:  # cancellation: x and -x pairs, and a small residue
            e = rng.integers(bias - 2, bias + 4, K, endpoint=True)
            perm = rng.permutation(K)
            half = K // 2
            e[perm[half:2 * half]] = e[perm[:half]]
            mant[perm[half:2 * half]] = mant[perm[:half]]
            sign[perm[half:2 * half]] = 1 - sign[perm[:half]]
            if K % 2 == 0:
                e[perm[0]] = rng.integers(max(lo, bias - 10), bias - 4, endpoint=True)
        elif fam == 6:  # ones, and one term 2^-j below them
            e = np.full(K, bias)
            mant[:] = 0
            sign[:] = 0
            k = rng.integers(0, K)
            e[k] = max(1, bias - int(rng.integers(1, 20)))
            mant[k] = rng.integers(0, 1 << mb)
            sign[k] = rng.integers(0, 2)
        else:  # only the first or the last half nonzero
            e = rng.integers(bias - 4, bias + 4, K, endpoint=True)
            if rng.integers(0, 2):
                e[:K // 2] = 0
                mant[:K // 2] = 0
            else:
                e[K // 2:] = 0
                mant[K // 2:] = 0
        out[i] = encode(dtype, sign, e, mant)
    return out


def bcols(dtype, rng, count, K):
    """B's rows (C's columns): ones, exponents near the bias, a wide spread, powers of two."""
    eb, mb, bias, emax, _ = FORMATS[dtype]
    out = np.zeros((count, K), dtype=np.uint32)
    for n in range(count):
        sign = rng.integers(0, 2, K)
        mant = rng.integers(0, 1 << mb, K)
        kind = n % 4
        if kind == 0:
            sign[:], mant[:], e = 0, 0, np.full(K, bias)
        elif kind == 1:
            e = rng.integers(bias - 2, bias + 2, K, endpoint=True)
        elif kind == 2:
            e = rng.integers(max(1, bias - 6), min(emax, bias + 4), K, endpoint=True)
        else:
            mant[:] = 0
            e = rng.integers(bias - 4, bias + 4, K, endpoint=True)
        out[n] = encode(dtype, sign, e, mant)
    return out


def write_npy(path, bits, dtype):
    note = FORMATS[dtype][4]
    if dtype == "f16":
        np.save(path, bits.astype(np.uint16).view(np.float16))
        return
    if dtype == "f32":
        np.save(path, bits.astype(np.uint32).view(np.float32))
        return
    width = 1 if dtype.startswith("f8") else 2
    descr = "|u1" if width == 1 else "<u2"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), } # tilelab: %s" % (
        descr, bits.shape[0], bits.shape[1], note)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(bits.astype(np.uint8 if width == 1 else "<u2").tobytes())


def load_f32_bits(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            sys.exit(path + ": not a .npy file")
        major = f.read(2)[0]
        hlen = int.from_bytes(f.read(2 if major == 1 else 4), "little")
        header = f.read(hlen).decode()
        if "'<f4'" not in header:
            sys.exit(path + ": expected f32 data")
        return np.frombuffer(f.read(), dtype="<u4")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--dtype", choices=sorted(FORMATS), required=True)
    g.add_argument("--M", type=int, default=2048)
    g.add_argument("--N", type=int, default=64)
    g.add_argument("--K", type=int, default=64)
    g.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("compare")
    c.add_argument("gpu")
    c.add_argument("model")
    a = p.parse_args()
    if a.cmd == "gen":
        rng = np.random.default_rng(a.seed)
        os.makedirs(a.dir, exist_ok=True)
        write_npy(os.path.join(a.dir, "a.npy"), rows(a.dtype, rng, a.M, a.K), a.dtype)
        write_npy(os.path.join(a.dir, "b.npy"), bcols(a.dtype, rng, a.N, a.K), a.dtype)
        return
    x, y = load_f32_bits(a.gpu), load_f32_bits(a.model)
    if x.shape != y.shape:
        sys.exit("shapes differ: %s vs %s" % (x.shape, y.shape))
    diff = np.count_nonzero(x != y)
    print("%s: %d of %d elements differ in their bits" % ("AGREE" if diff == 0 else "DIFFER", diff, x.size))
    sys.exit(0 if diff == 0 else 1)


if __name__ == "__main__":
    main()
