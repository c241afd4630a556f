"""Build a user's model from ``FILE.py:EXPR`` - the one place msmap runs a user's code.

Only ``msmap weights`` and ``msmap verify`` call this, because the user asked for it on the command
line.  The file is imported as a module (as part of its package when it sits in one, so relative
imports work) and EXPR is evaluated in its namespace.  Failures become ``UserCodeError``: the stage
(import, build, ...) and the file:line in the user's code where it went wrong, never a traceback.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from kb.errors import MsmapError

TARGET_RE = re.compile(r"^(?P<file>.+?\.py):(?P<expr>.+)$", re.DOTALL)


class UserCodeError(MsmapError):
    """The user's code failed at ``stage``; ``where`` is 'file:line' in their code (or '')."""

    def __init__(self, stage: str, where: str, message: str, path: Path) -> None:
        super().__init__(f"{where or path}: {stage}: {message}")
        self.stage, self.where, self.detail = stage, where, message


# what to install for each framework these commands need (the 'check' extra pins mindspore and numpy)
INSTALL = {"numpy": "'numpy<2'", "torch": "torch", "mindspore": "mindspore==2.10.0"}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-removed install counts as missing
        return False


def require(*modules: str) -> None:
    """MsmapError (exit 2) naming what to install when a framework these commands need is missing;
    called before any module that imports them."""
    missing = [m for m in modules if not _installed(m)]
    if missing:
        raise MsmapError(f"needs {' and '.join(missing)} installed in this Python ({sys.executable}); "
                         f"install with: pip install {' '.join(INSTALL.get(m, m) for m in missing)}")


def parse_target(text: str, option: str = "--model") -> tuple[Path, str]:
    """'path/to/net.py:Net(10)' -> (Path, 'Net(10)'); MsmapError (exit 2) when malformed."""
    m = TARGET_RE.match(text.strip())
    if not m or not m["expr"].strip():
        raise MsmapError(f"{option} {text!r}: expected FILE.py:EXPRESSION, e.g. model.py:Net(num_classes=10)")
    path = Path(m["file"]).expanduser().resolve()
    if not path.is_file():
        raise MsmapError(f"{option} {text!r}: {path}: no such file")
    try:
        compile(m["expr"], "<expression>", "eval")
    except SyntaxError as exc:
        raise MsmapError(f"{option} {text!r}: the expression is not valid Python ({exc.msg})") from None
    return path, m["expr"].strip()


def _package_root(path: Path) -> tuple[Path, str]:
    """The directory to put on sys.path and the dotted module name of ``path``."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _where(exc: BaseException, root: Path) -> str:
    """file:line of the innermost frame in the user's tree (else the innermost frame outside
    site-packages and msmap itself)."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if not fr.filename.startswith("<")]
    mine = Path(__file__).resolve().parent.parent
    theirs = [
        fr for fr in frames
        if "site-packages" not in Path(fr.filename).parts and not Path(fr.filename).resolve().is_relative_to(mine)
    ]
    for fr in reversed(theirs):
        if Path(fr.filename).resolve().is_relative_to(root):
            return f"{fr.filename}:{fr.lineno}"
    return f"{theirs[-1].filename}:{theirs[-1].lineno}" if theirs else ""


def describe(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"the model code exited (sys.exit({exc.code!r})) instead of returning; nothing was run after it"
    text = str(exc).strip().splitlines()
    first = next((line for line in text if line.strip()), "")
    return f"{type(exc).__name__}: {first}"[:300] if first else type(exc).__name__


def _forget_other_package(top: str, root: Path) -> None:
    """A package of the same name imported earlier from another folder (a torch original and its
    conversion are often both called so) must not answer this import."""
    loaded = sys.modules.get(top)
    where = getattr(loaded, "__file__", None)
    if loaded is None or (where and Path(where).resolve().parent == (root / top).resolve()):
        return
    for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
        del sys.modules[key]


def import_file(path: Path) -> ModuleType:
    root, name = _package_root(path)
    try:
        if "." in name:  # inside a package: a real import, so relative imports resolve
            _forget_other_package(name.split(".")[0], root)
            if str(root) in sys.path:
                sys.path.remove(str(root))
            sys.path.insert(0, str(root))
            return importlib.import_module(name)
        # A lone file: a unique module name (a user's 'model.py' must not shadow or reuse another).
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        unique = f"msmap_user_{name}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
        if unique in sys.modules:
            return sys.modules[unique]
        spec = importlib.util.spec_from_file_location(unique, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[unique] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[unique]
            raise
        return module
    except (Exception, SystemExit) as exc:  # SystemExit: the user's file called sys.exit()/exit()
        raise UserCodeError("import", _where(exc, root), describe(exc), path) from None


def build(path: Path, expr: str) -> Any:
    """Import ``path`` and evaluate ``expr`` in its namespace (stages 'import' and 'build')."""
    module = import_file(path)
    root = _package_root(path)[0]
    try:
        return eval(compile(expr, f"<{path.name}:{expr}>", "eval"), vars(module))  # the user's request
    except (Exception, SystemExit) as exc:
        raise UserCodeError("build", _where(exc, root), describe(exc), path) from None


def run_stage(stage: str, path: Path, fn: Any, *args: Any) -> Any:
    """Call ``fn(*args)`` (user code underneath); a failure becomes UserCodeError(stage)."""
    try:
        return fn(*args)
    except (Exception, SystemExit) as exc:
        raise UserCodeError(stage, _where(exc, _package_root(path)[0]), describe(exc), path) from None
