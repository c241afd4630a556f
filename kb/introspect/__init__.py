"""Snapshots of the installed torch and MindSpore API surfaces.

``snapshot(framework)`` imports one framework in *this* interpreter, walks the
namespace table of ``surface_torch`` / ``surface_mindspore`` (the enumeration
rules are documented there and in ``walk``) and returns::

    {"framework": "mindspore", "version": "2.10.0",
     "apis": {"mindspore.mint.add": {"kind": "function", "namespace": "mindspore.mint",
              "signature": "(input, other, *, alpha=1)", "sig_source": "docstring",
              "params": [["input", "POSITIONAL_OR_KEYWORD", null], ...]}}}

``snapfile`` writes it deterministically.  The CLI never imports a framework
in its own process: ``runner`` starts ``python -m kb.introspect`` in a
subprocess (any interpreter, e.g. an older MindSpore in a venv), because
importing MindSpore is slow and a failing op can leave a process unusable.
Only the standard library is needed here, so the venv needs no msmap deps.
"""
from __future__ import annotations

import importlib
import sys

SURFACES = {"torch": "kb.introspect.surface_torch", "mindspore": "kb.introspect.surface_mindspore"}
INSTALL_HINT = {
    "torch": "pip install torch==2.13.0",
    "mindspore": 'pip install mindspore==2.10.0 "numpy<2"',
}


class FrameworkMissing(ImportError):
    """The framework to snapshot is not importable in this interpreter."""


def snapshot(framework: str, log=None) -> dict:
    from kb.introspect.walk import walk

    try:
        importlib.import_module(framework)
    except ImportError as exc:
        raise FrameworkMissing(
            f"{framework} is not importable by {sys.executable} ({exc}); "
            f"install it with: {INSTALL_HINT[framework]}"
        ) from None
    surface = importlib.import_module(SURFACES[framework])
    table = surface.TORCH_NAMESPACES if framework == "torch" else surface.MINDSPORE_NAMESPACES
    apis = walk(table, surface.rules(), log=log)
    snap = {"framework": framework, "version": surface.version(), "apis": apis}
    if framework == "torch":  # every spelling of each object, and the members of classes (spellings.py)
        from kb.introspect.spellings import spellings

        snap.update(spellings(log=log or (lambda _: None)))
    return snap
