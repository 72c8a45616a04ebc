#!/usr/bin/env python3
"""Adds "source_sha256" to tl-ptx results files that were measured before tl-ptx wrote it,
only where the measured source can be proved (docs/viz.md, "Pairing measurements").

For each results file (and each "tilelab" results document inside compare.json):
  1. the commit that last changed the results file (git log -1 -- FILE);
  2. the kernel file named by its "source" field, as it was at that commit (git show C:SOURCE);
  3. if those bytes are identical to the kernel file in the working tree, the SHA-256 of them is
     written as "source_sha256" right after "source"; otherwise the document is left unpaired
     and the script says why.
Only a line is inserted: every other byte of the file stays as it was. A document that already
has "source_sha256" is left alone. Run from the repository root:
  python3 viz/tools/pair_checked_in_results.py bench/results/gpu
"""
import hashlib
import pathlib
import re
import subprocess
import sys

SOURCE_LINE = re.compile(r'^(\s*)"source": "([^"]*)",\n$')


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def main(root):
    files = sorted(pathlib.Path(root).rglob("*.json"))
    for f in files:
        commit = git("log", "-1", "--format=%H", "--", str(f)).decode().strip()
        if not commit:
            print(f"{f}: not committed, left alone")
            continue
        lines = f.read_text().splitlines(keepends=True)
        out, changed = [], False
        for i, line in enumerate(lines):
            out.append(line)
            m = SOURCE_LINE.match(line)
            if not m:
                continue
            indent, source = m.groups()
            if i + 1 < len(lines) and '"source_sha256"' in lines[i + 1]:
                continue
            try:
                then = git("show", f"{commit}:{source}")
            except subprocess.CalledProcessError:
                print(f"{f}: {source} did not exist at {commit[:10]}: unpaired")
                continue
            now_path = pathlib.Path(source)
            now = now_path.read_bytes() if now_path.exists() else None
            if now != then:
                print(f"{f}: {source} changed since {commit[:10]} (measured then): unpaired")
                continue
            digest = hashlib.sha256(then).hexdigest()
            out.append(f'{indent}"source_sha256": "{digest}",\n')
            changed = True
            print(f"{f}: {source} at {commit[:10]} == working tree: {digest}")
        if changed:
            f.write_text("".join(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/gpu")
