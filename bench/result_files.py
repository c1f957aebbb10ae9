"""Writing a benchmark's results.json and results.md so that a call stopped at any moment (a device
machine's time limit) leaves either the previous pair or the new one, never half a file."""
from __future__ import annotations

import json
import os
from typing import Any


def write_results(out_dir: str, doc: dict[str, Any], markdown: str) -> None:
    for name, text in (("results.json", json.dumps(doc, indent=1) + "\n"), ("results.md", markdown)):
        tmp = os.path.join(out_dir, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out_dir, name))
