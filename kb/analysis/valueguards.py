"""Run-time checks of parameter values a rewrite is proven for (the probe rows, kb/probes/values.py).

A rewrite probe records, per parameter, the classes of values whose emitted rewrite ran and matched
torch (``proven``) and those that gave another result (``failed``): ``F.interpolate``'s ``mode`` is
proven for 'nearest', 'bilinear', 'linear' and 'area' and differs at 'bicubic'. A call passing a
literal is checked when it is converted; a value held in a variable (``mode=self.mode``), or carried
by ``*args``/``**kwargs``, is known only when the code runs. The torch-signature adapter the call goes
through (adapters.py) then checks it first::

    if not (mode == 'nearest' or ...):
        raise NotImplementedError("torch.nn.functional.interpolate: mode=... is not proven ...")

The condition is written from the proven classes (and torch's default, which the call styles that omit
it proved), so a value of a class no probe proved raises, never computes something else. Only
parameters with a value whose result differed are checked (one that only crashed raises by itself).
"""
from __future__ import annotations

from typing import Any

from kb.analysis.arguments import Blocked
from kb.analysis.transforms import MISSING, literal
from kb.probes.values import only_crashes, value_class

NUMBER = "isinstance({v}, (int, float)) and not isinstance({v}, bool)"
RANGES = {  # the number classes of kb.probes.values._number, as conditions
    "0": "{v} == 0", "1": "{v} == 1", "-1": "{v} == -1", "frac": "0 < {v} < 1", "-frac": "-1 < {v} < 0",
    "+": "{v} > 1", "-": "{v} < -1",
}


def checked_parameters(target: dict[str, Any]) -> dict[str, list[str]]:
    """Torch parameter -> the value classes proven for it, for each parameter a probe saw differ from torch."""
    proof = target.get("proof") or {}
    failures = proof.get("value_failures") or []
    return {param: list(entry.get("proven") or []) for param, entry in (proof.get("values") or {}).items()
            if entry.get("failed") and not only_crashes(failures, param)}


def guards(record: dict[str, Any], target: dict[str, Any], names: list[tuple[str, str | None]]) -> list[str]:
    """The adapter's checks (``if ...: raise ...`` lines) for its parameters ``names`` ((name, torch default
    text)); ``Blocked`` when a proven class cannot be written as a condition."""
    checked = checked_parameters(target)
    lines = []
    for name, default in names:
        if name not in checked:
            continue
        classes = list(checked[name])
        default_value = literal(default)
        if default is not None and default_value is not MISSING and value_class(default_value) not in classes:
            classes.append(value_class(default_value))
        words = sorted({cls[4:] for cls in classes if cls.startswith("str:")})
        parts = [f"(isinstance({name}, str) and {name} in {tuple(words)!r})"] if words else []
        parts += [class_condition(cls, name) for cls in sorted(set(classes)) if not cls.startswith("str:")]
        condition = " or ".join(parts)
        failed = ", ".join(described(cls) for cls in
                           sorted((target.get("proof") or {}).get("values", {}).get(name, {}).get("failed") or []))
        message = (f"{record.get('torch')}: {name}={{{name}!r}} is not a value msmap proved to give torch's result "
                   f"with {target.get('api')} (a rewrite probe found other results for {failed})")
        lines.append(f"if not ({condition or 'False'}):\n        raise NotImplementedError(f{message!r})")
    return lines


def described(cls: str) -> str:
    """A value class as a reader knows it: ``str:bicubic`` -> ``'bicubic'``, ``num:frac`` -> ``num:frac``."""
    kind, _, rest = cls.partition(":")
    if kind == "str":
        return repr(rest)
    return rest if kind == "bool" else cls


def class_condition(cls: str, v: str) -> str:
    """A Python condition true exactly for values of ``v`` in the class ``cls`` (``value_class``)."""
    kind, _, rest = cls.partition(":")
    if cls == "none":
        return f"{v} is None"
    if kind == "bool" and rest in ("True", "False"):
        return f"{v} is {rest}"
    if kind == "str":
        return f"(isinstance({v}, str) and {v} == {rest!r})"
    if kind == "num" and rest in RANGES:
        return f"({NUMBER.format(v=v)} and {RANGES[rest].format(v=v)})"
    if kind == "seq" and rest.startswith("(") and rest.endswith(")"):
        items = _split(rest[1:-1])
        parts = [f"isinstance({v}, (tuple, list))", f"len({v}) == {len(items)}"]
        parts += [class_condition(item, f"{v}[{i}]") for i, item in enumerate(items)]
        return "(" + " and ".join(parts) + ")"
    raise Blocked(f"the proven values of {v} ({cls}) cannot be checked when the code runs")


def _split(text: str) -> list[str]:
    """Top-level comma-separated classes of a sequence class's items."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    return items + [text[start:]] if text else items
