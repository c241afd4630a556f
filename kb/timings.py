"""Performance verdicts from recorded timings (data/timing/, ``msmap probe --timing``).

Read path only (plain dicts from ``kb.query``; no torch, no mindspore).  A timing row is one
measurement: an op (``conv2d``) in one MindSpore family on one device and version, at one shape,
with torch's time for the same op and shape from the same run (``ratio`` = MindSpore / torch).

``verdict(rows, family, ms_version, device)`` judges one choice of target and says, in one line,
what a user deciding on it must know: a cliff against torch, against another measured MindSpore
version (ratios to torch compared shape by shape, so runs at different times stay comparable), or
against the other family.  Two versions' difference counts only beyond the measurements' own spread.
A device or version without measurements is said to be not measured; nothing is estimated.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kb.versions import version_key

TORCH_CLIFF = 3.0     # MindSpore at least this many times slower than torch: worth a line
VERSION_CLIFF = 2.0   # this version at least this many times slower than another measured one (and
                      # more than 1 + both versions' recorded spreads)
FAMILY_CLIFF = 2.0    # this family at least this many times slower than the other one
MEASURED_DEVICES = ("CPU",)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def times(n: float) -> str:
    """'~34x', '~2.5x', '~1.3x'."""
    return f"~{n:.0f}x" if n >= 10 else f"~{n:.1f}x"


def _ratios(rows: list[dict], op: str, family: str, version: str, device: str) -> dict[str, float]:
    """{shape: ratio to torch} of the timed rows of one op, family, version and device."""
    return {r["shape"]: r["ratio"] for r in rows if r["op"] == op and r["family"] == family
            and r["ms_version"] == version and r["device"] == device and r.get("ratio")}


def _spread(rows: list[dict], op: str, family: str, version: str, device: str) -> float:
    """The median recorded spread of the ratios of one op, family, version and device."""
    found = sorted(r.get("ratio_spread") or 0.0 for r in rows if r["op"] == op and r["family"] == family
                   and r["ms_version"] == version and r["device"] == device and r.get("ratio"))
    return found[len(found) // 2] if found else 0.0


def _compare(a: dict[str, float], b: dict[str, float]) -> float | None:
    """How many times slower a is than b, over the shapes both measured (geometric mean)."""
    shared = sorted(set(a) & set(b))
    return geomean([a[s] / b[s] for s in shared]) if shared else None


def _ms(value: float) -> str:
    """'354 ms', '6.6 ms', '0.041 ms'."""
    return f"{value:.0f} ms" if value >= 10 else f"{value:.2g} ms"


def versions(rows: list[dict], device: str = "CPU") -> list[str]:
    return sorted({r["ms_version"] for r in rows if r["device"] == device}, key=version_key)


def verdict(rows: list[dict[str, Any]], family: str, ms_version: str, device: str = "CPU") -> dict | None:
    """The performance facts for one target choice, or None when no timing concerns this API.

    Keys: ``status`` (measured | no_cpu_kernel | not_measured | failed), ``line`` (one sentence),
    ``cliff`` (a threshold was crossed), ``op``/``shape`` (the op judged: of the ops measured for the
    API, the one measured at the most shapes, then the slowest; its slowest shape),
    ``ratio`` (to torch, geometric mean over the shapes), ``slower_than`` (other versions this one
    is VERSION_CLIFF slower than, with factors), ``best_version``, ``other_family``.
    """
    if not rows:
        return None
    device = device.upper() if device.lower() in ("cpu", "gpu") else device
    head = f"{device}, mindspore {ms_version}"
    if device not in {r["device"] for r in rows}:
        where = ", ".join(sorted({r["device"] for r in rows}))
        return {"status": "not_measured", "cliff": False, "line": f"{head}: performance not measured "
                f"(timings exist for {where} only)"}
    mine = [r for r in rows if r["family"] == family and r["device"] == device]
    if not mine:
        return None
    here = [r for r in mine if r["ms_version"] == ms_version]
    if not here:
        return {"status": "not_measured", "cliff": False,
                "line": f"{head}: performance not measured ({family}; measured: "
                        f"{', '.join(versions(mine, device))})"}
    if not any(r.get("ratio") for r in here):
        kinds = {r["result"] for r in here}
        status = "no_cpu_kernel" if "no_cpu_kernel" in kinds else "failed"
        text = "no CPU kernel, nothing to time" if status == "no_cpu_kernel" else \
            f"not timed ({', '.join(sorted(kinds))})"
        return {"status": status, "cliff": False, "line": f"{head} ({family}): {text}"}
    ops = sorted({r["op"] for r in here if r.get("ratio")})
    per_op = {op: _ratios(rows, op, family, ms_version, device) for op in ops}
    # the op measured at the most shapes is the API's general case (conv2d, not the one-shape
    # depthwise variant); among equals, the slowest
    op = max(ops, key=lambda o: (len(per_op[o]), geomean(list(per_op[o].values()))))
    ratio = geomean(list(per_op[op].values()))
    shape = max(per_op[op], key=lambda s: per_op[op][s])
    slower: list[dict] = []
    best: tuple[str, float] | None = None
    noise = _spread(rows, op, family, ms_version, device)
    for v in versions(mine, device):
        if v == ms_version:
            continue
        other = _ratios(rows, op, family, v, device)
        factor = _compare(per_op[op], other)
        if factor is not None and factor >= max(VERSION_CLIFF, 1 + noise + _spread(rows, op, family, v, device)):
            slower.append({"version": v, "factor": round(factor, 2), "ratio": round(geomean(list(other.values())), 2)})
        if other and (best is None or geomean(list(other.values())) < best[1]):
            best = (v, geomean(list(other.values())))
    other_family = _other_family(rows, op, family, ms_version, device, per_op[op])
    parts = []
    if ratio >= TORCH_CLIFF:
        parts.append(f"{times(ratio)} slower than torch")
    if slower:
        worst = max(slower, key=lambda s: s["factor"])
        parts.append(f"{times(worst['factor'])} slower than {worst['version']}")
    if other_family and other_family.get("factor", 0) >= FAMILY_CLIFF:
        parts.append(f"{times(other_family['factor'])} slower than {other_family['family']}")
    cliff = bool(parts)
    if not parts:
        parts.append(f"{times(ratio)} torch's time" if ratio >= 1 else f"faster than torch ({ratio:.2f}x its time)")
    line = f"{head} ({family}): {'; '.join(parts)} for this op"
    if slower and best and best[0] != ms_version:
        verb = "avoids it" if best[1] < TORCH_CLIFF else "is the fastest measured"
        line += f"; mindspore {best[0]} {verb} ({times(best[1])} torch's time)"
    if other_family and other_family.get("status") == "no_cpu_kernel":
        line += f"; {other_family['family']}: no CPU kernel"
    worst = next(r for r in here if r["op"] == op and r["shape"] == shape)
    line += f" ({op}, {shape}: {_ms(worst['ms'])} vs torch {_ms(worst['torch_ms'])})"
    return {"status": "measured", "cliff": cliff, "line": line, "op": op, "shape": shape,
            "extra_ms": round(worst["ms"] - worst["torch_ms"], 4),
            "ratio": round(ratio, 2), "slower_than": slower, "best_version": best[0] if best else None,
            "other_family": other_family}


def _other_family(rows: list[dict], op: str, family: str, version: str, device: str,
                  mine: dict[str, float]) -> dict | None:
    other = "mint" if family == "classic" else "classic"
    sub = [r for r in rows if r["op"] == op and r["family"] == other and r["ms_version"] == version
           and r["device"] == device]
    if not sub:
        return None
    theirs = _ratios(rows, op, other, version, device)
    if theirs:
        factor = _compare(mine, theirs)
        return {"family": other, "status": "measured", "factor": round(factor, 2) if factor else None}
    return {"family": other, "status": "no_cpu_kernel" if any(r["result"] == "no_cpu_kernel" for r in sub)
            else "failed"}


def project_costs(uses: dict[str, int], rows_for: Callable[[str], list[dict]], family: str, ms_version: str,
                  device: str, limit: int = 3) -> dict[str, Any]:
    """The torch APIs of a project whose measured ops will dominate a slowdown on this choice.

    ``uses``: {torch API: number of uses}; ``rows_for(name)``: the timing rows of a name.  On a
    device without timings the CPU's are named as such, beside "not measured" (never transferred).
    Returns {device, measured_on, ms_version, family, ops: [{torch, uses, ratio, extra_ms, line}]}:
    cliffs only, the most time added first (milliseconds over torch per call, times the uses)."""
    rows = {name: r for name in uses if (r := rows_for(name))}
    measured_on = device if any(x["device"] == device for r in rows.values() for x in r) else \
        next((d for d in MEASURED_DEVICES if any(x["device"] == d for r in rows.values() for x in r)), None)
    found = []
    for name, r in rows.items():
        v = verdict(r, family, ms_version, measured_on or device)
        if v and v["status"] == "measured" and v["cliff"]:
            found.append({"torch": name, "uses": uses[name], "ratio": v["ratio"], "extra_ms": v["extra_ms"],
                          "line": v["line"]})
    found.sort(key=lambda f: (-f["extra_ms"] * f["uses"], f["torch"]))
    return {"device": device, "measured_on": measured_on, "ms_version": ms_version, "family": family,
            "ops": found[:limit]}


def project_lines(costs: dict[str, Any]) -> list[str]:
    """The scan/convert summary's performance lines (empty when no measured op of the project is slow)."""
    if not costs["ops"]:
        return []
    where = costs["measured_on"]
    head = f"performance ({costs['family']}, mindspore {costs['ms_version']}, {costs['device']}): "
    if where != costs["device"]:
        head += f"{costs['device']} not measured; measured on {where}, these ops dominate the slowdown:"
    else:
        head += "these ops dominate the slowdown:"
    return [head] + [f"  {o['torch']} ({o['uses']} uses): {o['line']}" for o in costs["ops"]]
