"""A minimal stand-in for the C++ host in tests and benchmarks: starts the worker, sends JSON
Lines requests, reads replies (skipping log events), enforces a deadline by killing the worker,
and restarts it after a crash or a sticky CUDA error — the supervision contract of HARNESS.md."""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from typing import Any, Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = os.environ.get("STITCH_PYTHON", sys.executable)


class WorkerDied(Exception):
    def __init__(self, reason: str, exit_code: Optional[int]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exit_code = exit_code


class WorkerClient:
    def __init__(self, args: tuple[str, ...] = ()) -> None:
        """`args`: the worker's own options (--load-timeout S)."""
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.next_id = 1
        self.logs: list[dict[str, Any]] = []
        self.args = args
        self.start()

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "harness"), PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([PYTHON, "-m", "stitchcuda_harness", "worker", *self.args], cwd=REPO, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)  # worker logs go to ours
        self._buffer = b""

    def send_raw(self, line: bytes) -> None:
        assert self.proc and self.proc.stdin
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_message(self, deadline_s: float) -> dict[str, Any]:
        assert self.proc and self.proc.stdout
        end = time.monotonic() + deadline_s
        fd = self.proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        try:
            while b"\n" not in self._buffer:
                left = end - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise WorkerDied("deadline", None)
                if not sel.select(timeout=left):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    code = self.proc.wait()
                    raise WorkerDied("exited", code)
                self._buffer += chunk
        finally:
            sel.close()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, method: str, params: Optional[dict[str, Any]] = None, deadline_s: float = 300.0) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        self.send_raw(json.dumps({"id": rid, "method": method, "params": params or {}}).encode())
        while True:
            msg = self.read_message(deadline_s)
            if "event" in msg:
                self.logs.append(msg)
                continue
            if msg.get("id") != rid:
                raise AssertionError(f"reply for id {msg.get('id')} while waiting for {rid}")
            return msg

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        if self.proc:
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe:
                    pipe.close()

    def restart(self) -> None:
        self.kill()
        self.start()

    def close(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                self.request("shutdown", deadline_s=30)
                self.proc.wait(timeout=30)
                self._close_pipes()
            except (WorkerDied, subprocess.TimeoutExpired, BrokenPipeError):
                self.kill()
