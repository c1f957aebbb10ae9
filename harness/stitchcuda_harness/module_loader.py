"""Execute a user's Python file as a fresh module under a unique name, so the same file can be
loaded twice (reference and candidate, or a changed task) without one shadowing the other."""
from __future__ import annotations

import hashlib
import io
import os
import sys
import tokenize
import types
from typing import Any, Optional

from .errors import HarnessError, from_exception


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_source(path: str) -> str:
    """The text of a Python source file, decoded as Python decodes it (UTF-8, or the encoding its
    coding comment names). A file that is not one (binary, or not text in that encoding) is a
    `not_python_source` error naming it, never a decoding traceback."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise HarnessError("file_not_found", f"cannot read {path}: {exc.strerror}", path) from exc
    if b"\0" in data:
        raise HarnessError("not_python_source", f"{path} is not a Python source file: it holds NUL bytes "
                           f"(first at byte {data.index(0)}), as binary files do", path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError) as exc:  # a coding comment naming no codec Python knows
        raise HarnessError("not_python_source", f"{path} is not a Python source file: {exc}", path) from exc
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise HarnessError("not_python_source", f"{path} is not a Python source file: byte 0x{data[exc.start]:02x} "
                           f"(line {line}) is not {exc.encoding} text", path, line) from exc


def load_module(path: str, role: str, injected: Optional[dict[str, Any]] = None) -> types.ModuleType:
    """Run `path` as a module named `stitch_<role>_<hash>`. `injected` names are set before the
    code runs (the fast-path candidate finds its built library this way). The module is removed
    from sys.modules afterwards: nothing else should find it by name."""
    path = os.path.abspath(path)
    source = read_source(path)
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
