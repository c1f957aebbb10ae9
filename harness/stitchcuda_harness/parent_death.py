"""Dying with the parent process. The host's own children get PR_SET_PDEATHSIG from the host; a
program the host starts through another one (ncu's target, started by ncu) does not, so a host killed
outright would leave it running on the GPU. Such a program asks for it itself, first thing."""
from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return  # no prctl (not Linux): nothing to ask for
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
