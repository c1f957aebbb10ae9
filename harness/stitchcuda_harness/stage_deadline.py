"""Deadlines for the stages that run the user's model code (importing it, get_init_inputs, its
__init__, get_inputs, each forward): a model that sleeps or never returns ends the request with
`stage_timeout`, naming the stage and the file and line the model was at, read from the main
thread's stack when the deadline passed, instead of holding the worker silently until the host
kills it. The worker arms them (`--load-timeout`); without that, stages run without a deadline.

One watchdog thread serves every stage, started with the worker before any candidate runs (the
thread guards count only threads started during a candidate's calls). A stage inside another
suspends the outer one: each stage's time is its own. Where the model holds the interpreter lock
and never lets go (a C extension spinning), the watchdog cannot run; faulthandler's C-level timer,
armed a grace period later, then dumps every thread's stack to stderr and exits the process."""
from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

from .errors import HarnessError

# After the deadline, how long the watchdog has before the C-level timer ends the process anyway.
GRACE_SECONDS = 30.0
EXIT_STAGE_TIMEOUT = 5
_HERE = os.path.dirname(os.path.realpath(__file__))


@dataclass
class _Stage:
    name: str
    files: tuple[str, ...]
    deadline: float  # time.monotonic()
    left: float = 0.0  # seconds it had left when a stage inside it began


class StageDeadlines:
    """`on_expiry` gets the stage_timeout error from the watchdog thread; it must end the process
    (the stage's code is still running on the main thread and cannot be stopped otherwise)."""

    def __init__(self, seconds: float, on_expiry: Callable[[HarnessError], None]) -> None:
        self.seconds = seconds
        self._on_expiry = on_expiry
        self._main = threading.get_ident()
        self._stages: list[_Stage] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._watch, name="stitchcuda-stage-deadline", daemon=True).start()

    @contextlib.contextmanager
    def stage(self, name: str, files: tuple[str, ...]) -> Iterator[None]:
        now = time.monotonic()
        with self._cond:
            if self._stages:
                outer = self._stages[-1]
                outer.left = max(0.0, outer.deadline - now)
            self._stages.append(_Stage(name, files, now + self.seconds))
            self._arm_backstop()
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:
                self._stages.pop()
                if self._stages:
                    self._stages[-1].deadline = time.monotonic() + self._stages[-1].left
                self._arm_backstop()
                self._cond.notify()

    def _arm_backstop(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self._stages:
            left = self._stages[-1].deadline - time.monotonic()
            faulthandler.dump_traceback_later(max(left, 0.0) + GRACE_SECONDS, exit=True)

    def _watch(self) -> None:
        with self._cond:
            while True:
                if not self._stages:
                    self._cond.wait()
                    continue
                current = self._stages[-1]
                left = current.deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                error = self._timeout(current)
                break
        try:
            self._on_expiry(error)
        finally:
            os._exit(EXIT_STAGE_TIMEOUT)

    def _timeout(self, stage: _Stage) -> HarnessError:
        frame = sys._current_frames().get(self._main)
        stack = traceback.extract_stack(frame) if frame is not None else traceback.StackSummary()
        at = user_frame(stack, stage.files)
        # The file and line are the error's own fields: the host prints them before the message.
        where = f"; it was at line {at.lineno}, in {at.name}" + (f": {at.line}" if at.line else "") if at else ""
        return HarnessError("stage_timeout", f"{stage.name} did not finish within {self.seconds:g} s (the load timeout; "
                            f"--load-timeout sets it){where}", at.filename if at else None, at.lineno if at else None,
                            {"stage": stage.name, "seconds": self.seconds,
                             "stack": [f"{f.filename}:{f.lineno} in {f.name}" for f in stack[-12:]]})


def user_frame(stack: traceback.StackSummary, files: tuple[str, ...]) -> Optional[traceback.FrameSummary]:
    """The innermost frame in one of `files` (the user's own), else the innermost outside this package."""
    wanted = {os.path.realpath(f) for f in files}
    for frame in reversed(stack):
        if os.path.realpath(frame.filename) in wanted:
            return frame
    for frame in reversed(stack):
        if not os.path.realpath(frame.filename).startswith(_HERE):
            return frame
    return None


_deadlines: Optional[StageDeadlines] = None


def arm(seconds: float, on_expiry: Callable[[HarnessError], None]) -> None:
    """From now on every stage has `seconds` (called once, by the worker, on its main thread)."""
    global _deadlines
    _deadlines = StageDeadlines(seconds, on_expiry)


@contextlib.contextmanager
def stage(name: str, files: tuple[str, ...]) -> Iterator[None]:
    """A stage of the user's model code, named for people ("Model.__init__"); `files` are the user's,
    where the frame to report is looked for."""
    if _deadlines is None:
        yield
        return
    with _deadlines.stage(name, files):
        yield
