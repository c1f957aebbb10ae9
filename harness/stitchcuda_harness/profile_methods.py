"""The worker methods of the profiling layer, registered in the worker's table by one entry:
profileTrace (a chrome trace of a reference or candidate forward, for the host's parser),
measureCeilings (the roofline ceilings of this GPU) and ncuTarget (how to start the program Nsight
Compute profiles with this worker's interpreter)."""
from __future__ import annotations

from typing import Any, Callable


def methods(worker: Any) -> dict[str, Callable[[dict[str, Any]], Any]]:
    def profile_trace(params: dict[str, Any]) -> Any:
        from .profile_trace import profile_trace as run
        return run(worker._task(params), worker._device(params), params)

    def measure_ceilings(params: dict[str, Any]) -> Any:
        from .profile_ceilings import measure_ceilings as run
        return run(worker._device(params), params)

    def ncu_target(params: dict[str, Any]) -> Any:
        from .ncu_target import launch_facts
        return launch_facts()

    return {"profileTrace": profile_trace, "measureCeilings": measure_ceilings, "ncuTarget": ncu_target}
