"""The knowledge-base data model (pydantic).

These models validate the curated YAML in ``data/curated/`` and the generated
JSON Lines in ``data/derived/`` at build time.  The read path (lookup, the
language server) never imports this module: it reads plain rows from SQLite.

Vocabulary
----------
- ``Mapping``: one torch API and its MindSpore counterparts (``Target``), one or
  more per target family (classic ``mindspore.nn``/``mindspore.ops`` or the
  torch-aligned ``mindspore.mint``), each valid for a MindSpore version range.
- ``ParamMap``: how one parameter crosses over (rename, value transform, drop).
- ``Caveat``: a behavioural difference worth a human's attention, with an
  optional machine-checkable ``Claim``.
- ``Provenance``: where a fact came from (a seed page, a docs URL, an
  introspection of an installed version, a probe).
"""
from __future__ import annotations

import re
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kb.versions import version_key

VERSION_RE = re.compile(r"^\d+(\.\d+){0,2}$")
DOTTED_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A mapping's source name starts with one of these: torch and its ecosystem packages (torchvision,
# torchaudio, torchtext start with "torch"), plus third-party layers common in torch model code.
SOURCE_ROOTS = ("torch", "einops.", "timm.")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, use_enum_values=True)


class Family(str, Enum):
    classic = "classic"  # mindspore.nn / mindspore.ops / mindspore.Tensor ...
    mint = "mint"  # mindspore.mint (torch-aligned)


class Relation(str, Enum):
    """How a MindSpore target relates to its torch API (ordered roughly by effort)."""

    consistent = "consistent"  # same name, same params, same defaults
    renamed = "renamed"  # different API name, same params and behaviour
    param_names_differ = "param_names_differ"  # params renamed (and maybe re-ordered)
    defaults_differ = "defaults_differ"  # same params, at least one default differs
    torch_more_params = "torch_more_params"  # torch accepts params MindSpore lacks
    param_semantics_differ = "param_semantics_differ"  # a value means something else
    composite = "composite"  # needs several MindSpore APIs
    context_change = "context_change"  # surrounding code must change
    no_equivalent = "no_equivalent"  # nothing to call; advice says what to do


class Severity(str, Enum):
    info = "info"  # good to know, no behaviour change
    warning = "warning"  # behaviour or numerics may differ; check
    error = "error"  # silently wrong results or certain failure if ignored


class ParamKind(str, Enum):
    same = "same"  # same name, same meaning
    renamed = "renamed"  # different name, same meaning
    transformed = "transformed"  # value must be transformed (see ``transform``)
    dropped = "dropped"  # torch-only: drop it (no effect in MindSpore)
    unsupported = "unsupported"  # torch-only and it matters: needs manual work
    added = "added"  # MindSpore-only parameter (its default applies)


class ProvenanceKind(str, Enum):
    seed = "seed"  # ../shared/seeds/<file>
    docs = "docs"  # a public documentation URL
    introspection = "introspection"  # inspect.signature/dir of an installed version
    probe = "probe"  # an executable probe's recorded result
    curator = "curator"  # reasoning by the curator, stated in ``note``


class Provenance(Strict):
    kind: ProvenanceKind
    ref: str = Field(min_length=1, description="seed file name, URL, or 'mindspore 2.10.0'")
    note: str | None = None


class VersionRange(Strict):
    """Half-open range [since, until) of a framework's versions; None = unbounded."""

    since: str | None = None
    until: str | None = None

    @field_validator("since", "until")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        if v is not None and not VERSION_RE.match(str(v)):
            raise ValueError(f"not a version like '2.3' or '2.10.0': {v!r}")
        return None if v is None else str(v)

    @model_validator(mode="after")
    def _ordered(self) -> VersionRange:
        if self.since and self.until and version_key(self.since) >= version_key(self.until):
            raise ValueError(f"since {self.since} is not before until {self.until}")
        return self


class ClaimKind(str, Enum):
    exists = "exists"  # ``api`` exists
    absent = "absent"  # ``api`` does not exist
    has_param = "has_param"  # ``api`` accepts ``param``
    lacks_param = "lacks_param"  # ``api`` does not accept ``param``
    default = "default"  # default of ``api``.``param`` is ``value`` (Python literal text)


class Claim(Strict):
    """A fact a checker can verify by introspecting the installed library."""

    kind: ClaimKind
    api: str
    param: str | None = None
    value: str | None = Field(None, description="Python literal as text, e.g. 'False', \"'same'\"")

    @model_validator(mode="after")
    def _shape(self) -> Claim:
        if not DOTTED_RE.match(self.api):
            raise ValueError(f"api is not a dotted name: {self.api!r}")
        needs_param = self.kind in ("has_param", "lacks_param", "default")
        if needs_param and not self.param:
            raise ValueError(f"claim kind {self.kind!r} needs 'param'")
        if self.kind == "default" and self.value is None:
            raise ValueError("claim kind 'default' needs 'value'")
        return self


class ParamMap(Strict):
    torch: str | None = None  # None for MindSpore-only params
    ms: str | None = None  # None for dropped/unsupported torch params
    kind: ParamKind = ParamKind.same
    torch_default: str | None = None  # Python literal text, as in the signature
    ms_default: str | None = None
    transform: str | None = Field(
        None, description="Python expression of the torch value named 'v', e.g. '1 - v'"
    )
    symbolic: str | None = Field(
        None, description="expression of 'v' written when the value is not a literal (default: transform)"
    )
    note: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> ParamMap:
        if self.torch is None and self.ms is None:
            raise ValueError("a ParamMap needs 'torch' or 'ms'")
        if self.kind in ("dropped", "unsupported") and self.torch is None:
            raise ValueError(f"kind {self.kind!r} needs the 'torch' param name")
        if self.kind == "added" and self.ms is None:
            raise ValueError("kind 'added' needs the 'ms' param name")
        if self.kind == "transformed" and not self.transform:
            raise ValueError("kind 'transformed' needs 'transform'")
        for text in (self.transform, self.symbolic):
            if text is None:
                continue
            try:
                compile(text, "<transform>", "eval")
            except SyntaxError as exc:
                raise ValueError(f"transform is not a Python expression: {exc.msg}") from None
        if self.symbolic is not None and not self.transform:
            raise ValueError("'symbolic' goes with 'transform'")
        return self


class Example(Strict):
    torch: str
    mindspore: str


class Target(Strict):
    family: Family
    api: str | None = None  # fully qualified MindSpore name; None when no_equivalent
    relation: Relation
    params: list[ParamMap] = Field(default_factory=list)
    note: str | None = None  # Markdown, one short paragraph
    ms_versions: VersionRange = Field(default_factory=VersionRange)
    provenance: list[Provenance] = Field(default_factory=list)
    example: Example | None = None
    # Whether a call can be rewritten mechanically (callee + params).  Context
    # changes and composites never are.
    auto: bool | None = None
    # Call templates for rewrites that are not callee + arguments (``x.size(d)`` -> ``x.shape[d]``):
    # the first whose ``{param}`` placeholders the call passes is used (see kb/analysis/templates.py).
    template: list[str] = Field(default_factory=list)
    # A function the template calls, written once into the converted file (its source; ``{ms}`` is
    # the MindSpore alias), for rewrites too long for one expression (scaled_dot_product_attention).
    helper: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> Target:
        for text in self.template:
            check_template(text)
        if self.helper is not None:
            if not self.template or not re.match(r"(def|class) [A-Za-z_]\w*\(", self.helper):
                raise ValueError("a helper is a 'def name(...)' or 'class name(...)' that a template calls")
            try:
                compile(self.helper.replace("{ms}", "ms"), "<helper>", "exec")
            except SyntaxError as exc:
                raise ValueError(f"helper is not Python: {exc.msg} (line {exc.lineno})") from None
        if self.relation == "no_equivalent":
            if self.api is not None:
                raise ValueError("relation 'no_equivalent' must not name an 'api'")
        elif not self.api:
            raise ValueError(f"relation {self.relation!r} needs 'api'")
        if self.api is not None and not DOTTED_RE.match(self.api):
            raise ValueError(f"api is not a dotted name: {self.api!r}")
        if self.api is not None and not self.api.startswith("mindspore"):
            raise ValueError(f"api must be a mindspore name: {self.api!r}")
        return self


def check_template(text: str) -> None:
    """A call template must be a Python expression once its placeholders are filled in, or a simple
    statement (``assert``, ``raise``: it replaces a call that is a whole statement); the empty
    template, or one of ``{name=LITERAL}`` conditions only, removes the construct
    (kb/analysis/templates.py)."""
    from kb.analysis.templates import FIELD_RE, KEYWORDS_RE, SPREAD_RE, STATEMENT_RE
    from kb.analysis.transforms import MISSING, literal

    if text == "":
        return

    for match in FIELD_RE.finditer(text):
        if match[4] is not None and (match[1] or literal(match[4]) is MISSING and match[4].strip() != "int"):
            raise ValueError(f"template condition {match[0]!r} must be {{name=LITERAL}} or {{name=int}}")
    count = iter(range(len(text)))
    filled = FIELD_RE.sub(lambda m: "" if m[4] is not None else f", a{next(count)}=b" if m[1] else "x",
                          SPREAD_RE.sub("x", KEYWORDS_RE.sub(", k=v", text))).replace("(, ", "(")
    if not filled.strip():  # conditions only ({enabled=False}): removes the construct, as ""
        return
    try:
        compile(filled, "<template>", "exec" if STATEMENT_RE.match(text) else "eval")
    except SyntaxError as exc:
        raise ValueError(f"template is not an expression: {text!r} ({exc.msg})") from None


class Caveat(Strict):
    id: str
    title: str = Field(min_length=3)
    body: str = Field(min_length=10, description="Markdown")
    severity: Severity
    topic: str = Field(description="e.g. modes, padding, init, autodiff, optimizers")
    applies_to: list[str] = Field(min_length=1, description="torch and/or mindspore API names")
    ms_versions: VersionRange = Field(default_factory=VersionRange)
    torch_versions: VersionRange = Field(default_factory=VersionRange)
    provenance: list[Provenance] = Field(min_length=1)
    claims: list[Claim] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _slug(cls, v: str) -> str:
        if not SLUG_RE.match(v):
            raise ValueError(f"caveat id must be a lowercase-dashed slug: {v!r}")
        return v

    @field_validator("applies_to")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        for name in v:
            if not DOTTED_RE.match(name):
                raise ValueError(f"applies_to entry is not a dotted name: {name!r}")
        return v


class Mapping(Strict):
    torch: str
    kind: str | None = None  # function, class, method, dtype, attribute, module
    namespace: str | None = None  # the torch namespace bucket (filled at build)
    targets: list[Target] = Field(default_factory=list)
    advice: str | None = None  # Markdown: what to do (esp. for no equivalent)
    caveats: list[str] = Field(default_factory=list)  # caveat ids
    provenance: list[Provenance] = Field(default_factory=list)
    # torch versions that have the name (a removed API: ``until``); ``msmap check`` expects it absent outside
    torch_versions: VersionRange = Field(default_factory=VersionRange)
    # a package the torch name needs besides torch itself: an optional dependency (``tensorboard``) or the
    # device plugin that adds it (``torch_npu`` adds ``torch.npu``); ``msmap check`` cannot check the name
    # while that package is not installed, and says so instead of reporting drift
    torch_requires: str | None = None
    # the torch signature calls are bound with, where the recorded one (a builtin's first docstring
    # overload, ``sum(input, *, dtype=None)``) lacks the overload real calls use (``sum(input, dim, ...)``)
    torch_signature: str | None = None

    @field_validator("torch")
    @classmethod
    def _torch(cls, v: str) -> str:
        if not DOTTED_RE.match(v) or not v.startswith(SOURCE_ROOTS):
            raise ValueError(f"torch must be a dotted torch name (or einops.*, timm.*): {v!r}")
        return v


class WeightDetect(Strict):
    """How a layer is recognised from the keys of a torch state_dict alone (no model given)."""

    has: list[str] = Field(default_factory=list)  # keys under the layer's prefix it must have
    lacks: list[str] = Field(default_factory=list)  # keys it must not have
    weight_ndim: int | None = None  # number of axes of its 'weight'


class WeightExample(Strict):
    """A torch module and its MindSpore counterpart, as constructor expressions (tests build both
    and check the rule maps every state_dict key onto every parameter)."""

    torch: str = Field(min_length=1)
    ms: str = Field(min_length=1)


class WeightRule(Strict):
    """How one layer type's torch state_dict keys become MindSpore parameter names (one family)."""

    layer: str = Field(min_length=1)
    family: Family
    torch: list[str] = Field(min_length=1)
    ms: list[str] = Field(min_length=1)
    names: dict[str, str | None] = Field(default_factory=dict)  # torch leaf -> ms leaf (None: dropped)
    inner: list[str] = Field(default_factory=list)  # segments MindSpore inserts before the leaf
    segments: dict[str, str] = Field(default_factory=dict)  # torch sub-module name -> MindSpore name
    insert_axis: int | None = None  # MindSpore keeps an extra size-1 axis here
    attributes: dict[str, str] = Field(default_factory=dict)  # torch layer attribute -> MindSpore attribute
    detect: WeightDetect
    examples: list[WeightExample] = Field(min_length=1)
    note: str | None = None
    provenance: list[Provenance] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> WeightRule:
        if not self.names and not self.segments:
            raise ValueError("a weight rule needs 'names' or 'segments'")
        if not self.detect.has:
            raise ValueError("'detect.has' must name at least one key")
        return self


class TimingRow(Strict):
    """One recorded op timing (data/timing/*.jsonl, written by ``msmap probe --timing``)."""
    op: str
    torch: str
    torch_apis: list[str] = Field(min_length=1)
    family: Family
    ms_api: str
    device: str
    ms_version: str
    torch_version: str | None = None
    shape: str
    result: str = Field(pattern="^(timed|no_cpu_kernel|absent|error|timeout)$")
    ms: float | None = None
    spread: float | None = None
    torch_ms: float | None = None
    torch_spread: float | None = None
    ratio: float | None = Field(default=None, gt=0)
    ratio_spread: float | None = None
    date: str
    machine: str
    detail: str | None = None


class CuratedFile(Strict):
    """One YAML file under data/curated/."""

    mappings: list[Mapping] = Field(default_factory=list)
    caveats: list[Caveat] = Field(default_factory=list)
    weight_rules: list[WeightRule] = Field(default_factory=list)


class DerivedMapping(Mapping):
    """One line of data/derived/*.jsonl, generated by ``msmap derive``."""
