"""Facts about the interpreter, PyTorch and the GPU (the `hello` reply and cache keys)."""
from __future__ import annotations

import platform
import subprocess
from typing import Any, Optional

import torch

from . import __version__


def pick_device(requested: Optional[str]) -> torch.device:
    if requested:
        return torch.device(requested)
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def gpu_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu:" + (platform.processor() or platform.machine())


def driver_version() -> Optional[str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def hello() -> dict[str, Any]:
    cuda = torch.cuda.is_available()
    info: dict[str, Any] = {
        "harness": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchCuda": torch.version.cuda,
        "cudaAvailable": cuda,
        "hasCompile": hasattr(torch, "compile"),
        "gpu": None,
        "driver": None,
        "capability": None,
    }
    if cuda:
        props = torch.cuda.get_device_properties(0)
        info.update(gpu=props.name, driver=driver_version(),
                    capability=f"{props.major}.{props.minor}",
                    multiprocessors=props.multi_processor_count,
                    memoryBytes=props.total_memory,
                    deviceCount=torch.cuda.device_count())
    return info
