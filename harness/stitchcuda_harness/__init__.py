"""StitchCUDA harness: the Python worker that loads a user's PyTorch model, captures its graph,
builds and verifies candidates and times them. It reports facts; the host decides what to do."""
from __future__ import annotations

__version__ = "0.1.0"
