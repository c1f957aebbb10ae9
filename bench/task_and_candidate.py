"""A suite task's eager Model and a generated candidate's ModelNew side by side, as the probes in
this folder load them: the Model seeded and on the GPU in eval mode, the candidate built by the
harness's nvcc path with the Model's weights loaded. The candidate folder holds candidate.cu and
model_new.py per task, as `generate_candidates DIR` writes them. Import after putting harness/ on
sys.path."""
import glob

import torch

from stitchcuda_harness.module_loader import load_module


def load(cands, name, builder):
    """(task module, Model, ModelNew or None, the build result): None when the candidate does not
    build (the build result says why)."""
    tm = load_module(glob.glob(f"bench/tasks/level*/{name}.py")[0], "ref")
    torch.manual_seed(0)
    model = tm.Model(*tm.get_init_inputs()).cuda().eval()
    built = builder.build(f"{cands}/{name}/candidate.cu")
    if not built.ok:
        return tm, model, None, built
    cm = load_module(f"{cands}/{name}/model_new.py", "cand", {"__stitch_library__": built.library})
    cand = cm.ModelNew(*tm.get_init_inputs()).cuda().eval()
    cand.load_state_dict(model.state_dict(), strict=False)
    return tm, model, cand, built
