"""`stitchcuda optimize --out DIR` writes what Accept writes: the model with its edit and the
program folder. The written model runs in a fresh Python process that has only PyTorch (no
harness, no host paths): it builds its .cu with nvcc, and on CPU tensors runs its original PyTorch
forward, warned once, with the original's results, at the generated shape and at others; moved
into a package (myproj/models/), it imports its program folder relative to itself and does the
same. Needs the host binary in STITCHCUDA_BIN (CTest passes it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("STITCHCUDA_BIN", "")

# Run in the output folder by a fresh interpreter: -E -s ignore PYTHONPATH and the user's site, -B
# leaves no __pycache__ (the program folder must hold only what was written and built elsewhere).
CHECK = r'''
import importlib, importlib.util, json, os, shutil, sys, warnings, torch
import stitchcuda_kernels as k
model = __import__(sys.argv[1])
spec = importlib.util.spec_from_file_location("original", sys.argv[2])
original = importlib.util.module_from_spec(spec); spec.loader.exec_module(original)
out = {"harness_loaded": any(m.startswith("stitchcuda_harness") for m in sys.modules)}
out["library"] = k.build(sys.argv[1] + ".cu", arch="sm_90")

def same(a, b):
    a = a if isinstance(a, (tuple, list)) else [a]
    b = b if isinstance(b, (tuple, list)) else [b]
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))

def check(m, key):
    # Off the GPU the kept model runs its original forward, warned once, whatever the shape: the
    # generated one, a wider last dim (where the model takes one), twice the batch.
    torch.manual_seed(0); ref = original.Model(*original.get_init_inputs())
    torch.manual_seed(1); inputs = original.get_inputs()
    shapes = [inputs, [torch.cat([x, x]) if isinstance(x, torch.Tensor) else x for x in inputs]]
    if sys.argv[3] == "wider":
        shapes.append([torch.cat([x, x[..., :1]], dim=-1) if isinstance(x, torch.Tensor) else x for x in inputs])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out[key + "_equal"] = [same(m(*xs), ref(*xs)) for xs in shapes]
    out[key + "_warnings"] = [str(w.message) for w in seen]

torch.manual_seed(0); check(model.Model(*original.get_init_inputs()), "cpu")
# The same files copied into a package elsewhere, with no top-level package of that name to fall back
# on: the forward imports its program folder relative to itself.
import tempfile
project = tempfile.mkdtemp()
os.makedirs(os.path.join(project, "myproj", "models"))
for d in ("myproj", "myproj/models"):
    open(os.path.join(project, d, "__init__.py"), "w").close()
shutil.copy(sys.argv[1] + ".py", os.path.join(project, "myproj", "models"))
shutil.copytree("stitchcuda_kernels", os.path.join(project, "myproj", "models", "stitchcuda_kernels"))
sys.modules.pop("stitchcuda_kernels")
sys.path[:] = [project] + [p for p in sys.path if p not in ("", os.getcwd())]
packaged = importlib.import_module("myproj.models." + sys.argv[1])
torch.manual_seed(0); check(packaged.Model(*original.get_init_inputs()), "package")
out["package_loader"] = sys.modules["myproj.models.stitchcuda_kernels"].__file__
print(json.dumps(out))
'''


@unittest.skipUnless(BIN, "set STITCHCUDA_BIN to the stitchcuda binary")
class OptimizeOutTest(unittest.TestCase):
    def export(self, task: str, other_shape: str) -> tuple[str, dict]:
        out = tempfile.mkdtemp(prefix="stitch-out-")
        run = subprocess.run([BIN, "optimize", os.path.join(REPO, task), "--python", sys.executable, "--log-level", "warning",
                              "--out", out], capture_output=True, text=True, timeout=600)
        self.assertIn(run.returncode, (0, 3, 4), run.stdout + run.stderr)
        self.assertIn("program: ", run.stdout)
        name = os.path.splitext(os.path.basename(task))[0]
        env = {"PATH": "/usr/bin:/bin", "HOME": out, "XDG_CACHE_HOME": os.path.join(out, "cache")}
        check = subprocess.run([sys.executable, "-B", "-E", "-s", "-c", CHECK, name, os.path.join(REPO, task), other_shape], cwd=out, env=env,
                               capture_output=True, text=True, timeout=600)
        self.assertEqual(check.returncode, 0, check.stderr)
        return out, json.loads(check.stdout.strip().splitlines()[-1])

    def assertKeepsOnlyWorkspaceFiles(self, out: str, name: str) -> None:
        self.assertEqual(sorted(os.listdir(os.path.join(out, "stitchcuda_kernels"))), ["__init__.py", name + ".cu"])
        text = open(os.path.join(out, name + ".py")).read()
        self.assertNotIn("stitchcuda_harness", text)
        self.assertNotIn(os.path.expanduser("~"), text)
        self.assertNotIn("load_library", text)
        self.assertIn("from stitchcuda_kernels import load_program", text)
        self.assertNotIn("#include \"stitch_abi.h\"", open(os.path.join(out, "stitchcuda_kernels", name + ".cu")).read())

    def assertRunsAsProgram(self, result: dict) -> None:
        self.assertFalse(result["harness_loaded"])
        self.assertTrue(os.path.isfile(result["library"]))
        for key in ("cpu", "package"):  # off the GPU: the original forward, the original's results
            self.assertTrue(result[key + "_equal"] and all(result[key + "_equal"]), result)
            self.assertEqual(len(result[key + "_warnings"]), 1, result)
            self.assertIn("is on cpu", result[key + "_warnings"][0])
            self.assertIn("running the original PyTorch forward", result[key + "_warnings"][0])
        self.assertIn("/myproj/models/stitchcuda_kernels/", result["package_loader"])

    def test_a_whole_forward_program(self) -> None:
        out, result = self.export("examples/elementwise_chain.py", "wider")
        self.assertKeepsOnlyWorkspaceFiles(out, "elementwise_chain")
        self.assertRunsAsProgram(result)
        self.assertEqual(len(result["cpu_equal"]), 3)  # the wider last dim was run too

    def test_a_partial_program_with_segments_and_library_calls(self) -> None:
        # Its flatten feeds a Linear: only the batch size may change.
        out, result = self.export("tests/fixtures/tasks/partial_sort.py", "none")
        self.assertKeepsOnlyWorkspaceFiles(out, "partial_sort")
        text = open(os.path.join(out, "partial_sort.py")).read()
        self.assertIn("program.segment(1,", text)
        self.assertIn("torch.ops.aten.sort.default", text)
        self.assertRunsAsProgram(result)


if __name__ == "__main__":
    unittest.main()
