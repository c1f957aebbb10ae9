"""Two generations of candidates beside eager, timed side by side in one loop by the harness timer:
with its L2 flush by reading (timer.py) and with a flush by zero_() (what it did before), and
each one's GPU kernel time per forward (torch.profiler). The candidate folders hold candidate.cu
and model_new.py per task, as `generate_candidates DIR` writes them at the commits compared.
    python3 bench/timer_protocol.py OLD_DIR NEW_DIR [TASK ...]"""
import sys, glob, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch
from torch.profiler import profile, ProfilerActivity
from stitchcuda_harness.nvcc_build import Builder
from stitchcuda_harness.module_loader import load_module
from stitchcuda_harness.timer import Timer, TimerConfig

def kernels(fn, sets, reps=10):
    fn(*sets[0]); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(reps): fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
    tot = 0.0
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA: tot += e.device_time
    return tot / reps

read = Timer(torch.device("cuda"), TimerConfig())
zero = Timer(torch.device("cuda"), TimerConfig())
zero._flush = lambda: zero._flush_buffer.zero_()
b = Builder("/tmp/stitchcuda-timer-protocol")
dirs = {"old": sys.argv[1], "new": sys.argv[2]}
for name in sys.argv[3:] or sorted(os.listdir(dirs["new"])):
    task = glob.glob(f"bench/tasks/level*/{name}.py")[0]
    tm = load_module(task, "ref")
    torch.manual_seed(0)
    model = tm.Model(*tm.get_init_inputs()).cuda().eval()
    fns = {"eager": model}
    for tag in ("old", "new"):
        r = b.build(f"{dirs[tag]}/{name}/candidate.cu")
        if not r.ok: print(name, tag, "BUILD FAILED", r.diagnostics[:3]); continue
        cm = load_module(f"{dirs[tag]}/{name}/model_new.py", "c" + tag, {"__stitch_library__": r.library})
        m = cm.ModelNew(*tm.get_init_inputs()).cuda().eval()
        m.load_state_dict(model.state_dict(), strict=False)
        fns[tag] = m
    sets = [[x.cuda() for x in tm.get_inputs()] for _ in range(3)]
    with torch.no_grad():
        ref = model(*sets[0])
        for tag in ("old", "new"):
            if tag in fns:
                got = fns[tag](*sets[0])
                rs, gs = (ref, got) if isinstance(ref, tuple) else ((ref,), (got,))
                ok = all(torch.equal(x, y) if x.dtype == torch.int64 else torch.allclose(x, y, rtol=1e-4, atol=1e-4) for x, y in zip(rs, gs))
                if not ok: print(name, tag, "MISMATCH")
        a = read.measure_side_by_side(fns, sets)
        z = zero.measure_side_by_side(fns, sets)
        k = {t: kernels(f, sets) for t, f in fns.items()}
    line = " ".join(f"{t}: read {a[t].median_ms*1e3:7.1f} zero {z[t].median_ms*1e3:7.1f} kern {k[t]:7.1f} |" for t in fns)
    sp = " ".join(f"{t} x{a['eager'].median_ms / a[t].median_ms:.3f}" for t in fns if t != "eager")
    print(f"{name:34s} floor {a['eager'].timer_floor_ms*1e3:5.1f} {line} {sp}", flush=True)
