"""`stitchcuda optimize --out DIR` writes what Accept writes: the model with its edit and the
program folder. The written model runs in a fresh Python process that has only PyTorch (no
harness, no host paths): it builds its .cu with nvcc, says it needs a GPU for the inputs it was
generated for and for another batch size (its rows are independent: chunks of the generated rows),
and runs its original PyTorch forward, identically, for other shapes. Needs the host binary in
STITCHCUDA_BIN (CTest passes it)."""
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
import importlib.util, json, sys, warnings, torch
import stitchcuda_kernels as k
model = __import__(sys.argv[1])
spec = importlib.util.spec_from_file_location("original", sys.argv[2])
original = importlib.util.module_from_spec(spec); spec.loader.exec_module(original)
out = {"harness_loaded": any(m.startswith("stitchcuda_harness") for m in sys.modules)}
out["library"] = k.build(sys.argv[1] + ".cu", arch="sm_90")
torch.manual_seed(0); m = model.Model(*original.get_init_inputs())
torch.manual_seed(0); ref = original.Model(*original.get_init_inputs())
torch.manual_seed(1); inputs = original.get_inputs()
try:
    m(*inputs)
except k.NeedsGpuError as e:
    out["needs_gpu"] = str(e)
# A wider last dim (where the model takes one): another shape than the program's, so the original
# forward runs.
if sys.argv[3] == "wider":
    other = [torch.cat([x, x[..., :1]], dim=-1) if isinstance(x, torch.Tensor) else x for x in inputs]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = m(*other)
    out["fallback_warning"] = [str(w.message) for w in seen]
    out["fallback_equal"] = bool(torch.equal(got, ref(*other)))
# Twice the batch: the program's rows are independent, so it runs in chunks, on a GPU.
try:
    m(*[torch.cat([x, x]) if isinstance(x, torch.Tensor) else x for x in inputs])
except k.NeedsGpuError as e:
    out["chunks_need_gpu"] = str(e)
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
        self.assertIn("needs CUDA tensors", result.get("needs_gpu", ""))
        self.assertIn("needs CUDA tensors", result.get("chunks_need_gpu", ""))

    def test_a_whole_forward_program(self) -> None:
        out, result = self.export("examples/elementwise_chain.py", "wider")
        self.assertKeepsOnlyWorkspaceFiles(out, "elementwise_chain")
        self.assertRunsAsProgram(result)
        self.assertEqual(len(result["fallback_warning"]), 1, result)
        self.assertIn("running the original PyTorch forward", result["fallback_warning"][0])
        self.assertTrue(result["fallback_equal"])

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
