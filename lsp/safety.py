"""Handlers never crash the server: an exception is logged and an empty result returned.

A ``JsonRpcException`` a handler raises on purpose (invalid arguments) is not caught: pygls answers
the request with that error."""
from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException

log = logging.getLogger("lsp.server")
MARK = "msmap: handler failed"  # tests look for it in the log


def guarded(default: Any = None) -> Callable:
    def wrap(fn: Callable) -> Callable:
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except (asyncio.CancelledError, JsonRpcException):
                    raise
                except Exception:
                    log.exception("%s: %s", MARK, fn.__name__)
                    return default
            return run_async

        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except JsonRpcException:
                raise
            except Exception:
                log.exception("%s: %s", MARK, fn.__name__)
                return default
        return run
    return wrap
