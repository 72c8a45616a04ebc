#!/usr/bin/env python3
"""Regenerates the section "Which kernels use which construct" of kernels/triton/MANIFEST.md.

Reads the manifest's status column (which kernels pass) and greps every kernels/triton/*.tl for
each Triton construct below, then rewrites the section at the end of the manifest. Run from the
repository root after adding a kernel or changing a status:  python3 tests/triton/construct_table.py
"""
import glob
import os
import re

MANIFEST = "kernels/triton/MANIFEST.md"
SECTION = "## Which kernels use which construct"

# (how the table names the construct, a regular expression that finds it in a kernel's source)
CONSTRUCTS = [
    ("`import triton`, `import triton.language as tl`", r"import triton\.language as tl"),
    ("`from triton.language.extra import libdevice`", r"from triton\.language\.extra import libdevice"),
    ("several `@triton.jit` functions, helpers with `return`", r"(?m)^\s+return "),
    ("docstrings", r'"""'),
    ("module-level `NAME: tl.constexpr = value`", r"(?m)^[A-Z0-9_]+: tl\.constexpr ="),
    ("annotated constexpr local", r"(?m)^    +[A-Z0-9_]+: tl\.constexpr ="),
    ("`float(\"-inf\")` / `-float('inf')`", r"float\(.-?inf.\)"),
    ("list shapes `[A, B]`", r"tl\.(zeros|full)\(\["),
    ("tuple return and tuple assignment", r"(?m)^\s+[a-z_]+, [a-z_]+(, [a-z_]+)? = "),
    ("`a if c else b`", r"(?m)^[^#]* if [^#]* else "),
    ("`tl.static_assert`", r"tl\.static_assert"),
    ("`tl.static_range`", r"tl\.static_range"),
    ("`tl.range(..., num_stages=)`", r"num_stages="),
    ("`tl.range(..., flatten=)` / `warp_specialize=`", r"flatten=|warp_specialize="),
    ("`min(a, b)` of scalars", r"= min\("),
    ("`<<`, `>>`", r"<<|>>"),
    ("`while` (runtime condition)", r"(?m)^\s+while "),
    ("if / elif / else on constexprs", r"(?m)^\s+elif "),
    ("`tl.atomic_cas`, `tl.atomic_xchg`", r"tl\.atomic_"),
    ("`tl.debug_barrier`", r"tl\.debug_barrier"),
    ("dtype attributes (`x.dtype`, `.element_ty`)", r"\.dtype"),
    ("`tl.trans`, `.T`", r"tl\.trans|\.T\b"),
    ("`tl.dot(a, b, acc)`", r"tl\.dot"),
    ("`tl.math.exp2`, `tl.math.log2`", r"tl\.math\."),
    ("`tl.sin`, `tl.cos`, `tl.floor`, `tl.ceil`, `tl.erf`, `tl.fma`, `tl.clamp`", r"tl\.fma"),
    ("`tl.num_programs`", r"tl\.num_programs"),
    ("`tl.cdiv`", r"tl\.cdiv"),
    ("`tl.where`", r"tl\.where"),
    ("`.to(tl.int64)`, `.to(tl.float16)`", r"\.to\(tl\.(int64|float16)\)"),
    ("string constexpr", r'[A-Z_]+="'),
    ("`tl.assume`", r"tl\.assume"),
    ("`tl.multiple_of`, `tl.max_contiguous`", r"tl\.multiple_of"),
    ("`tl.rand`", r"tl\.rand\("),
    ("`libdevice.asin`, `libdevice.tanh`", r"libdevice\.asin"),
    ("fp8 dtypes", r"tl\.float8"),
    ("`tl.pointer_type` (pointers loaded from memory)", r"tl\.pointer_type"),
    ("`tl.make_block_ptr`, `tl.advance`, `boundary_check=`", r"tl\.make_block_ptr"),
    ("`tl.make_tensor_descriptor`, `desc.load` / `desc.store`", r"tl\.make_tensor_descriptor"),
    ("`tl.reshape`, `tl.permute`, `tl.split` (3-D tiles)", r"tl\.reshape"),
]


def main():
    text = open(MANIFEST).read()
    rows = [l for l in text.split("\n") if l.startswith("| `")]
    passing = {re.match(r"\| `([^`]*)`", l).group(1) for l in rows if re.search(r"\|\s*passes\s*\|\s*$", l)}
    sources = {os.path.basename(f)[:-3]: open(f).read() for f in sorted(glob.glob("kernels/triton/*.tl"))}

    def names(stems):
        if not stems:
            return "-"
        shown = ", ".join(stems[:6])
        return shown + (" and %d more" % (len(stems) - 6) if len(stems) > 6 else "")

    out = [SECTION, "",
           "Made by `python3 tests/triton/construct_table.py` (run it again after a change). A construct",
           "in **bold** runs in at least one passing kernel; the others appear only in blocked ones.", "",
           "| construct | passing kernels | blocked kernels |", "|---|---|---|"]
    for name, pattern in CONSTRUCTS:
        users = [k for k, src in sources.items() if re.search(pattern, src)]
        ok = [k for k in users if k in passing]
        blocked = [k for k in users if k not in passing]
        out.append("| %s | %s | %s |" % ("**%s**" % name if ok else name, names(ok), names(blocked)))
    if SECTION in text:
        text = text[:text.index(SECTION)]
    open(MANIFEST, "w").write(text.rstrip("\n") + "\n\n" + "\n".join(out) + "\n")


if __name__ == "__main__":
    main()
