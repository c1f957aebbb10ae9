"""Where a candidate loses to eager inside the harness timer's protocol: the timer's median; the
same samples taken by a copy of its loop (repl), with the host time of each call; that loop with
a 1M-cycle GPU sleep between the flush and the start event (the host then always runs ahead, so
the median is GPU time only); and each kernel's GPU time under torch.profiler. Eager and the
candidate are measured one after the other, not side by side.
    python3 bench/timer_gap.py CANDIDATES_DIR [TASK ...]"""
import sys, glob, os, statistics, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch
from torch.profiler import profile, ProfilerActivity
from stitchcuda_harness.nvcc_build import Builder
from stitchcuda_harness.module_loader import load_module
from stitchcuda_harness.timer import Timer, TimerConfig

T = Timer(torch.device("cuda"), TimerConfig())

def samples(fn, sets, iters, sleep):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    host = []
    for i, (s, e) in enumerate(pairs):
        T._flush()
        if sleep: torch.cuda._sleep(sleep)
        s.record()
        h = time.perf_counter()
        fn(*sets[i % len(sets)])
        host.append((time.perf_counter() - h) * 1e6)
        torch.cuda.synchronize()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 for s, e in pairs], host

def proto(fn, sets, sleep):
    for i in range(5): fn(*sets[i % len(sets)])
    floor, _ = samples(lambda: None, [[]], 100, sleep)
    t, host = samples(fn, sets, 100, sleep)
    return statistics.median(t) - statistics.median(floor), statistics.median(host), statistics.median(floor)

def kernels(fn, sets, reps=10):
    fn(*sets[0]); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for i in range(reps): fn(*sets[i % len(sets)])
        torch.cuda.synchronize()
    out = {}
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            out.setdefault(e.name[:90], []).append(e.device_time)
    return {k: (len(v), round(sum(v) / len(v), 1)) for k, v in out.items()}

b = Builder("/tmp/stitchcuda-timer-gap")
cands = sys.argv[1]
names = sys.argv[2:] or sorted(os.listdir(cands))
for name in names:
    d = f"{cands}/{name}"
    task = glob.glob(f"bench/tasks/level*/{name}.py")[0]
    r = b.build(f"{d}/candidate.cu")
    tm = load_module(task, "ref")
    torch.manual_seed(0)
    model = tm.Model(*tm.get_init_inputs()).cuda().eval()
    cm = load_module(f"{d}/model_new.py", "cand", {"__stitch_library__": r.library})
    new = cm.ModelNew(*tm.get_init_inputs()).cuda().eval()
    new.load_state_dict(model.state_dict(), strict=False)
    sets = [[x.cuda() for x in tm.get_inputs()] for _ in range(3)]
    with torch.no_grad():
        res = {}
        for label, fn in (("eager", model), ("cand", new)):
            std = T.measure(fn, sets).median_ms * 1e3
            p0 = proto(fn, sets, 0)
            p1 = proto(fn, sets, 1_000_000)
            res[label] = (std, p0, p1)
            print(f"{name:28s} {label:5s} timer {std:8.1f} | repl {p0[0]:8.1f} host {p0[1]:6.1f} floor {p0[2]:5.1f} | sleep {p1[0]:8.1f} host {p1[1]:6.1f} floor {p1[2]:5.1f}", flush=True)
        e, c = res["eager"], res["cand"]
        print(f"{name:28s} speedup timer {e[0]/c[0]:.3f}  repl {e[1][0]/c[1][0]:.3f}  gpu-only(sleep) {e[2][0]/c[2][0]:.3f}", flush=True)
        print("   eager kernels", kernels(model, sets), flush=True)
        print("   cand  kernels", kernels(new, sets), flush=True)
