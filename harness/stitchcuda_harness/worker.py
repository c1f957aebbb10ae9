"""The persistent worker: reads one JSON request per line, answers each with exactly one line,
in order. Method handlers take typed params and return JSON-able results; every failure becomes
an error reply with a stable code. After a sticky CUDA error the worker replies and exits (the
CUDA context cannot recover); after a stage of the user's model code passes its deadline the
worker replies `stage_timeout` and exits (stage_deadline.py); any other hang is ended by the
host's deadline (it kills the process)."""
from __future__ import annotations

import json
import os
import sys
import traceback
import warnings
from typing import Any, Callable, Optional

from . import stage_deadline
from .channel import Channel
from .errors import HarnessError, is_sticky_cuda_error
from .profile_methods import methods as profile_methods

EXIT_STICKY = 3
EXIT_HOST_GONE = 4        # the reply pipe closed under a write
EXIT_INTERRUPTED = 130    # SIGINT, as a shell reports it


def _param(params: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    value = params.get(name)
    if value is None:
        if required:
            raise HarnessError("invalid_params", f"missing param '{name}'")
        return None
    if not isinstance(value, kind):
        raise HarnessError("invalid_params", f"param '{name}' must be {kind.__name__}, got {type(value).__name__}")
    return value


class Worker:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.request_id: Any = None  # the request being handled: a stage's deadline answers it
        self.methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "hello": self.hello, "loadTask": self.load_task, "captureGraph": self.capture_graph,
            "baseline": self.baseline, "profileReference": self.profile_reference,
            "buildCandidate": self.build_candidate, "verify": self.verify, "verifyKernelBench": self.verify_kernelbench,
            "score": self.score,
            "exportKernelBench": self.export_kernelbench, "shutdown": lambda _p: {},
            **profile_methods(self),
        }

    # protocol loop -----------------------------------------------------------------------
    def serve(self) -> int:
        warnings.showwarning = lambda msg, cat, file, line, *_: self.channel.log("warning", f"{file}:{line}: {cat.__name__}: {msg}")
        for raw in self.channel.lines():
            request_id: Any = None
            try:
                request = json.loads(raw)
                if not isinstance(request, dict):
                    raise HarnessError("invalid_request", "a request is a JSON object")
                request_id = self.request_id = request.get("id")
                method, params = request.get("method"), request.get("params", {})
                if not isinstance(request_id, int) or isinstance(request_id, bool) or not isinstance(method, str):
                    raise HarnessError("invalid_request", "a request needs an integer 'id' and a string 'method'")
                if not isinstance(params, dict):
                    raise HarnessError("invalid_params", "'params' must be an object")
                handler = self.methods.get(method)
                if handler is None:
                    raise HarnessError("unknown_method", f"no method '{method}'; known: {', '.join(sorted(self.methods))}")
                result = handler(params)
                self.channel.send({"id": request_id, "result": result})
                if method == "shutdown":
                    return 0
            except json.JSONDecodeError as exc:
                self.channel.send({"id": None, "error": {"code": "parse_error", "message": f"line is not JSON: {exc}"}})
            except HarnessError as err:
                self.channel.send({"id": request_id, "error": err.to_json()})
                if err.code == "cuda_sticky_error":
                    return EXIT_STICKY
            except BrokenPipeError:
                raise  # the host is gone: nobody to report to
            except Exception as exc:  # a harness bug or an unclassified user error: report, keep serving
                traceback.print_exc(file=sys.stderr)
                sticky = is_sticky_cuda_error(exc)
                code = "cuda_sticky_error" if sticky else "internal_error"
                self.channel.send({"id": request_id, "error": {"code": code, "message": f"{type(exc).__name__}: {exc}"}})
                if sticky:
                    return EXIT_STICKY
        return 0

    # methods ----------------------------------------------------------------------------
    def hello(self, _params: dict[str, Any]) -> Any:
        from .environment_info import hello
        return {**hello(), "pid": os.getpid(), "methods": sorted(self.methods)}

    def _task(self, params: dict[str, Any]) -> Any:
        from .task_loader import load_task
        return load_task(_param(params, "path", str), params)

    def _device(self, params: dict[str, Any]) -> Any:
        from .environment_info import pick_device
        return pick_device(_param(params, "device", str, required=False))

    def load_task(self, params: dict[str, Any]) -> Any:
        from .task_loader import summarize
        return summarize(self._task(params), self._device(params), int(params.get("seed", 0)))

    def capture_graph(self, params: dict[str, Any]) -> Any:
        from .graph_capture import capture_graph
        return capture_graph(self._task(params), self._device(params), int(params.get("seed", 0))).to_json()

    def baseline(self, params: dict[str, Any]) -> Any:
        from .baseline import run_baseline
        _param(params, "cacheDir", str)
        return run_baseline(self._task(params), self._device(params), params)

    def profile_reference(self, params: dict[str, Any]) -> Any:
        from .profile_reference import profile_reference
        return profile_reference(self._task(params), self._device(params), params)

    def build_candidate(self, params: dict[str, Any]) -> Any:
        from .nvcc_build import Builder
        paths = params.get("paths") or [_param(params, "path", str)]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise HarnessError("invalid_params", "'paths' must be a list of strings")
        builder = Builder(_param(params, "cacheDir", str), params.get("arch"), params.get("flags"))
        if params.get("background"):
            # Started, not awaited: a later build or verify of the same source in this worker
            # collects it (nvcc_build.Builder.start), while this worker answers other requests.
            started = [builder.start(p) for p in paths]
            return {"arch": builder.arch, "started": len(started)}
        results = builder.build_many(paths, params.get("jobs"))
        return {"arch": builder.arch, "builds": [r.to_json() for r in results]}

    def verify(self, params: dict[str, Any]) -> Any:
        from .verifier import verify
        from .verify_config import VerifyConfig
        def report(stage: str, running: str) -> None:
            self.channel.send({"event": "verifyStage", "stage": stage, "running": running})
        return verify(_param(params, "reference", str), _param(params, "candidate", str), VerifyConfig.from_params(params),
                      report).to_json()

    def verify_kernelbench(self, params: dict[str, Any]) -> Any:
        from .kernelbench_protocol import kernelbench_check
        return kernelbench_check(_param(params, "reference", str), _param(params, "candidate", str), params)

    def score(self, params: dict[str, Any]) -> Any:
        from .rubric import score
        _param(params, "verdict", dict, required=not params.get("noGpu"))  # noGpu: scored from the code alone
        return score(_param(params, "reference", str), _param(params, "candidate", str), params)

    def export_kernelbench(self, params: dict[str, Any]) -> Any:
        from .kernelbench_export import check_export, write_export
        candidate = _param(params, "candidate", str)
        out = write_export(candidate, _param(params, "out", str))
        result: dict[str, Any] = {"path": out}
        if params.get("check"):
            result["check"] = check_export(_param(params, "reference", str), candidate, out, params)
        return result


def main(load_timeout: Optional[float] = None) -> int:
    """`load_timeout`: seconds each stage of the user's model code may take (stage_deadline.py)."""
    channel = Channel()
    worker = Worker(channel)
    if load_timeout:
        def expired(error: HarnessError) -> None:
            # The stage's code still runs on the main thread: answer its request, then the process ends.
            channel.send({"id": worker.request_id, "error": error.to_json()})
        stage_deadline.arm(load_timeout, expired)
    try:
        status = worker.serve()
    except (BrokenPipeError, KeyboardInterrupt) as exc:
        # The host went away (its end of the pipe closed) or Ctrl-C reached a worker started by hand:
        # an ending, not a fault, so no traceback. Exit at once, as after a sticky error: teardown
        # would flush to the closed pipe again.
        os._exit(EXIT_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else EXIT_HOST_GONE)
    if status == EXIT_STICKY:
        os._exit(EXIT_STICKY)  # skip interpreter teardown: CUDA calls during it can hang on a lost context
    return status
