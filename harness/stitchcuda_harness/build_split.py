"""One candidate `.cu` as several translation units, so nvcc compiles its generated kernels on
several cores at once: a network of 100+ operators is one file of 100-300 kernels, and nvcc runs
each file's front end, optimizer, assembler and host compiler on one core.

The built-in coder marks the file (agents/builtin/emit/Coder.h): `// stitch:shared-end` ends the prelude
every kernel needs, and `// stitch:kernel <launcher>...` ... `// stitch:kernel-end` hold each generated
kernel with its launchers `static int <launcher>(const StitchTensor*, int64_t, cudaStream_t)` (several
where repeats of one kernel share its code, agents/builtin/emit/SharedKernels.h). The
blocks go into part files (the prelude, then their blocks, each launcher made external), and the main
file keeps everything else with a declaration of each moved launcher. `#line` keeps every diagnostic
on the candidate's own file and line. A file without the markers (an LLM's) stays one unit."""
from __future__ import annotations

import re
from dataclasses import dataclass

SHARED_END = "// stitch:shared-end"
KERNEL_BEGIN = "// stitch:kernel "
KERNEL_END = "// stitch:kernel-end"
# Kernels a part gets at least. A part's fixed cost (the prelude through cudafe++ and the host
# compiler) is about a second of CPU, and the main unit (library calls, host entry) takes about 4 s
# whatever the split: ResNet-101's 271 kernels took 27.5 s of CPU whole, its main unit 3.8 s and a
# part of 18 kernels 2.2 s (nvcc 13, sm_90a). More parts than that only add fixed costs, which
# jobs building side by side on one machine (a bench on several GPUs) pay in cores.
MIN_KERNELS_PER_PART = 16
# A moved launcher links across the library's units and no further: hidden, it is never exported
# nor bound to a same-named launcher of another candidate's library loaded in the same process.
_SHARED = '__attribute__((visibility("hidden")))'


@dataclass
class Block:
    launchers: list[str]
    first_line: int  # one-based line of the block's first line of code in the candidate
    text: str


@dataclass
class Split:
    main: str
    parts: list[str]


def _line_directive(line: int, source: str) -> str:
    return f'#line {line} "{source}"\n'


def split_units(text: str, source: str, most_parts: int) -> Split | None:
    """The main unit and up to `most_parts` kernel units, or None where the file is better built
    whole (no markers, or too few kernels to share out)."""
    lines = text.splitlines(keepends=True)
    try:
        shared_end = next(i for i, l in enumerate(lines) if l.rstrip("\n") == SHARED_END)
    except StopIteration:
        return None
    blocks: list[Block] = []
    main: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith(KERNEL_BEGIN):
            main.append(line)
            i += 1
            continue
        launchers = line[len(KERNEL_BEGIN):].split()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip("\n") == KERNEL_END), None)
        if end is None or not launchers or not all(re.fullmatch(r"[A-Za-z_]\w*", l) for l in launchers):
            return None  # a marker the coder did not write: build the file as it is
        external = "".join(lines[i + 1:end])
        for launcher in launchers:
            made = re.sub(rf"\bstatic\s+int\s+{launcher}\s*\(", f"{_SHARED} int {launcher}(", external, count=1)
            if made == external:
                return None
            external = made
            main.append(f"{_SHARED} int {launcher}(const StitchTensor* t, int64_t rows, cudaStream_t stream);\n")
        blocks.append(Block(launchers, i + 2, external))
        main.append(_line_directive(end + 2, source))
        i = end + 1
    parts = min(most_parts, len(blocks) // MIN_KERNELS_PER_PART)
    if parts < 1:
        return None
    shared = _line_directive(1, source) + "".join(lines[:shared_end])
    groups: list[list[Block]] = [[] for _ in range(parts)]
    sizes = [0] * parts
    for b in sorted(blocks, key=lambda b: -len(b.text)):  # largest first onto the lightest part
        k = sizes.index(min(sizes))
        groups[k].append(b)
        sizes[k] += len(b.text)
    units = [shared + "".join(_line_directive(b.first_line, source) + b.text for b in sorted(g, key=lambda b: b.first_line))
             for g in groups]
    return Split(_line_directive(1, source) + "".join(main), units)
