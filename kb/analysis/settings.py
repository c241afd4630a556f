"""Engine settings and the choice of a MindSpore target for a record.

The settings mirror the language server's ``initializationOptions`` (see
DESIGN.md): target family, MindSpore version, device and whether tensor-method
guesses are reported.  ``choose_target`` picks, from a KB record, the target of
the configured family whose half-open ``ms_versions`` range holds the version;
only when that family has none does it fall back to the other family, and the
choice says so (``fallback=True``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from kb.versions import in_span

Family = Literal["classic", "mint"]
FAMILIES: tuple[str, ...] = ("classic", "mint")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True)
class EngineSettings:
    family: Family = "classic"
    ms_version: str = "2.10.0"
    device: str = "CPU"  # as every CLI command and the server (DESIGN.md)
    tensor_method_guesses: bool = True
    # a file of a project that uses torch: guess tensor methods even where the file imports no torch
    # (``utils.py``'s ``output.topk(5, 1)`` receives the project's tensors)
    project_tensor_files: bool = False

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}: {self.family!r}")
        if not re.fullmatch(r"\d+(\.\d+){0,2}", str(self.ms_version)):
            raise ValueError(f"not a version like '2.10.0': {self.ms_version!r}")

    @property
    def other_family(self) -> str:
        return "mint" if self.family == "classic" else "classic"


@dataclass(frozen=True)
class TargetChoice:
    """The target a use converts to; ``fallback`` marks a target of the other family."""

    target: dict[str, Any]
    fallback: bool = False
    runs: bool = True  # False: no family has a kernel for it on the configured device

    @property
    def api(self) -> str | None:
        return self.target.get("api")

    @property
    def relation(self) -> str:
        return self.target.get("relation") or "no_equivalent"


def choose_target(record: dict[str, Any], settings: EngineSettings) -> TargetChoice | None:
    """The target for the configured family and version; else the other family's, marked.

    Within a family, a target naming an API is preferred over a ``no_equivalent``
    entry.  The other family's target is used (``fallback=True``) when the configured
    one has no target for the version, only a derived "no equivalent", or an API that a
    probe found without a kernel on the configured device (``no_kernel``) and no later target of
    the family runs there. When neither family runs on the device, the configured family's
    target comes back with ``runs=False``. A target the build gated as unproven (``unproven``)
    gives way to a later proven target of its family, else to the other family's proven one.
    """
    targets = [t for t in record.get("targets") or [] if isinstance(t, dict)]
    first: TargetChoice | None = None
    proven_only = False  # the configured family's target is unproven: only a proven one replaces it
    for family, fallback in ((settings.family, False), (settings.other_family, True)):
        fitting = [t for t in targets
                   if t.get("family") == family and in_span(settings.ms_version, t.get("ms_versions"))]
        if proven_only:
            fitting = [t for t in fitting if t.get("api") and t.get("auto") and runs_on(t, settings.device)]
        if fitting:
            fitting.sort(key=lambda t: not t.get("api"))
            if not fitting[0].get("api") and fitting[0].get("source") != "curated":
                # a derived "no equivalent" in this family: the other family's API, if it has one
                # (a curated "no equivalent" is a deliberate answer, with its own recipe)
                first = first or TargetChoice(fitting[0], fallback)
                continue
            if not runs_on(fitting[0], settings.device):
                # a later target of the family that runs there (``torch.einsum`` on CPU: a matmul composition)
                runnable = next((t for t in fitting[1:] if t.get("api") and runs_on(t, settings.device)), None)
                if runnable is not None:
                    return TargetChoice(runnable, fallback)
                first = first or TargetChoice(fitting[0], fallback, runs=False)  # try the other family
                continue
            if unproven(fitting[0]) and first is None:
                # no probe could run it here (no CPU kernel for an Ascend target): a later proven target of
                # the family (einsum's matmul composition), else the other family's proven rewrite
                later = next((t for t in fitting[1:] if t.get("api") and t.get("auto")
                              and runs_on(t, settings.device)), None)
                if later is not None:
                    return TargetChoice(later, fallback)
                first, proven_only = TargetChoice(fitting[0], fallback), True
                continue
            return TargetChoice(fitting[0], fallback)
    return first


def unproven(target: dict[str, Any]) -> bool:
    """An API target the build turned off because no rewrite probe proved it (``kb.build._gate_unproven``)."""
    proof = target.get("proof")
    return bool(target.get("api")) and isinstance(proof, dict) and bool(proof.get("gated"))


def runs_on(target: dict[str, Any], device: str) -> bool:
    """False when a probe found no kernel for the target's API on ``device`` (``no_kernel``)."""
    return device not in (target.get("no_kernel") or ())


def member_target(record: dict[str, Any], owner_api: str, settings: EngineSettings) -> TargetChoice | None:
    """For a method of a class migrated to ``owner_api``: the target that is a method of it.

    ``torch.nn.Module.forward`` maps to ``mindspore.nn.Cell.construct`` whatever the
    family, because a mint program still subclasses ``mindspore.nn.Cell``.
    """
    prefix = owner_api + "."
    found = [t for t in record.get("targets") or []
             if isinstance(t, dict) and str(t.get("api") or "").startswith(prefix)
             and in_span(settings.ms_version, t.get("ms_versions"))]
    found.sort(key=lambda t: t.get("family") != settings.family)
    if not found:
        return None
    return TargetChoice(found[0], fallback=found[0].get("family") != settings.family)


def relevant_caveats(
    record: dict[str, Any], choice: TargetChoice | None, settings: EngineSettings
) -> list[dict[str, Any]]:
    """Caveats of ``record`` that apply to the chosen target at the configured version."""
    names = {record.get("torch")}
    if choice is not None and choice.api:
        names.add(choice.api)
    found = []
    for caveat in record.get("caveats") or []:
        if not isinstance(caveat, dict) or not in_span(settings.ms_version, caveat.get("ms_versions")):
            continue
        applies = caveat.get("applies_to") or []
        if applies and not names.intersection(applies):
            continue
        found.append(caveat)
    return found


def severity_rank(caveat: dict[str, Any]) -> int:
    return SEVERITY_RANK.get(str(caveat.get("severity")), 0)
