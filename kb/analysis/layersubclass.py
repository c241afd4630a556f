"""A class deriving from a torch layer whose MindSpore class takes other arguments or names.

torchvision's ConvNeXt has::

    class LayerNorm2d(nn.LayerNorm):
        def forward(self, x):
            x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)

built as ``partial(LayerNorm2d, eps=1e-6)(channels)``.  Deriving from ``ms.nn.LayerNorm`` alone
leaves torch's constructor arguments (``eps``, an int shape) and torch's attribute names
(``weight``, ``eps``) in a class whose base knows neither.  With the base's migration come:

- a class without ``__init__`` gets one with torch's parameters that builds the MindSpore base
  through the call's parameter map (the body of a torch-signature adapter, adapters.py);
- ``super().__init__(...)`` in the class's own ``__init__`` gets the map like a call of the base;
- ``self.<attr>`` in the class's methods follows the weight rules of the MindSpore base
  (``weight`` -> ``gamma``, ``eps`` -> ``epsilon``), as an ``isinstance`` branch does (narrowing.py);
- (any migrated class) ``super().forward(x)`` follows the rename of ``forward`` (``super_renames``).

A torch signature an adapter cannot take (``*args``) leaves the class as it was.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kb.analysis.adapters import adapter, adapter_name, insertion
from kb.analysis.arguments import Blocked, plan_arguments, read_arguments
from kb.analysis.classes import LocalClass
from kb.analysis.rewrite import spelled
from kb.analysis.text import TextEdit
from kb.analysis.tupleparams import widened


def subclass_edits(local: LocalClass, record: dict[str, Any], target: dict[str, Any], alias: str,
                   source: bytes, names: dict[str, str]) -> list[TextEdit]:
    """The edits that make ``local`` (deriving from ``record``'s class, migrated to ``target``)
    take torch's arguments and read the MindSpore base's attributes."""
    edits: list[TextEdit] = []
    if "__init__" in local.methods:
        edits += _super_init_edits(local, record, target, source, alias)
    elif _params_change(target):
        added = _init_method(local.node, record, target, alias)
        edits += [added] if added is not None else []
    renamed = {t: m for t, m in names.items() if m != t}
    for method in local.methods.values():
        edits += _attribute_renames(method, renamed)
    return edits


def may_edit(target: dict[str, Any], names: dict[str, str]) -> bool:
    """Whether ``subclass_edits`` can give a class deriving from a layer migrated to ``target`` edits, whatever
    the class holds: the MindSpore class takes other parameters, or names some attribute otherwise. (Else only
    ``super().__init__(*args)`` gets edits: a class holding one has them already, and an edit writing one
    re-analyses the file, ``incremental._feeds_a_splat``.)"""
    return bool(target.get("params")) or any(m != t for t, m in names.items())


def super_renames(local: LocalClass, old: str, new: str) -> list[TextEdit]:
    """``super().forward(x)`` -> ``super().construct(x)`` in the class's methods, when its
    ``forward`` becomes ``construct``: the MindSpore base (or the user's migrated base) has only
    the new name."""
    edits = []
    for method in local.methods.values():
        for node in _nodes(method.child_by_field_name("body") if method is not None else None):
            attr = node.child_by_field_name("attribute") if node.type == "attribute" else None
            if attr is None or attr.text.decode("utf-8", "replace") != old:
                continue
            owner = node.child_by_field_name("object")
            if owner is not None and owner.type == "call" and owner.child_by_field_name("function").text == b"super":
                edits.append(TextEdit(attr.start_byte, attr.end_byte, new))
    return edits


def _params_change(target: dict[str, Any]) -> bool:
    return any(rule.get("kind", "same") != "same" or (rule.get("ms") and rule.get("ms") != rule.get("torch"))
               for rule in target.get("params") or [] if isinstance(rule, dict))


def _init_method(class_node: Any, record: dict[str, Any], target: dict[str, Any], alias: str) -> TextEdit | None:
    body = class_node.child_by_field_name("body")
    statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    if not statements:
        return None
    try:
        text = adapter(record, target, alias, "super().__init__")
    except Blocked:
        return None
    head, rest = text.split("\n", 1)
    params = head[len(f"def {adapter_name(str(target.get('api')))}("):]
    rest = rest.replace("    return super().__init__(", "    super().__init__(", 1)
    rest = rest.replace(" by super().__init__ in this conversion",
                        f" by {spelled(str(target.get('api')), alias)} in this conversion")
    indent = " " * statements[0].start_point[1]
    lines = [f"def __init__(self, {params}" if params != "):" else "def __init__(self):"] \
        + rest.rstrip("\n").split("\n")
    method = "\n".join(indent + line if line else line for line in lines)
    first = statements[0]
    if first.type == "expression_statement" and first.named_children and first.named_children[0].type == "string":
        if len(statements) == 1:  # a class of a docstring only
            return TextEdit(first.end_byte, first.end_byte, "\n\n" + method)
        first = statements[1]
    return TextEdit(first.start_byte, first.start_byte, method.lstrip(" ") + "\n\n" + indent)


def _super_init_edits(local: LocalClass, record: dict[str, Any], target: dict[str, Any], source: bytes,
                      alias: str) -> list[TextEdit]:
    method = local.methods["__init__"]
    for node in _nodes(method.child_by_field_name("body")):
        if node.type != "call":
            continue
        function = node.child_by_field_name("function")
        if function is None or function.type != "attribute" \
                or function.child_by_field_name("attribute").text != b"__init__":
            continue
        owner = function.child_by_field_name("object")
        if owner is None or owner.type != "call" or owner.child_by_field_name("function").text != b"super":
            continue
        try:
            if any(a.star for a in read_arguments(node)[0]):
                return _unpacked_super_init(local, node, record, target, source, alias)
            return plan_arguments(node, record, widened(record, target), source)
        except Blocked:
            return []
    return []


def _unpacked_super_init(local: LocalClass, call: Any, record: dict[str, Any], target: dict[str, Any],
                         source: bytes, alias: str) -> list[TextEdit]:
    """``super().__init__(c_in, c_out, k, **kwargs)``: what ``kwargs`` holds is known only at run time
    (torch's ``bias=False``, ``groups=``), so the arguments go through a function written into the file
    that takes torch's parameters and gives the MindSpore base's, with the same parameter map and
    transforms as an adapter: ``super().__init__(**ms_Conv2d_args(c_in, c_out, k, **kwargs))``."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None or local.node is None:
        return []
    api = spelled(str(target.get("api")), alias)
    name = adapter_name(str(target.get("api"))) + "_args"
    text = adapter(record, target, alias, "dict")
    text = text.replace(" by dict in this conversion", f" by {api} in this conversion")
    head, rest = text.split("\n", 1)
    definition = f"def {name}(" + head.split("(", 1)[1] + "\n" + rest.replace(
        f"building {target.get('api')} (written", f"as {target.get('api')}'s keyword arguments (written", 1)
    inner = source[arguments.start_byte + 1:arguments.end_byte - 1].decode("utf-8", "surrogateescape")
    added = insertion(local.node, source, name, definition)
    return [TextEdit(arguments.start_byte, arguments.end_byte, f"(**{name}({inner}))")] + ([added] if added else [])


def _attribute_renames(method: Any, renamed: dict[str, str]) -> Iterable[TextEdit]:
    params = method.child_by_field_name("parameters")
    first = params.named_children[0] if params is not None and params.named_children else None
    if first is None or first.type != "identifier" or not renamed:
        return
    body = method.child_by_field_name("body")
    for node in _nodes(body):
        if node.type != "attribute":
            continue
        obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
        if obj is not None and attr is not None and obj.type == "identifier" and obj.text == first.text:
            new = renamed.get(attr.text.decode("utf-8", "replace"))
            if new is not None:
                yield TextEdit(attr.start_byte, attr.end_byte, new)


def _nodes(node: Any) -> Iterable[Any]:
    """Nodes under ``node``, nested functions and classes left out (their ``self`` is another)."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.named_children if c.type not in ("function_definition", "class_definition"))
