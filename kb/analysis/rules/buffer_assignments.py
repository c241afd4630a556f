"""A registered buffer given a new tensor: ``self.cached = emb`` after ``self.register_buffer("cached", None)``.

torch's ``Module.__setattr__`` puts a tensor assigned to a buffer's name into the buffer (its persistence kept).
MindSpore 2.10's ``Cell.__setattr__`` accepts only None for a buffer's name (or its private ``_Buffer`` type); a
Tensor raises ``TypeError: Buffer 'cached' already exists in network, can not assign this type: Tensor``. Its
public route is ``register_buffer`` again, which replaces the buffer under the same name; it takes the persistence
anew (True by default), so the rewrite passes the registration's::

    self.cached = emb        ->  self.register_buffer("cached", emb, persistent=False)
    self.count += 1          ->  self.register_buffer("count", self.count + (1), persistent=True)

A buffer's names are those a class registers with a string literal, and those of the classes of the file it
derives from. ``self.cached = None`` is left as written (MindSpore keeps it as torch does), and so is an
assignment to a name registered with a persistence that is not a literal (reported for a human).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.text import TextEdit
from kb.analysis.words import word_starts

RECORD: dict[str, Any] = {
    "torch": "self.<buffer> = tensor", "kind": "pattern", "namespace": "torch.nn.Module", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "MindSpore's Cell takes only None for a buffer's name by assignment: a new tensor goes through "
              "register_buffer again, with the buffer's persistence.",
}
TITLE = "Give the buffer its new tensor through register_buffer (a Cell refuses a Tensor assigned to a buffer)"
UNKNOWN = "a tensor assigned to a buffer registered with a persistence that is not a literal"


@register
class BufferAssignments(Rule):
    name = "buffer-assignment"
    scope = "file"  # the registration (in __init__) decides an assignment elsewhere in the class
    record = RECORD
    title = TITLE
    order = 70
    triggers = (b"register_buffer",)
    example = """\
class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cached", None, persistent=False)

    def forward(self, x):
        self.cached = x * 2
        return self.cached
"""

    def find(self, context: Context) -> Iterable[Finding]:
        classes = _registered(context.root, context.source)
        for cls, names in _inherited(context.root, context.source, classes).items():
            for statement, left, right, operator in _assignments(cls, set(names)):
                persistent = names[left.child_by_field_name("attribute").text.decode()]
                if persistent is None:
                    yield Finding(statement, reason=UNKNOWN)
                    continue
                name = left.child_by_field_name("attribute").text.decode()
                head = f'self.register_buffer("{name}", '
                if operator:
                    head += f"{left.text.decode()} {operator} ("
                tail = ")" if operator else ""
                end = f"{tail}, persistent={persistent})"
                yield Finding(statement, [TextEdit(left.start_byte, right.start_byte, head),
                                          TextEdit(right.end_byte, right.end_byte, end)])


def _registered(root: Any, source: bytes) -> dict[int, dict[str, str | None]]:
    """{class node id: {buffer name: its persistence as a literal ('True'/'False'), None when not a literal}}."""
    found: dict[int, dict[str, str | None]] = {}
    for at in word_starts(source, b"register_buffer"):
        node = root.named_descendant_for_byte_range(at, at + len(b"register_buffer"))
        attribute = node.parent if node is not None and node.type == "identifier" else None
        if attribute is None or attribute.type != "attribute" \
                or attribute.child_by_field_name("object").text != b"self":
            continue
        call = attribute.parent
        if call is None or call.type != "call" or call.child_by_field_name("function").id != attribute.id:
            continue
        args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
        positional = [a for a in args if a.type != "keyword_argument"]
        keywords = {a.child_by_field_name("name").text: a.child_by_field_name("value") for a in args
                    if a.type == "keyword_argument"}
        name = positional[0] if positional else keywords.get(b"name")
        text = _literal(name)
        cls = _enclosing(call, "class_definition")
        if text is None or cls is None:
            continue
        flag = positional[2] if len(positional) > 2 else keywords.get(b"persistent")
        found.setdefault(cls.id, {})[text] = "True" if flag is None else (
            flag.text.decode() if flag.type in ("true", "false") else None)
    return found


def _inherited(root: Any, source: bytes, classes: dict[int, dict[str, str | None]]
               ) -> dict[Any, dict[str, str | None]]:
    """{class node: its buffers, with those of the file's classes it derives from}."""
    if not classes:
        return {}
    every: dict[bytes, Any] = {}
    for at in word_starts(source, b"class"):  # (the file's classes, without walking every node of its tree)
        node = root.descendant_for_byte_range(at, at + len(b"class"))
        node = node.parent if node is not None and node.type == "class" else None
        if node is not None and node.type == "class_definition" and node.start_byte == at:
            every.setdefault(node.child_by_field_name("name").text, node)
    out: dict[Any, dict[str, str | None]] = {}
    for cls in every.values():
        names: dict[str, str | None] = {}
        seen, pending = set(), [cls]
        while pending:
            current = pending.pop()
            if current.id in seen:
                continue
            seen.add(current.id)
            names = {**classes.get(current.id, {}), **names}  # the class's own registration wins
            bases = current.child_by_field_name("superclasses")
            pending += [every[b.text] for b in (bases.named_children if bases is not None else ())
                        if b.type == "identifier" and b.text in every]
        if names:
            out[cls] = names
    return out


def _assignments(cls: Any, names: set[str]) -> Iterable[tuple[Any, Any, Any, str]]:
    """(statement, ``self.<buffer>``, value, operator of an augmented assignment or '') in the class's methods."""
    stack = list(cls.child_by_field_name("body").named_children)
    while stack:
        node = stack.pop()
        if node.type in ("class_definition", "lambda"):
            continue
        stack.extend(node.named_children)
        if node.type not in ("assignment", "augmented_assignment") or node.parent is None \
                or node.parent.type != "expression_statement":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or left.type != "attribute" or node.child_by_field_name("type") is not None:
            continue
        held, attr = left.child_by_field_name("object"), left.child_by_field_name("attribute")
        if held.text != b"self" or attr.text.decode() not in names or right.type in ("none", "assignment"):
            continue
        operator = ""
        if node.type == "augmented_assignment":
            operator = node.child_by_field_name("operator").text.decode()[:-1]
        yield node, left, right, operator


def _enclosing(node: Any, kind: str) -> Any | None:
    while node is not None and node.type != kind:
        node = node.parent
    return node


def _literal(node: Any | None) -> str | None:
    if node is None or node.type != "string":
        return None
    parts = [c for c in node.named_children if c.type not in ("string_start", "string_end")]
    if len(parts) != 1 or parts[0].type != "string_content":
        return None
    return parts[0].text.decode("utf-8", "replace")
