"""The GPU suite (run by gpu_suite.sh on the GPU machine): honest candidates must pass, every
adversarial candidate must be rejected with the checks its manifest names, the worker must report
sticky CUDA errors and be restarted, a hanging kernel must be ended by the host's deadline, and
the worker's other methods must work on CUDA with the machine's PyTorch. Writes one JSON file."""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker_client import REPO, WorkerClient, WorkerDied  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("STITCH_CACHE", "/tmp/stitchcuda-gpu-suite-cache")
FAST = {"cacheDir": CACHE, "compileBaseline": False, "timer": {"maxSeconds": 0.3}}


def verify(client: WorkerClient, task: str, candidate: str, deadline: float = 240.0, **extra: Any) -> dict[str, Any]:
    params = {**FAST, "reference": os.path.join(REPO, task), "candidate": candidate, **extra}
    t0 = time.perf_counter()
    try:
        reply = client.request("verify", params, deadline_s=deadline)
    except WorkerDied as died:
        client.restart()
        return {"died": died.reason, "exit_code": died.exit_code, "seconds": time.perf_counter() - t0}
    reply["seconds"] = time.perf_counter() - t0
    if "error" in reply and reply["error"]["code"] == "cuda_sticky_error":
        code = client.proc.wait(timeout=30) if client.proc else None
        reply["exit_code"] = code
        client.restart()
    return reply


def main() -> int:
    out_path = sys.argv[1]
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "command": "OUT=DIR bash tests/harness/gpu_suite.sh (runs python3 tests/harness/gpu_suite.py DIR/gpu_suite.json)",
                               "honest": [], "adversarial": [], "recovery": [], "methods": {}}
    client = WorkerClient()
    results["hello"] = client.request("hello")["result"]
    honest = [("examples/elementwise_chain.py", "honest/elementwise_chain"), ("examples/mlp.py", "honest/mlp")]
    for task, cand in honest:
        r = verify(client, task, os.path.join(HERE, cand))
        v = r.get("result", {})
        results["honest"].append({"candidate": cand, "passed": v.get("passed"), "failed_checks": v.get("failed_checks"),
                                  "findings": v.get("findings"), "error": r.get("error"), "timing": v.get("timing"),
                                  "ground_truth": v.get("ground_truth"), "durations_s": v.get("durations_s"),
                                  "skipped": v.get("skipped_checks"), "seconds": r["seconds"]})
    manifest = json.load(open(os.path.join(HERE, "adversarial", "manifest.json")))
    for entry in manifest["candidates"]:
        r = verify(client, entry["task"], os.path.join(HERE, "adversarial", entry["file"]))
        v = r.get("result", {})
        failed = v.get("failed_checks", [])
        results["adversarial"].append({
            "file": entry["file"], "expect": entry["expect"], "failed_checks": failed,
            "rejected_for_the_right_reason": bool(v) and not v.get("passed") and set(entry["expect"]) <= set(failed),
            "error": r.get("error"), "died": r.get("died"), "seconds": r["seconds"],
            "messages": [f"[{f['check']}] {f['message']}" for f in v.get("findings", [])][:12]})
    # Sticky error: the worker replies cuda_sticky_error and exits with status 3; the host restarts it.
    r = verify(client, "examples/elementwise_chain.py", os.path.join(HERE, "crash", "illegal_address.py"))
    results["recovery"].append({"case": "illegal_address", "error": r.get("error"), "exit_code": r.get("exit_code"),
                                "ok": (r.get("error") or {}).get("code") == "cuda_sticky_error" and r.get("exit_code") == 3})
    # Hang: no reply before the deadline, the host kills the worker and starts a new one.
    r = verify(client, "examples/elementwise_chain.py", os.path.join(HERE, "crash", "hang_kernel.py"), deadline=20.0)
    results["recovery"].append({"case": "hang_kernel", "died": r.get("died"), "seconds": r["seconds"], "ok": r.get("died") == "deadline"})
    r = verify(client, "examples/elementwise_chain.py", os.path.join(HERE, "honest", "elementwise_chain"))
    results["recovery"].append({"case": "honest_after_restarts", "passed": r.get("result", {}).get("passed"),
                                "ok": r.get("result", {}).get("passed") is True})
    for method, params in (("loadTask", {"path": "examples/mlp.py"}), ("captureGraph", {"path": "examples/mlp.py"}),
                           ("profileReference", {"path": "examples/mlp.py"}),
                           ("baseline", {"path": "examples/mlp.py", "cacheDir": CACHE})):
        t0 = time.perf_counter()
        reply = client.request(method, {**params, "path": os.path.join(REPO, params["path"])}, deadline_s=300)
        results["methods"][method] = {"seconds": time.perf_counter() - t0, **reply}
    client.close()
    summary = {
        "honest_passed": sum(1 for h in results["honest"] if h["passed"]), "honest_total": len(results["honest"]),
        "adversarial_rejected_right_reason": sum(1 for a in results["adversarial"] if a["rejected_for_the_right_reason"]),
        "adversarial_total": len(results["adversarial"]),
        "recovery_ok": sum(1 for r in results["recovery"] if r["ok"]), "recovery_total": len(results["recovery"]),
        "methods_ok": sorted(m for m, r in results["methods"].items() if "result" in r),
    }
    results["summary"] = summary
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1, default=str)
    for a in results["adversarial"]:
        print(f"{'REJECTED' if a['rejected_for_the_right_reason'] else 'MISSED  '} {a['file']:28s} expect={a['expect']} got={a['failed_checks']} {a['error'] or ''}")
    for h in results["honest"]:
        print(f"HONEST {h['candidate']}: passed={h['passed']} failed={h['failed_checks']} error={h['error']}")
    for r in results["recovery"]:
        print("RECOVERY", r)
    print("SUMMARY", json.dumps(summary))
    ok = (summary["honest_passed"] == summary["honest_total"] and summary["recovery_ok"] == summary["recovery_total"]
          and summary["adversarial_rejected_right_reason"] == summary["adversarial_total"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
