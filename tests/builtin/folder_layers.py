"""The built-in brain's folders include only the folders before them in its pipeline
(agents/builtin/README.md): kernel, ops, normalize, lower, plan, emit; cuda holds the programs' own
CUDA; the brain itself (the files at the top) may include any. Fails naming each include that
reaches forward (a cycle in the making) or a folder this list does not know.
    python3 tests/builtin/folder_layers.py [ROOT]"""
from __future__ import annotations

import os
import re
import sys

ORDER = ["kernel", "ops", "normalize", "lower", "plan", "emit"]
INCLUDE = re.compile(r'^\s*#include\s+"agents/builtin/(?:([a-z]+)/)?[^"/]+"', re.M)


def allowed(folder: str) -> set[str]:
    if folder == "cuda":
        return {"cuda"}
    return set(ORDER[: ORDER.index(folder) + 1]) | ({"cuda"} if folder == "emit" else set())


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    base = os.path.join(root, "agents", "builtin")
    bad = []
    for folder in sorted(os.listdir(base)):
        path = os.path.join(base, folder)
        if not os.path.isdir(path):
            continue
        if folder not in ORDER and folder != "cuda":
            bad.append(f"agents/builtin/{folder}/: a folder the pipeline's order does not name (add it to ORDER)")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".h", ".cpp", ".cuh")):
                continue
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for m in INCLUDE.finditer(f.read()):
                    target = m.group(1) or "(the brain)"
                    if target not in allowed(folder):
                        bad.append(f"agents/builtin/{folder}/{name} includes agents/builtin/{target}: "
                                   f"{folder}/ may include only {', '.join(sorted(allowed(folder)))}")
    for line in bad:
        print(line)
    print(f"{len(bad)} include(s) against the folders' order")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
