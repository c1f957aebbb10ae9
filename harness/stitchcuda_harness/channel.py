"""The worker's end of the JSON Lines channel. The protocol owns the real stdout; at start-up fd 1
and sys.stdout are pointed at stderr, so user prints, library banners and C-level writes cannot
corrupt the stream. One lock serializes writes (logs may come from other threads)."""
from __future__ import annotations

import io
import json
import os
import sys
import threading
from typing import Any, BinaryIO, Iterator


class Channel:
    def __init__(self) -> None:
        sys.stdout.flush()
        proto_fd = os.dup(1)
        os.dup2(2, 1)  # C/CUDA code writing to fd 1 now lands on stderr
        sys.stdout = sys.stderr
        self._out: BinaryIO = os.fdopen(proto_fd, "wb", buffering=0)
        self._in: BinaryIO = sys.stdin.buffer
        sys.stdin = io.TextIOWrapper(io.BytesIO())  # user code reading stdin must not eat requests
        self._lock = threading.Lock()

    def lines(self) -> Iterator[bytes]:
        for raw in self._in:
            if raw.strip():
                yield raw

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(json_safe(message), allow_nan=False) + "\n").encode("utf-8")
        with self._lock:
            self._out.write(data)

    def log(self, level: str, message: str) -> None:
        self.send({"event": "log", "level": level, "message": message})


def json_safe(value: Any) -> Any:
    """JSON has no NaN/Infinity; they become strings so one odd float cannot lose a reply."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)
