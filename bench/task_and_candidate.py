"""A task's eager Model and a generated candidate's ModelNew side by side, as the probes in this
folder load them: the Model seeded and on the GPU in eval mode, the candidate built by the harness's
nvcc path with the Model's weights loaded. A candidate folder holds candidate.cu and model_new.py,
as `generate_candidates DIR` writes them per suite task and a job writes them per candidate
(jobs/<job>/candidates/cN). Import after putting harness/ on sys.path."""
import glob

import torch

from stitchcuda_harness.module_loader import load_module


def load(cands, name, builder):
    """A suite task `name` and its candidate in CANDS/name (load_files says what comes back)."""
    return load_files(glob.glob(f"bench/tasks/level*/{name}.py")[0], f"{cands}/{name}", builder)


def load_files(task_file, cand_dir, builder, as_built=False):
    """(task module, Model, ModelNew or None, the build result): None when the candidate does not
    build (the build result says why). Both in eval mode, or (`as_built`) in the mode the task's
    constructor leaves them, as the harness runs a KernelBench problem (training mode: BatchNorm's
    batch statistics)."""
    tm = load_module(task_file, "ref")
    torch.manual_seed(0)
    model = tm.Model(*tm.get_init_inputs()).cuda()
    model = model if as_built else model.eval()
    built = builder.build(f"{cand_dir}/candidate.cu")
    if not built.ok:
        return tm, model, None, built
    cm = load_module(f"{cand_dir}/model_new.py", "cand", {"__stitch_library__": built.library})
    cand = cm.ModelNew(*tm.get_init_inputs()).cuda()
    cand = cand if as_built else cand.eval()
    cand.load_state_dict(model.state_dict(), strict=False)
    return tm, model, cand, built
