"""The worker methods of the profiling layer, registered in the worker's table by one entry:
profileTrace (a chrome trace of a reference or candidate forward, for the host's parser) and
measureCeilings (the roofline ceilings of this GPU)."""
from __future__ import annotations

from typing import Any, Callable


def methods(worker: Any) -> dict[str, Callable[[dict[str, Any]], Any]]:
    def profile_trace(params: dict[str, Any]) -> Any:
        from .profile_trace import profile_trace as run
        return run(worker._task(params), worker._device(params), params)

    def measure_ceilings(params: dict[str, Any]) -> Any:
        from .profile_ceilings import measure_ceilings as run
        return run(worker._device(params), params)

    return {"profileTrace": profile_trace, "measureCeilings": measure_ceilings}
