"""Finding whole words in source bytes quickly (``bytes.find`` in C, boundaries checked here).

Python's ``re`` tries an alternation of names at every word start; a ``find``
loop per name is several times faster on large files, and needs no compiling.
The results are candidates: callers ask the tree whether an identifier starts
and ends there.  So only ASCII word characters bound a word here, as ``\b`` does
in the incremental analysis's pattern: whether a non-ASCII neighbour belongs to
the identifier (``é`` does, ``😀`` does not) is the tree's call.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def find_words(source: bytes, word: bytes, start: int = 0, end: int | None = None) -> Iterator[int]:
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


@lru_cache(maxsize=4096)
def _ends_word(word: bytes) -> re.Pattern[bytes]:
    return re.compile(re.escape(word) + rb"(?![A-Za-z0-9_])")


def word_starts(source: bytes, word: bytes, start: int = 0, end: int | None = None) -> list[int]:
    """The offsets ``find_words`` yields, found faster for short or common words.

    A regex that starts with the word itself lets the scan run in C past every place the
    word continues (``F`` in ``False``, ``nn`` in ``inner``); Python then checks only the
    byte before each remaining match (a look-behind would make the regex test every byte).
    """
    if len(word) >= 4:  # rarely inside other words: bytes.find is quicker than a regex
        return list(find_words(source, word, start, end))
    if not word:
        return []
    size, width, found = len(source), len(word), []
    for match in _ends_word(word).finditer(source, start, len(source) if end is None else end):
        at = match.start()
        after = at + width
        if (at == 0 or source[at - 1] not in WORD_BYTES) and (after >= size or source[after] not in WORD_BYTES):
            found.append(at)
    return found
