"""Errors a user may see: each carries a clear message and an exit code."""
from __future__ import annotations


class MsmapError(Exception):
    """An error with a one-line, user-facing message (no traceback is shown)."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class DataError(MsmapError):
    """A data file under data/ is malformed: the message names file, entry and field."""

    exit_code = 3


class DatabaseError(MsmapError):
    """The SQLite knowledge base is missing, corrupt or from another schema."""

    exit_code = 3


class NotFound(MsmapError):
    """An API name is not in the knowledge base (the message carries suggestions)."""

    exit_code = 1
