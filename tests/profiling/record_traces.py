"""Records the harness-side fixtures on the GPU machine (run by record_fixtures.sh): the roofline
ceilings (measureCeilings), chrome traces of the small model and of a fast-path candidate
(profileTrace), and profileReference's per-line table of the small model, through the worker's
own method table. Usage: python3 tests/profiling/record_traces.py OUT_DIR CACHE_DIR"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness"))

from stitchcuda_harness.channel import json_safe  # noqa: E402
from stitchcuda_harness.worker import Worker  # noqa: E402

SMALL = "tests/profiling/fixtures/tasks/small_convnet.py"
CHAIN = "examples/elementwise_chain.py"
CHAIN_CANDIDATE = "tests/harness/honest/elementwise_chain"


def main(out: str, cache: str) -> int:
    os.makedirs(out, exist_ok=True)
    methods = Worker(None).methods  # the table the host's requests reach, profile entries included
    calls = [
        ("ceilings.json", "measureCeilings", {"copyMegabytes": 1024, "gemmSize": 8192, "repetitions": 10}),
        ("profile_reference_small_convnet.json", "profileReference", {"path": SMALL, "iterations": 5}),
        ("profile_trace_small_convnet.result.json", "profileTrace",
         {"path": SMALL, "out": os.path.join(out, "torch_trace_small_convnet.json"), "iterations": 3}),
        ("profile_trace_chain_candidate.result.json", "profileTrace",
         {"path": CHAIN, "candidate": CHAIN_CANDIDATE, "cacheDir": cache,
          "out": os.path.join(out, "torch_trace_chain_candidate.json"), "iterations": 3}),
    ]
    failures = 0
    for name, method, params in calls:
        t0 = time.perf_counter()
        try:
            result = methods[method](params)
        except Exception as exc:  # recorded, not raised: the other fixtures still get made
            failures += 1
            result = {"error": f"{type(exc).__name__}: {exc}"}
        with open(os.path.join(out, name), "w") as f:
            json.dump(json_safe(result), f, indent=1)
        print(f"{method} -> {name} in {time.perf_counter() - t0:.1f} s{' FAILED: ' + result['error'] if 'error' in result else ''}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
