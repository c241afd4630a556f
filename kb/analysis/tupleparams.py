"""A list where MindSpore takes an int or a tuple only: the value is handed over as a tuple.

torch's size parameters take an int or any sequence (``nn.ReflectionPad2d(self.pad_sizes)`` with a list,
``kernel_size=[3, 3]``); many MindSpore 2.10 layers and functions check the type and refuse a list
(``'padding' must be an integer or tuple, but got list``). Which MindSpore parameters do is data: the
``has_param`` claims of the curated caveat ``list-refused-where-tuple-expected``
(data/curated/sequence_params.yaml), which reaches each torch record whose target it names.

For those parameters the argument map gets one more transform, composed after the one it has::

    tuple(v) if isinstance(v, list) else v

so a list literal is written as a tuple literal (``[3, 3]`` -> ``(3, 3)``), an int stays as it is, and any
other expression is checked when the code runs (``padding=tuple(pads) if isinstance(pads, list) else pads``);
a MindSpore value derived from the parameter (a pool's ``stride`` from ``kernel_size``) gets it too. Calls and
torch-signature adapters use the widened map (rewrite.py, adapters.py); references and the knowledge base's
own record are left as they are.
"""
from __future__ import annotations

from typing import Any

from kb.analysis.transforms import parse_signature, substitute

CAVEAT = "list-refused-where-tuple-expected"
AS_TUPLE = "tuple(v) if isinstance(v, list) else v"
CARRIES_VALUE = ("same", "renamed", "transformed", "added")


def tuple_only(record: dict[str, Any], api: str | None) -> set[str]:
    """The MindSpore parameters of ``api`` the caveat says refuse a list."""
    return {str(claim.get("param")) for caveat in record.get("caveats") or [] if caveat.get("id") == CAVEAT
            for claim in caveat.get("claims") or []
            if claim.get("kind") == "has_param" and claim.get("api") == api and claim.get("param")}


def widened(record: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """``target`` with each of its tuple-only parameters converted from a list (the same target when none)."""
    names = tuple_only(record, target.get("api"))
    if not names:
        return target
    params: list[Any] = []
    covered: set[str] = set()
    for rule in target.get("params") or []:
        if not isinstance(rule, dict) or rule.get("ms") not in names or rule.get("kind", "same") not in CARRIES_VALUE \
                or (rule.get("kind") == "added" and not (rule.get("torch") and rule.get("transform"))):
            params.append(rule)
            continue
        if rule.get("kind") != "added":
            covered.add(str(rule.get("ms")))
        changed = {**rule, "transform": _after(rule.get("transform")),
                   "kind": "added" if rule.get("kind") == "added" else "transformed"}
        if rule.get("symbolic"):
            changed["symbolic"] = _after(rule["symbolic"])
        params.append(changed)
    signature = parse_signature(record.get("torch_signature"))
    torch_names = signature.names if signature is not None else set()
    mapped = {r.get("torch") for r in params if isinstance(r, dict) and r.get("kind") != "added"}
    for name in sorted(names - covered):  # a parameter of the same name the map does not list (``same``)
        if name in torch_names and name not in mapped:
            params.append({"torch": name, "ms": name, "kind": "transformed", "transform": AS_TUPLE})
    return {**target, "params": params}


def _after(transform: str | None) -> str:
    """``AS_TUPLE`` applied to what ``transform`` computes."""
    return AS_TUPLE if not transform or transform.strip() == "v" else substitute(AS_TUPLE, transform.strip())
