"""A reward function for RL on kernel writing, in verl's custom reward function interface, that asks a
running `stitchcuda serve-reward` for each answer's reward (protocol/REWARD_SERVICE.md).

In verl's config:

    custom_reward_function:
      path: examples/verl_reward.py
      name: compute_score

verl's default reward manager scores one answer at a time, which keeps one of the service's GPUs busy. With
``reward_model.reward_manager: batch`` and ``name: compute_score_batch`` a whole batch is posted at once
(STITCHCUDA_REWARD_CLIENTS requests in flight, default 64) and the service spreads it over its GPUs.

`ground_truth` is the task: a reference file's path under the service's --root (a KernelBench problem,
``level1/19_ReLU.py``), or the reference's source itself. The candidate is taken from the model's answer:
the last fenced Python block that defines ``ModelNew`` (a KernelBench-style file, load_inline allowed) and,
for the fast path (protocol/HARNESS.md, Candidates), the last fenced ``cuda``/``cu``/``cpp`` block as its
``.cu``. An answer without one earns 0. ``extra_info["score"]``, when given, adds fields to the request
(``weights``, ``allowPrecision``, ``precision``, a recorded ``verdict``...).

Settings (environment): STITCHCUDA_REWARD_URL (default http://127.0.0.1:8000), STITCHCUDA_REWARD_TOKEN (the
bearer token of a service beyond loopback), STITCHCUDA_REWARD_WAIT (seconds to keep retrying a busy service,
default 3600). A 429 is retried after its Retry-After; a candidate that crashed or hung its worker earns 0;
anything else the service refuses raises, as does a reward the verifier could not judge (no GPU on the
service, or its own failure): training on a made-up number is worse than stopping.
"""
from __future__ import annotations

import json
import os
import random
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

# Worker errors that are the candidate's doing (it crashed, hung, or poisoned the GPU): a reward of 0.
CANDIDATE_FAILURES = {"worker_crashed", "cuda_sticky_error", "deadline_exceeded", "stage_timeout"}

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)


class RewardServiceError(RuntimeError):
    """A request the service refused or could not score: its HTTP status and error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"serve-reward answered {status} {code}: {message}")
        self.status, self.code = status, code


def extract_candidate(solution_str: str) -> Optional[dict[str, str]]:
    """The candidate in a model's answer: {"candidateSource": ..., "candidateCuda"?: ...}, or None."""
    python, cuda = None, None
    for language, body in _FENCE.findall(solution_str):
        language = language.lower()
        if language in ("python", "py", "") and re.search(r"^class\s+ModelNew\b", body, re.MULTILINE):
            python = body
        elif language in ("cuda", "cu", "cpp", "c++"):
            cuda = body
    if python is None:
        return None
    return {"candidateSource": python, **({"candidateCuda": cuda} if cuda is not None else {})}


def _reference_field(ground_truth: str) -> dict[str, str]:
    one_line = "\n" not in ground_truth.strip()
    if one_line and ground_truth.strip().endswith(".py"):
        return {"reference": ground_truth.strip()}
    return {"referenceSource": ground_truth}


def _post(url: str, body: dict[str, Any], token: Optional[str], wait_seconds: float) -> dict[str, Any]:
    """POSTs `body`, retrying 429 (after Retry-After) and 503 until `wait_seconds` have passed."""
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    give_up = time.monotonic() + wait_seconds
    while True:
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=wait_seconds) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            try:
                refusal = json.loads(error.read() or b"{}").get("error", {})
            except ValueError:
                refusal = {}
            if error.code not in (429, 503) or time.monotonic() > give_up:
                raise RewardServiceError(error.code, refusal.get("code", "?"), refusal.get("message", "")) from None
            try:
                delay = float(error.headers.get("Retry-After", "1"))
            except ValueError:
                delay = 1.0
            # Not before Retry-After, and spread out so that clients refused together do not return together.
            time.sleep(delay * (1 + 0.5 * random.random()))


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: Optional[dict] = None) -> float:
    candidate = extract_candidate(solution_str)
    if candidate is None:
        return 0.0
    body: dict[str, Any] = {**_reference_field(ground_truth), **candidate}
    if extra_info and isinstance(extra_info.get("score"), dict):
        body.update(extra_info["score"])
    url = os.environ.get("STITCHCUDA_REWARD_URL", "http://127.0.0.1:8000").rstrip("/") + "/v1/score"
    try:
        scored = _post(url, body, os.environ.get("STITCHCUDA_REWARD_TOKEN"),
                       float(os.environ.get("STITCHCUDA_REWARD_WAIT", "3600")))
    except RewardServiceError as error:
        if error.code in CANDIDATE_FAILURES:
            return 0.0
        raise
    if scored.get("reward") is None:
        raise RuntimeError(f"the verifier could not judge this candidate ({scored.get('verdictStatus')}): "
                           "serve the reward on a GPU machine (serve-reward --gpus N)")
    return float(scored["reward"])


def compute_score_batch(data_sources: Sequence[str], solution_strs: Sequence[str], ground_truths: Sequence[str],
                        extra_infos: Optional[Sequence[Optional[dict]]] = None, **_: Any) -> list[float]:
    """verl's batch reward manager's interface: every answer of the batch posted at once, rewards in order."""
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    clients = max(1, int(os.environ.get("STITCHCUDA_REWARD_CLIENTS", "64")))
    with ThreadPoolExecutor(max_workers=min(clients, max(1, len(solution_strs)))) as pool:
        return list(pool.map(compute_score, data_sources, solution_strs, ground_truths, extras))
