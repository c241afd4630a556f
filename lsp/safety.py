"""Handlers never crash the server: an exception is logged and an empty result returned."""
from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("lsp.server")
MARK = "msmap: handler failed"  # tests look for it in the log


def guarded(default: Any = None) -> Callable:
    def wrap(fn: Callable) -> Callable:
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("%s: %s", MARK, fn.__name__)
                    return default
            return run_async

        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.exception("%s: %s", MARK, fn.__name__)
                return default
        return run
    return wrap
