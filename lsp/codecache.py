"""Keep the code that attrs and cattrs generate at run time, as ``.pyc`` files keep a module's.

lsprotocol declares about 570 attrs classes.  For each one, attrs writes the source of
``__init__``, ``__eq__``, ``__repr__``... and calls ``compile()`` on it while the module is
imported: about 150 ms of a cold start, a third of it.  cattrs does the same for each message
type the first time it converts one.  A code object depends only on the source, the file name
and flags given to ``compile()`` and the interpreter, so ``install()`` gives those two libraries
a ``compile`` that looks the answer up by a digest of exactly those inputs, and ``save()`` writes
the code objects to one marshal file in msmap's cache directory for the next start.  Anything not
seen before is compiled as usual; a missing, stale or damaged file only means compiling again.
(A few generated sources depend on the order of a set of strings, which changes with Python's
hash seed from run to run: those miss now and then and are compiled, which is still correct.)

This module deliberately has no ``from __future__`` imports: the caller's future flags are passed
on explicitly (see ``CachedCompile.__call__``) and none of ours may leak into the code compiled.
"""
import __future__
import atexit
import builtins
import hashlib
import importlib.util
import logging
import marshal
import os
import sys
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger("lsp.codecache")
FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
MODULES = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")  # the callers of compile() we serve
SPARE = 1_000  # entries kept beyond those this process used (code other sessions needed)
_INSTALLED: Optional["CachedCompile"] = None


def default_path() -> Path:
    from kb.paths import cache_dir

    tag = f"{sys.implementation.cache_tag}-{importlib.util.MAGIC_NUMBER.hex()}-o{sys.flags.optimize}"
    return cache_dir() / f"generated-code-{tag}.marshal"


class CachedCompile:
    """A drop-in ``compile`` for source text, answered from a marshal file when it can be."""

    def __init__(self, path: Optional[Path]) -> None:
        self.path = path
        self.codes: dict[bytes, Any] = self._load()
        self.used: set[bytes] = set()
        self.hits = 0
        self.added = 0

    def _load(self) -> dict[bytes, Any]:
        if self.path is None:
            return {}
        try:
            with open(self.path, "rb") as handle:
                found = marshal.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, EOFError, ValueError, TypeError) as exc:
            log.warning("ignoring the generated-code cache %s: %s", self.path, exc)
            return {}
        if not isinstance(found, dict):
            log.warning("ignoring the generated-code cache %s: not a table of code objects", self.path)
            return {}
        return found

    def __call__(self, source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                 optimize: int = -1, **more: Any) -> Any:
        if not dont_inherit:  # what builtins.compile would inherit: the calling code's future flags
            flags |= sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        if more or not isinstance(source, str) or not isinstance(filename, str) or not isinstance(mode, str):
            return builtins.compile(source, filename, mode, flags, True, optimize, **more)
        key = hashlib.blake2b(f"{filename}\0{mode}\0{flags}\0{optimize}\0{source}".encode("utf-8", "surrogatepass"),
                              digest_size=20).digest()
        self.used.add(key)
        code = self.codes.get(key)
        if code is not None:
            self.hits += 1
            return code
        code = builtins.compile(source, filename, mode, flags, True, optimize)
        self.codes[key] = code
        self.added += 1
        return code

    def save(self) -> bool:
        """Write the table if something was added; False when there was nothing to write or it failed."""
        if not self.added or self.path is None:
            return False
        codes = self.codes
        if len(codes) > len(self.used) + SPARE:  # stale code piles up (older library versions): keep what is in use
            codes = {key: code for key, code in codes.items() if key in self.used}
        from kb.paths import write_atomically

        try:
            write_atomically(self.path, marshal.dumps(codes))  # a concurrent start reads old or new
        except (OSError, ValueError) as exc:
            log.warning("cannot write the generated-code cache %s: %s", self.path, exc)
            return False
        self.codes, self.added = codes, 0
        return True


def install(path: Optional[Path] = None) -> CachedCompile:
    """Serve ``compile()`` for attrs and cattrs from the cache (call before lsprotocol is imported).

    ``MSMAP_CODE_CACHE=off`` keeps the cache in memory only (nothing read or written)."""
    global _INSTALLED
    if _INSTALLED is not None:
        return _INSTALLED
    off = os.environ.get("MSMAP_CODE_CACHE", "").lower() in ("off", "0", "no")
    cache = CachedCompile(None if off else (path or default_path()))
    import importlib

    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        module.compile = cache  # a module global shadows the builtin for that module's code only
    _INSTALLED = cache
    atexit.register(cache.save)  # besides the save once start-up has settled: code compiled later
    return cache


def save() -> bool:
    """Save the installed cache, if any (the server calls this once start-up has settled)."""
    return _INSTALLED.save() if _INSTALLED is not None else False
