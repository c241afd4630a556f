"""lookup and search on absurd input: a clear answer, never an internal error or a wildcard."""
from __future__ import annotations

import json

from tests.reliability.conftest import msmap, one_line_error


def test_a_100k_character_name_is_refused(env):
    one_line_error(msmap(env, "lookup", "a" * 100_000), 2, "name", "300")


def test_like_wildcards_are_literal(env):
    for pattern in ("%", "_", "torch.%", "torch.nn._"):
        done = msmap(env, "lookup", pattern, "--json")
        assert done.returncode == 1, (pattern, done.stdout[:200])
        assert json.loads(done.stdout)["error"] == "not_found"
    assert msmap(env, "lookup", "torch.nn").returncode == 0  # a real prefix still lists its entries


def test_a_huge_limit_is_refused(env):
    one_line_error(msmap(env, "search", "dropout", "-n", str(2**70)), 2, "--limit")


def test_a_10000_word_query_is_refused_at_once(env):
    one_line_error(msmap(env, "search", *(["dropuot"] * 10_000), timeout=20), 2, "words", "at most")
    assert msmap(env, "search", *(["dropout"] * 5)).returncode == 0
