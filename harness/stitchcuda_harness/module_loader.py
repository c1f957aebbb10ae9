"""Execute a user's Python file as a fresh module under a unique name, so the same file can be
loaded twice (reference and candidate, or a changed task) without one shadowing the other."""
from __future__ import annotations

import hashlib
import os
import sys
import types
from typing import Any, Optional

from .errors import HarnessError, from_exception


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_module(path: str, role: str, injected: Optional[dict[str, Any]] = None) -> types.ModuleType:
    """Run `path` as a module named `stitch_<role>_<hash>`. `injected` names are set before the
    code runs (the fast-path candidate finds its built library this way). The module is removed
    from sys.modules afterwards: nothing else should find it by name."""
    path = os.path.abspath(path)
    try:
        with open(path, "r", encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        raise HarnessError("file_not_found", f"cannot read {path}: {exc.strerror}", path) from exc
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise HarnessError("syntax_error", f"{exc.msg}", exc.filename or path, exc.lineno) from exc
    name = f"stitch_{role}_{hashlib.sha1(path.encode()).hexdigest()[:10]}"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__.update(injected or {})
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except HarnessError:
        raise
    except BaseException as exc:  # user code may raise anything, SystemExit included
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise from_exception(f"{role}_import_error", exc, (path,), f"importing {os.path.basename(path)}") from exc
    finally:
        sys.modules.pop(name, None)
    return module
