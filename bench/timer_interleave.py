"""Does timing side by side change what a function measures? Each task's eager model and candidate
alone, beside each other, and beside a second instance of themselves; with the harness timer's
read flush, and with a 1M-cycle GPU sleep after the flush (the host then always runs ahead, so
the median is GPU time only). Prints the median and the host time of each call.
    python3 bench/timer_interleave.py CANDIDATES_DIR TASK [TASK ...]"""
import sys, glob, os, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch
from stitchcuda_harness.nvcc_build import Builder
from stitchcuda_harness.module_loader import load_module
from stitchcuda_harness.timer import Timer, TimerConfig

read = Timer(torch.device("cuda"), TimerConfig())
sleepy = Timer(torch.device("cuda"), TimerConfig())
def _fs():
    sleepy._flush_buffer.sum(); torch.cuda._sleep(1_000_000)
sleepy._flush = _fs
b = Builder("/tmp/stitchcuda-timer-interleave")
cands = sys.argv[1]
host = {}
def timed(tag, fn):
    def f(*a):
        t = time.perf_counter(); r = fn(*a); host.setdefault(tag, []).append((time.perf_counter() - t) * 1e6); return r
    return f
for name in sys.argv[2:]:
    task = glob.glob(f"bench/tasks/level*/{name}.py")[0]
    tm = load_module(task, "ref")
    model = tm.Model(*tm.get_init_inputs()).cuda().eval()
    model2 = tm.Model(*tm.get_init_inputs()).cuda().eval()
    r = b.build(f"{cands}/{name}/candidate.cu")
    cm = load_module(f"{cands}/{name}/model_new.py", "c", {"__stitch_library__": r.library})
    new = cm.ModelNew(*tm.get_init_inputs()).cuda().eval()
    new2 = cm.ModelNew(*tm.get_init_inputs()).cuda().eval()
    sets = [[x.cuda() for x in tm.get_inputs()] for _ in range(3)]
    combos = [("eager",), ("new",), ("eager", "new"), ("eager", "eager2"), ("new", "new2")]
    objs = {"eager": model, "eager2": model2, "new": new, "new2": new2}
    with torch.no_grad():
        for timer, label in ((read, "read"), (sleepy, "sleep")):
            for c in combos:
                host.clear()
                st = timer.measure_side_by_side({k: timed(k, objs[k]) for k in c}, sets)
                print(f"{name:14s} {label:5s} {'+'.join(c):12s} " + " ".join(
                    f"{k} {st[k].median_ms*1e3:7.1f} (host {sorted(host[k])[len(host[k])//2]:5.1f})" for k in c)
                    + f" floor {st[c[0]].timer_floor_ms*1e3:5.1f}", flush=True)
