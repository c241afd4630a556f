"""Training-loop idioms around the step (``trainsteps.py``): the model's mode and the logged rate.

- ``model.train()`` / ``model.eval()`` on a name the same function also uses as a model: torch's
  ``nn.Module`` methods, converted by their KB records (``set_train()``, ``set_train(False)``).
  Without types the receiver could be anything with a ``train`` method (a ``Trainer``); being called
  with data (``model(data)``), or asked for what only a module has (``model.parameters()``,
  ``.state_dict()``, ``.load_state_dict(...)``, ``.named_modules()``), is what a model does. An
  attribute of ``self`` (``self.model.eval()``) counts the uses in its whole class, another object's
  (``runner.model.eval()``) those in its function. Names the resolver already knows (imports, typed
  objects) are its business.
- (an optimizer group's learning rate, read and written: ``grouprates.py``)
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from kb.analysis.catalog import Catalog
from kb.analysis.resolver import Site
from kb.analysis.tensors import enclosing

MODE_METHODS = {b"train": "torch.nn.Module.train", b"eval": "torch.nn.Module.eval"}
# module-only methods whose value is used (``sum(p.numel() for p in model.parameters())``): word -> (record,
# most positional arguments)
ASKED = {b"parameters": ("torch.nn.Module.parameters", 1), b"named_parameters": ("torch.nn.Module.named_parameters", 2),
         b"named_modules": ("torch.nn.Module.named_modules", 0), b"modules": ("torch.nn.Module.modules", 0),
         b"children": ("torch.nn.Module.children", 0)}

MODEL_RECORD: dict[str, Any] = {
    "torch": "torch.nn.Module.eval", "kind": "method", "namespace": "torch.nn", "source": "curated",
    "targets": [], "caveats": [], "torch_signature": "()",
    "advice": "A receiver used as a model gets the Cell's methods: set_train, get_parameters, cells_and_names.",
}
MODEL_TITLE = "Use the Cell's method"


def mode_sites(root: Any, source: bytes, catalog: Catalog, skip_names: set[str],
               taken: Iterable[tuple[int, int]], torch_classes: Collection[str] = (), start: int = 0,
               end: int | None = None) -> list[Site]:
    """``X.train()`` / ``X.train(mode)`` / ``X.eval()`` statements, and ``X.parameters()`` and the other module-only
    questions (``ASKED``), on a name or ``self`` attribute ``X`` used as a model (``_used_as_model``)."""
    taken = set(taken)
    sites: list[Site] = []
    words = {w: (name, 1 if w == b"train" else 0, True) for w, name in MODE_METHODS.items()}
    words.update({w: (name, most, False) for w, (name, most) in ASKED.items()})
    end = len(source) if end is None else end
    for word, (torch_name, most, statement) in words.items():
        at = source.find(b"." + word + b"(", start, end)
        while at >= 0:
            site = _mode_site(root, source, at + 1, word, (torch_name, most, statement), catalog, skip_names, taken,
                              torch_classes)
            if site is not None:
                sites.append(site)
            at = source.find(b"." + word + b"(", at + 1, end)
    return sites


def _mode_site(root: Any, source: bytes, at: int, word: bytes, how: tuple[str, int, bool], catalog: Catalog,
               skip_names: set[str], taken: set[tuple[int, int]], torch_classes: Collection[str]) -> Site | None:
    torch_name, most, statement = how
    ident = root.named_descendant_for_byte_range(at, at + len(word))
    if ident is None or ident.type != "identifier" or ident.start_byte != at or ident.text != word:
        return None
    attribute = ident.parent
    if attribute is None or attribute.type != "attribute" or (attribute.start_byte, attribute.end_byte) in taken:
        return None
    call = attribute.parent
    if call is None or call.type != "call" or call.parent is None \
            or statement and call.parent.type != "expression_statement":
        return None
    arguments = call.child_by_field_name("arguments")
    if arguments is None or len(arguments.named_children) > most:
        return None
    if not statement and call.parent.type in ("argument_list", "keyword_argument"):
        return None  # handed to an optimizer: trainable_params() (rules/optimizer_parameters.py), or left
    receiver = _module_itself(attribute.child_by_field_name("object"))
    if receiver is None or receiver.text in (b"self", b"cls") or not _plain_path(receiver) \
            or receiver.text.decode("utf-8", "replace").partition(".")[0] in skip_names - {"self"}:
        return None
    # ``self.model``: the uses in its whole class; ``model`` or another object's ``holder.model``: in its function
    scope = enclosing(call, "class_definition" if receiver.text.startswith(b"self.") else "function_definition")
    if scope is None or not _used_as_model(scope, receiver.text) \
            or _holds_plain(scope, receiver.text, source, torch_classes):
        return None
    record = catalog.lookup(torch_name)
    if record is None:
        return None
    return Site(torch_name, record, "call", attribute, member=ident, call=call)


MODULE_ONLY = {b"parameters", b"named_parameters", b"state_dict", b"load_state_dict", b"named_modules",
               b"modules", b"children", b"named_children"}


RETURNS_ITSELF = {b"to", b"cpu", b"cuda", b"float", b"double", b"half", b"bfloat16", b"train", b"eval"}


def _module_itself(node: Any | None) -> Any | None:
    """``model`` of ``model.to(device)`` (``model.cpu().float()``): nn.Module's methods that return the module."""
    while node is not None and node.type == "call":
        function = node.child_by_field_name("function")
        if function is None or function.type != "attribute" \
                or function.child_by_field_name("attribute").text not in RETURNS_ITSELF:
            break
        node = function.child_by_field_name("object")
    return node


def _plain_path(node: Any) -> bool:
    """``model`` or ``self.model`` (``self.a.b``): names and attributes only."""
    while node.type == "attribute":
        node = node.child_by_field_name("object")
    return node.type == "identifier"


def _holds_plain(scope: Any, path: bytes, source: bytes, torch_classes: Collection[str]) -> bool:
    """``self.plain = Plain()`` in the class, ``Plain`` a class known not to be a torch module: one defined in
    this file on no base (or ``object``), or one imported from the package that ``torch_classes`` (the sibling
    classes whose lineage reaches torch, siblingclasses.py) does not hold."""
    if not path.startswith(b"self."):
        return False
    for found in re.finditer(re.escape(path) + rb"[ \t]*=[ \t]*([A-Za-z_]\w*)\(", scope.text):
        name = found.group(1)
        if re.search(rb"(?m)^class[ \t]+" + name + rb"[ \t]*(?:\([ \t]*(?:object)?[ \t]*\))?[ \t]*:", source):
            return True
        if name.decode() not in torch_classes and re.search(
                rb"(?m)^from[ \t]+\.[\w.]*[ \t]+import[^\n]*\b" + name + rb"\b", source):
            return True
    return False


def _used_as_model(scope: Any, path: bytes) -> bool:
    """``path(...)`` or ``path.parameters()`` (a module-only method) in ``scope``'s own body (a class's
    methods count; not a nested function of a function)."""
    stack = list(scope.child_by_field_name("body").named_children)
    while stack:
        node = stack.pop()
        if node.type in ("function_definition", "lambda") and scope.type == "function_definition" \
                or node.type == "class_definition":
            continue
        if node.type == "call":
            callee = node.child_by_field_name("function")
            if callee is not None and callee.text == path and _plain_path(callee):
                return True
            if callee is not None and callee.type == "attribute" and callee.child_by_field_name("object").text == path \
                    and callee.child_by_field_name("attribute").text in MODULE_ONLY:
                return True
        stack.extend(node.named_children)
    return False
