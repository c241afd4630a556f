"""Torch types without a MindSpore counterpart, written in annotations.

``device: torch.device = None``, ``Optional[Union[str, torch.device]]``,
``dynamic_img_pad: torch.jit.Final[bool]``: an annotation states a type and checks nothing
(Python evaluates it, in a class body or a signature, but never tests a value against it).
When the KB has no MindSpore type to rename it to, the torch part is replaced by what keeps the
annotation true and runnable without torch:

- a qualifier that only marks its argument (``torch.jit.Final[T]``) becomes ``T``;
- any other such type becomes ``object`` (every value is one), the whole ``X[...]`` when the
  torch type is subscripted (``object`` is not subscriptable).

Only annotations are touched, never ``isinstance``/``issubclass``/``except``/``typing.cast``,
where the type is a test whose answer would change.
"""
from __future__ import annotations

from typing import Any

from kb.analysis.text import TextEdit

QUALIFIERS = frozenset({"Final"})  # X[T] means "a T" (torch.jit.Final)
PARTS = frozenset({"tuple", "parenthesized_expression", "binary_operator", "subscript", "generic_type",
                   "type_parameter", "list"})
TYPING_GENERICS = frozenset({
    b"Type", b"type", b"Optional", b"Union", b"List", b"list", b"Tuple", b"tuple", b"Dict", b"dict", b"Set", b"set",
    b"FrozenSet", b"frozenset", b"Sequence", b"MutableSequence", b"Iterable", b"Iterator", b"Mapping",
    b"MutableMapping", b"Callable", b"ClassVar", b"Final", b"Annotated", b"Collection",
})


def typing_subscript(subscript: Any, child: Any) -> bool:
    """Whether ``child`` is an argument of a typing generic (``Type[X]``, ``typing.Optional[X]``):
    a type there, even outside an annotation."""
    value = subscript.child_by_field_name("value")
    return value is not None and value.id != child.id and value.type in ("identifier", "attribute") \
        and value.text.rsplit(b".", 1)[-1] in TYPING_GENERICS


TITLE = "Replace the torch type in the annotation (no MindSpore type; annotations check nothing)"


def in_annotation(node: Any) -> bool:
    """Whether ``node`` is (part of) an annotation: a parameter's, a return's, a variable's."""
    child, parent = node, node.parent
    while parent is not None and parent.type in PARTS:
        if parent.type == "subscript" and typing_subscript(parent, child):
            return True  # T = Optional[torch.device]: a type alias
        child, parent = parent, parent.parent
    return parent is not None and parent.type == "type"


def annotation_edit(node: Any) -> TextEdit | None:
    """The replacement of a torch type with no MindSpore counterpart in an annotation, or None."""
    if not in_annotation(node):
        return None
    parent = node.parent
    if parent is not None and parent.type in ("subscript", "generic_type") \
            and (parent.child_by_field_name("value") or parent.named_children[0]).id == node.id:
        if parent.type == "generic_type":  # Final[bool] after ``from torch.jit import Final``
            params = next((c for c in parent.named_children if c.type == "type_parameter"), None)
            indexes = [c for c in params.named_children if c.type != "comment"] if params is not None else []
        else:
            indexes = [c for c in parent.named_children[1:] if c.type != "comment"]
        leaf = node.text.rsplit(b".", 1)[-1].decode("utf-8", "replace")
        if leaf in QUALIFIERS and len(indexes) == 1:
            return TextEdit(parent.start_byte, parent.end_byte, indexes[0].text.decode("utf-8", "surrogateescape"))
        return TextEdit(parent.start_byte, parent.end_byte, "object")
    return TextEdit(node.start_byte, node.end_byte, "object")
