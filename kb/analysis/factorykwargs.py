"""Factory keyword dicts: ``dd = {'device': device, 'dtype': dtype}`` passed on as ``**dd``.

Layers written for torch >= 2 take ``device=None, dtype=None`` and hand them to every tensor and
layer they build through one dict (timm's ``dd``, torch's own ``factory_kwargs``).  MindSpore has
no per-tensor device (the process's context decides), and its layers take no ``device`` keyword
(classic ``nn.Dense`` or ``nn.LSTM`` reject it), so:

- the ``device`` entry goes: the tensors land where MindSpore puts every tensor;
- the ``dtype`` entry stays, but only when it is not ``None``: a name becomes
  ``{'dtype': dtype} if dtype is not None else {}``; an absent or ``None`` dtype gives ``{}``.
  A dtype given on purpose still reaches MindSpore (``ops.zeros(n, dtype=...)`` takes it; a
  layer that does not take one fails loudly there, never silently);
- a torch call that unpacks such a dict is rewritten as if it passed ``dtype=`` at most:
  ``torch.zeros(dim, **dd)`` -> ``ms.ops.zeros(dim, **dd)`` (``templates.py``: the splat takes the
  place of the optional ``dtype`` argument), and its fix carries the dict's rewrite, so a
  quick-fix applied alone leaves code that runs.

Only a dict proven to hold nothing else is touched: an assignment of a dict literal (or a
``dict(...)`` call) whose keys are ``device`` and/or ``dtype``, assigned once in its scope, whose
name is used nowhere in that scope but in ``**name``.  Anything else is left as it was.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

KEYS = ("device", "dtype")
SCOPES = frozenset({"function_definition", "lambda", "class_definition", "module"})
TITLE = "Drop the device from the factory keyword dict (MindSpore places tensors by its context)"
RECORD: dict[str, Any] = {
    "torch": "factory kwargs", "kind": "pattern", "namespace": "builtins", "source": "curated", "targets": [],
    "caveats": [], "torch_signature": None,
    "advice": "A {'device': ..., 'dtype': ...} dict passed on as **kwargs keeps only a dtype that is not None.",
}


@dataclass
class FactoryDict:
    name: str
    value: Any  # the assigned expression (dict literal, dict(...) call, or the converted conditional)
    dtype: str | None  # the dtype value's text; None when absent or the literal None

    @property
    def may_carry_dtype(self) -> bool:
        return self.dtype is not None

    def text(self) -> str:
        """The MindSpore form of the dict expression."""
        if self.dtype is None:
            return "{}"
        if self.dtype.isidentifier():
            return f"{{'dtype': {self.dtype}}} if {self.dtype} is not None else {{}}"
        return f"{{'dtype': {self.dtype}}}"

    def edit(self) -> TextEdit | None:
        """The dict's rewrite; None when it is already the MindSpore form."""
        new = self.text()
        if self.value.text.decode("utf-8", "surrogateescape") == new:
            return None
        return TextEdit(self.value.start_byte, self.value.end_byte, new)


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def _entries(value: Any) -> dict[str, Any | None] | None:
    """key -> value node of a ``{'device': d, 'dtype': t}`` literal or ``dict(device=d, dtype=t)`` call
    whose keys are all factory keys; None for anything else."""
    found: dict[str, Any | None] = {}
    if value.type == "dictionary":
        for child in value.named_children:
            if child.type == "comment":
                continue
            key = child.child_by_field_name("key") if child.type == "pair" else None
            if key is None or key.type != "string" or len(key.named_children) != 3 \
                    or key.named_children[1].type != "string_content":
                return None  # a splat, a computed key, an f-string ...
            name = _text(key.named_children[1])
            if name not in KEYS or name in found:
                return None
            found[name] = child.child_by_field_name("value")
        return found
    if value.type == "call" and _text(value.child_by_field_name("function")) == "dict":
        arguments = value.child_by_field_name("arguments")
        if arguments is None or arguments.type != "argument_list":
            return None
        for child in arguments.named_children:
            if child.type == "comment":
                continue
            keyword = child.child_by_field_name("name") if child.type == "keyword_argument" else None
            if keyword is None or _text(keyword) not in KEYS:
                return None
            found[_text(keyword)] = child.child_by_field_name("value")
        return found
    return None


def _dtype_of(value: Any) -> tuple[bool, str | None]:
    """(is a factory dict, dtype text) of an assigned expression, the converted conditional
    ``{'dtype': t} if t is not None else {}`` included."""
    if value.type == "conditional_expression":
        parts = [c for c in value.named_children if c.type != "comment"]
        if len(parts) != 3:
            return False, None
        then, test, other = parts
        a, b = _entries(then), _entries(other)
        if a is None or b is None or b or set(a) != {"dtype"}:
            return False, None
        dtype = _text(a["dtype"])
        return _text(test).split() == [dtype, "is", "not", "None"], dtype
    entries = _entries(value)
    if entries is None:
        return False, None
    dtype_node = entries.get("dtype")
    return True, None if dtype_node is None or dtype_node.type == "none" else _text(dtype_node)


def _scope(node: Any) -> Any:
    node = node.parent
    while node is not None and node.type not in SCOPES:
        node = node.parent
    return node


def _root(node: Any) -> Any:
    while node.parent is not None:
        node = node.parent
    return node


def _only_unpacked(name: str, target: Any, scope: Any, source: bytes) -> bool:
    """Whether every occurrence of ``name`` in ``scope`` but ``target`` (the assignment's) is ``**name``."""
    root = _root(scope)
    word = name.encode()
    for at in word_starts(source, word, scope.start_byte, scope.end_byte):
        node = root.named_descendant_for_byte_range(at, at + len(word))
        if node is None or node.type != "identifier" or node.start_byte != at:
            continue
        parent = node.parent
        if node.id == target.id:
            continue
        if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") is not None \
                and parent.child_by_field_name("attribute").id == node.id:
            continue  # obj.dd is another name
        if parent is None or parent.type != "dictionary_splat":
            return False
    return True


def _from_assignment(assignment: Any, source: bytes) -> FactoryDict | None:
    left, value = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    if left is None or value is None or left.type != "identifier" or assignment.child_by_field_name("type"):
        return None
    if assignment.parent is None or assignment.parent.type != "expression_statement":
        return None
    factory, dtype = _dtype_of(value)
    scope = _scope(assignment)
    if not factory or scope is None or not _only_unpacked(_text(left), left, scope, source):
        return None
    return FactoryDict(_text(left), value, dtype)


def splat_factory(splat: Any, source: bytes) -> FactoryDict | None:
    """The factory dict a ``**name`` argument unpacks, when ``name`` is one (see the module's doc)."""
    if splat.type != "dictionary_splat":
        return None
    names = [c for c in splat.named_children if c.type != "comment"]
    if len(names) != 1 or names[0].type != "identifier":
        return None
    name = names[0].text
    scope = _scope(splat)
    if scope is None:
        return None
    root = _root(scope)
    found: list[Any] = []
    for at in word_starts(source, name, scope.start_byte, scope.end_byte):
        node = root.named_descendant_for_byte_range(at, at + len(name))
        parent = node.parent if node is not None and node.type == "identifier" else None
        if parent is not None and parent.type in ("assignment", "augmented_assignment") \
                and parent.child_by_field_name("left") is not None \
                and parent.child_by_field_name("left").id == node.id:
            found.append(parent)
    if len(found) != 1 or found[0].type != "assignment" or _scope(found[0]).id != scope.id:
        return None
    return _from_assignment(found[0], source)


def factory_dicts(root: Any, source: bytes, start: int = 0, end: int | None = None) -> Iterable[FactoryDict]:
    """The factory dicts of a source that still need their rewrite (found from their keys in ``start..end``)."""
    seen: set[int] = set()
    for key in (b"device", b"dtype"):
        for at in word_starts(source, key, start, end):
            node = root.named_descendant_for_byte_range(at, at + len(key))
            value = _container(node)
            assignment = value.parent if value is not None else None
            if value is None or assignment is None or assignment.type != "assignment" or assignment.id in seen:
                continue
            seen.add(assignment.id)
            right = assignment.child_by_field_name("right")
            if right is None or right.id != value.id:
                continue
            found = _from_assignment(assignment, source)
            if found is not None and found.edit() is not None:
                yield found


def _container(node: Any) -> Any | None:
    """The dict literal or ``dict(...)`` call whose key ``node`` is (a string's content, a keyword)."""
    if node is None:
        return None
    if node.type == "string_content" and node.parent is not None and node.parent.parent is not None \
            and node.parent.parent.type == "pair":
        return node.parent.parent.parent
    if node.type == "identifier" and node.parent is not None and node.parent.type == "keyword_argument" \
            and node.parent.parent is not None and node.parent.parent.parent is not None:
        return node.parent.parent.parent
    return None


def call_factory_edits(call: Any, source: bytes) -> list[TextEdit]:
    """The rewrites of the factory dicts a call unpacks (carried by the call's own fix)."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None or arguments.type != "argument_list" or b"**" not in arguments.text:
        return []
    edits = []
    for child in arguments.named_children:
        found = splat_factory(child, source) if child.type == "dictionary_splat" else None
        edit = found.edit() if found is not None else None
        if edit is not None:
            edits.append(edit)
    return edits
