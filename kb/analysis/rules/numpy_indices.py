"""NumPy integers and arrays in a tensor's index: ``stream[i:i + T] for i in batch_starts``.

torch takes a NumPy integer as an int and a NumPy array as an index tensor anywhere in an index; MindSpore 2.10
refuses both (``Slice index type must be int, tensor or none``, ``IndexError: Unsupported Python object type
received: <class 'numpy.int64'>``), in a read and in a store alike. Training scripts get such values from the data
side: a loop over a NumPy array of window starts, ``np.random.randint``, ``np.random.permutation``. So, in a subscript
of a known tensor (a torch call's result, a name bound from one), each name of the index bound by such a loop or
call in the same function is passed through a helper that turns a NumPy integer into an int and a NumPy array into a
tensor and returns anything else as it is::

    x = torch.stack([stream[i:i + T] for i in starts])
    ->  x = ms.ops.stack([stream[ms_index(i):ms_index(i) + T] for i in starts])

A name bound by ``for i in range(...)`` (or the counter of ``enumerate``) is a Python int and stays as written; so does
code GRAPH_MODE compiles (kb/analysis/graphmode.py: a forward's own indices come from tensors and ints).
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

from kb.analysis.adapters import insertion
from kb.analysis.graphmode import compiled_functions, reads
from kb.analysis.roles import BIND, role
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.tensors import TensorNames, enclosing, tensor_names
from kb.analysis.text import TextEdit

RECORD: dict[str, Any] = {
    "torch": "torch.Tensor.__getitem__", "kind": "method", "namespace": "torch.Tensor", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": None,
    "advice": "MindSpore's tensor indexing refuses NumPy integers and arrays: pass int(i) or a Tensor.",
}
TITLE = "Turn NumPy integers and arrays in the index into an int and a tensor (MindSpore refuses them)"
HELPER = '''\
def ms_index(value):
    """A value used in a tensor's index (written by msmap convert): torch takes a NumPy integer as an int and a
    NumPy array as an index tensor, MindSpore refuses both; anything else is returned as it is."""
    if type(value).__module__ == "numpy":
        return value.item() if value.ndim == 0 else ms.Tensor(value)
    return value
'''
NUMPY_IMPORT = re.compile(rb"(?m)^[ \t]*import[ \t]+numpy(?:[ \t]+as[ \t]+(\w+))?[ \t]*$")
DEFINED = re.compile(rb"\bdef[ \t]+([A-Za-z_]\w*)")
INT_LOOPS = (b"range",)  # loops whose variable is a Python int
COUNTED = (b"enumerate",)  # loops whose first variable is a Python int (the rest: the elements)


@register
class NumpyIndices(Rule):
    name = "numpy-indices"
    scope = "function"  # (whether a function is compiled depends on the file's calls: inputs)
    record = RECORD
    title = TITLE
    order = 70
    triggers = (b"[",)
    example = """\
import numpy as np
import torch
def windows(stream, starts, T):
    data = torch.tensor(stream)
    return torch.stack([data[i:i + T] for i in starts])
"""

    def find(self, context: Context) -> Iterable[Finding]:
        start, end = context.within if context.within != (0, 0) else (0, len(context.source))
        if b"[" not in context.source[start:end]:
            return
        names: TensorNames | None = None
        compiled: set[int] | None = None
        numpy = _numpy_aliases(context.source)
        for subscript in _subscripts(context.root, start, end):
            value = subscript.child_by_field_name("value")
            wrapped = [n for n in _index_names(subscript) if _numpy_bound(n, numpy)]
            if not wrapped:
                continue
            if names is None:
                names = tensor_names(context.root, context.uses_named(("torch.",)), context.alias)
            if value is None or not names.is_tensor(value):
                continue
            if compiled is None:
                compiled = {f.id for f in compiled_functions(context.root)}
            function = enclosing(subscript, "function_definition")
            if function is not None and _compiled(function, compiled):
                continue
            edits = [e for n in wrapped for e in (TextEdit(n.start_byte, n.start_byte, "ms_index("),
                                                  TextEdit(n.end_byte, n.end_byte, ")"))]
            added = insertion(subscript, context.source, "ms_index", HELPER)
            if added is not None:
                edits.append(added)
            yield Finding(subscript, edits, call_span=(subscript.start_byte, subscript.end_byte))

    def inputs(self, context: Context) -> Hashable:
        """The names the file's functions are defined with (what makes a function compiled) and how it imports
        numpy."""
        return frozenset(DEFINED.findall(context.source)), frozenset(_numpy_aliases(context.source))


def _numpy_aliases(source: bytes) -> set[bytes]:
    return {m.group(1) or b"numpy" for m in NUMPY_IMPORT.finditer(source)}


def _subscripts(root: Any, start: int, end: int) -> Iterator[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.end_byte <= start or node.start_byte >= end:
            continue
        if node.type == "subscript" and start <= node.start_byte:
            yield node
        stack.extend(reversed(node.named_children))


def _index_names(subscript: Any) -> list[Any]:
    """The names the index of ``subscript`` reads, outside calls of ``ms_index`` already written."""
    value = subscript.child_by_field_name("value")
    found = []
    for child in subscript.named_children:
        if value is not None and child.id == value.id:
            continue
        for name in reads(child):
            parent = name.parent
            if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == name:
                continue  # (a function called in the index)
            holder = parent.parent if parent is not None and parent.type == "argument_list" else None
            if holder is not None and holder.type == "call" and holder.child_by_field_name("function").text \
                    == b"ms_index":
                continue
            found.append(name)
    return found


def _numpy_bound(name: Any, numpy: set[bytes]) -> bool:
    """Whether the scope reading ``name`` binds it by a loop over something other than ``range`` (an element, not
    ``enumerate``'s counter) or by a call of a NumPy function."""
    scope = _scope(name)
    if scope is None:
        return False
    stack = [scope]
    while stack:
        node = stack.pop()
        if node.id != scope.id and node.type in ("function_definition", "class_definition", "lambda"):
            continue
        stack.extend(node.named_children)
        if node.type == "identifier" and node.text == name.text and role(node)[0] == BIND:
            if _loop_element(node) or _numpy_call(node, numpy):
                return True
    return False


def _scope(name: Any) -> Any | None:
    """The function (or module) whose bindings of ``name`` are read: comprehensions inside it included."""
    node = name.parent
    while node is not None and node.type not in ("function_definition", "module"):
        node = node.parent
    return node


def _loop_element(node: Any) -> bool:
    loop = node.parent
    while loop is not None and loop.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple",
                                             "parenthesized_expression"):
        loop = loop.parent
    if loop is None or loop.type not in ("for_statement", "for_in_clause"):
        return False
    left, right = loop.child_by_field_name("left"), loop.child_by_field_name("right")
    if left is None or right is None or not left.start_byte <= node.start_byte < left.end_byte:
        return False
    called = right.child_by_field_name("function") if right.type == "call" else None
    if called is not None and called.text in INT_LOOPS:
        return False
    if called is not None and called.text in COUNTED and left.type != "identifier":
        first = left.named_children[0] if left.named_children else None
        return first is None or first.id != node.id
    return True


def _numpy_call(node: Any, numpy: set[bytes]) -> bool:
    assignment = node.parent
    if assignment is None or assignment.type != "assignment" or assignment.child_by_field_name("left") != node:
        return False
    value = assignment.child_by_field_name("right")
    called = value.child_by_field_name("function") if value is not None and value.type == "call" else None
    return called is not None and called.text.split(b".", 1)[0] in numpy and b"." in called.text


def _compiled(function: Any, compiled: set[int]) -> bool:
    node = function
    while node is not None:
        if node.type == "function_definition" and node.id in compiled:
            return True
        node = node.parent
    return False
