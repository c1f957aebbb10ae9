"""Clients of serve-reward --slurm for reward_on_slurm.sh (plain urllib: no package needed).

  URL wait-workers N SECONDS   waits until N worker jobs are connected (exit 1 past SECONDS)
  URL requests N               N concurrent requests (verify and score, ids r0..), 429s retried after
                               Retry-After; prints the answers; exit 1 unless each has its own 200 answer
  URL busy-job                 prints the Slurm job of a busy worker (nothing while none is)
  URL check-metrics N          the metrics count N answers, a lost worker and no request waiting
"""
from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request

REFERENCE = "examples/elementwise_chain.py"
CANDIDATE = "tests/harness/honest/elementwise_chain"


def call(url: str, path: str, body: dict | None = None) -> tuple[int, dict, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=300) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read() or b"{}")


def metrics(url: str) -> dict:
    return call(url, "/v1/metrics")[2]


def wait_workers(url: str, n: int, seconds: float) -> int:
    end = time.time() + seconds
    while time.time() < end:
        if metrics(url)["slurmWorkers"]["running"] >= n:
            return 0
        time.sleep(0.5)
    print(json.dumps(metrics(url)), file=sys.stderr)
    return 1


def requests(url: str, n: int) -> int:
    answers: dict[str, tuple[int, dict]] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        rid = f"r{i}"
        body = {"id": rid, "reference": REFERENCE, "candidate": CANDIDATE}
        path = "/v1/verify" if i % 2 == 0 else "/v1/score"
        while True:
            status, headers, answer = call(url, path, body)
            if status != 429:
                break
            time.sleep(int(headers["Retry-After"]))
        with lock:
            answers[rid] = (status, answer)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(answers, indent=1))
    bad = {rid: a for rid, a in answers.items() if a[0] != 200 or a[1].get("id") != rid}
    verify = [a for rid, (s, a) in answers.items() if int(rid[1:]) % 2 == 0]
    if bad or len(answers) != n or any(a.get("status") != "needs_gpu" for a in verify):
        print(f"bad answers: {json.dumps(bad)[:2000]}", file=sys.stderr)
        return 1
    return 0


def busy_job(url: str) -> int:
    m = metrics(url)
    for state, seat in zip(m["workerStates"], m["slurmWorkers"]["seats"]):
        if state["busy"] and seat["state"] == "running":
            print(seat["job"])
            return 0
    return 1


def check_metrics(url: str, n: int) -> int:
    m = metrics(url)
    ok = (m["answers"]["score"].get("200", 0) + m["answers"]["verify"].get("200", 0) == n
          and m["slurmWorkers"]["lost"] >= 1 and m["queueDepth"] == 0 and m["busy"] == 0)
    if not ok:
        print(json.dumps(m), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    url, what = sys.argv[1], sys.argv[2]
    args = [float(a) for a in sys.argv[3:]]
    if what == "wait-workers":
        sys.exit(wait_workers(url, int(args[0]), args[1]))
    if what == "requests":
        sys.exit(requests(url, int(args[0])))
    if what == "busy-job":
        sys.exit(busy_job(url))
    sys.exit(check_metrics(url, int(args[0])))
