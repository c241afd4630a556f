"""Finding whole words in source bytes quickly (``bytes.find`` in C, boundaries checked here).

Python's ``re`` tries an alternation of names at every word start; a ``find``
loop per name is several times faster on large files, and needs no compiling.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator, Optional

WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") | frozenset(range(128, 256))


def find_words(source: bytes, word: bytes, start: int = 0, end: Optional[int] = None) -> Iterator[int]:
    """Offsets of ``word`` in ``source[start:end]`` where it is not part of a longer identifier."""
    if not word:
        return
    end = len(source) if end is None else end
    size = len(word)
    at = source.find(word, start, end)
    while at >= 0:
        after = at + size
        if (at == 0 or source[at - 1] not in WORD_BYTES) and (after >= len(source)
                                                                  or source[after] not in WORD_BYTES):
            yield at
        at = source.find(word, after, end)


def has_word(source: bytes, word: bytes) -> bool:
    return next(find_words(source, word), None) is not None


@lru_cache(maxsize=64)
def word_pattern(word: bytes) -> "re.Pattern[bytes]":
    """A regex for ``word`` as a whole word: better than ``find_words`` for a short word that is often
    part of longer ones (``ms`` in ``params``), where the find loop would stop in Python at each."""
    return re.compile(rb"(?<![A-Za-z0-9_\x80-\xff])" + re.escape(word) + rb"(?![A-Za-z0-9_\x80-\xff])")
