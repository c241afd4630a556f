"""The compact verification and probe lines shown under each target by lookup."""
from __future__ import annotations

from kb.render import Style, probe_lines, verification_lines

ST = Style(colour=False)


def check(result, claim="c", version="2.10.0"):
    return {"subject": "mindspore.nn.Dense", "claim": claim, "kind": "param", "ms_version": version,
            "result": result, "detail": "d", "checked_on": "2026-11-21"}


def test_one_summary_line_plus_failures():
    rows = [check("pass")] * 6 + [check("drift", "mindspore.nn.Dense has parameter x"), check("not_checkable")]
    lines = verification_lines(rows, ST)
    assert lines[0] == "    verified on mindspore 2.10.0: 6/7 claims pass (1 not checkable) · checked 2026-11-21"
    assert lines[1] == "      drift: mindspore.nn.Dense has parameter x — installed: d"
    assert len(lines) == 2


def test_checks_outside_the_target_range_are_not_claimed():
    assert verification_lines([check("pass")], ST, rng={"until": "2.0"}) == []
    assert verification_lines([], ST) == []


def test_no_cpu_kernel_is_visible():
    probes = [{"probe": "gen/x", "result": "no_cpu_kernel", "detail": "The kernel BatchNormExt unregistered.",
               "ms_version": "2.10.0", "device": "cpu", "kind": "equivalence"},
              {"probe": "caveat/y", "result": "holds", "detail": "outputs match", "ms_version": "2.10.0",
               "device": "cpu", "kind": "caveat"}]
    lines = probe_lines(probes, ST)
    assert lines[0] == "    probed on mindspore 2.10.0 (cpu): 1 holds, 1 no_cpu_kernel"
    assert "no CPU kernel: The kernel BatchNormExt unregistered." in lines[1]
    assert "caveat confirmed: caveat/y" in lines[2]
