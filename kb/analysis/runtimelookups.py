"""A torch name looked up with a name known only at run time: ``getattr(nn, cfg.act)()``.

Where the names a lookup can produce cannot be listed from the code (namelookups.py lists them when it
can), the lookup becomes a call of a function written once into the converted file, holding a table of
the names whose conversion is proven::

    def ms_torch_nn(name):
        \"\"\"torch.nn.<name> for a name known only at run time (written by msmap convert) ...\"\"\"
        found = {"BatchNorm2d": nn.BatchNorm2d, "GELU": nn.GELU, "ReLU": nn.ReLU, ...}.get(name)
        if found is None:
            raise NotImplementedError(f"torch.nn.{name} ...")
        return found

The table is written with torch's references, each of which the engine then converts as any other
reference (a rename, or a torch-signature adapter taking torch's parameters). It holds, of a bounded
list of commonly looked-up names (``CANDIDATES``: activations, normalisations, dropout, pooling,
convolutions and linear layers for ``torch.nn``; activations for ``torch.nn.functional``; dtypes and
activations for ``torch``), those the knowledge base converts automatically
with a passing rewrite probe (or, for names that are not calls, such as dtypes, none to run) for the
configured family and device, and whose reference converts; and, beside them, every function of the module
(``below``: the knowledge base's names under it, read at convert time) whose conversion is automatic, proven
and a plain rename for the call ``f(x)`` (one tensor, the other parameters at their defaults: ``F.relu``,
``F.gelu``, ``torch.tanh``; ``renamed``). Any other name raises ``NotImplementedError`` naming it and the
reason when the code runs; a name torch lacks raises too.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kb.analysis.adapters import insertion
from kb.probes.values import not_call_probed

ACTIVATIONS = ("ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Hardswish",
               "Hardsigmoid", "Softplus", "Softmax", "Identity")
NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm2d")
LAYERS = ("Dropout", "Dropout2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Conv1d", "Conv2d", "Linear")
FUNCTIONS = ("relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "sigmoid", "tanh", "hardswish",
             "hardsigmoid", "softplus", "softmax", "log_softmax")
DTYPES = ("float32", "float", "float16", "half", "bfloat16", "float64", "double", "int64", "long", "int32", "int",
          "int16", "int8", "uint8", "bool")
TENSOR_FUNCTIONS = ("relu", "sigmoid", "tanh")
CANDIDATES: dict[str, tuple[str, ...]] = {
    "torch.nn": ACTIVATIONS + NORMS + LAYERS,
    "torch.nn.functional": FUNCTIONS,
    "torch": DTYPES + TENSOR_FUNCTIONS,
}


def helper_name(module: str) -> str:
    """``torch.nn.functional`` -> ``ms_torch_nn_functional``."""
    return "ms_" + module.replace(".", "_")


def table_names(module: str, converts: Callable[[str], bool], below: Callable[[str], list[str]] | None = None,
                renamed: Callable[[str], bool] | None = None) -> list[str]:
    """The names of ``module`` the lookup's table holds (``converts``, ``below`` and ``renamed`` as for
    ``lookup_edits``); a feature test by a computed name (featuretests.py) asks the same table."""
    names = [name for name in CANDIDATES.get(module, ()) if converts(f"{module}.{name}")]
    if below is not None and renamed is not None:
        leaves = sorted({full.rsplit(".", 1)[-1] for full in below(module)} - set(names))
        names += [leaf for leaf in leaves if not leaf.startswith("_") and renamed(f"{module}.{leaf}")]
    return names


def lookup_edits(call: Any, module: str, receiver_bound: bool, source: bytes,
                 converts: Callable[[str], bool], below: Callable[[str], list[str]] | None = None,
                 renamed: Callable[[str], bool] | None = None) -> list[Any] | None:
    """The edits turning ``getattr(<module>, name)`` into the table lookup (and the table's definition, once
    per file); None when none of the module's names converts, or the receiver is not bound where the
    definition goes (a module-level import)."""
    names = table_names(module, converts, below, renamed)
    arguments = call.child_by_field_name("arguments")
    parts = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
    if not names or not receiver_bound or len(parts) != 2:
        return None
    from kb.analysis.text import TextEdit

    receiver = parts[0].text.decode("utf-8", "replace")
    name = helper_name(module)
    edits = [TextEdit(call.start_byte, call.end_byte, f"{name}({parts[1].text.decode('utf-8', 'replace')})")]
    added = insertion(call, source, name, definition(module, receiver, names))
    return edits + ([added] if added is not None else [])


def definition(module: str, receiver: str, names: list[str]) -> str:
    """The lookup function's source (its table in torch's references, which the engine converts next)."""
    table = ", ".join(f'"{n}": {receiver}.{n}' for n in names)
    message = (f"{module}.{{name}} is not among the names msmap converts for a lookup by a name known only at "
               f"run time: those whose conversion it proved for any call, and the functions it proved a plain "
               f"rename for f(x)")
    return (f"def {helper_name(module)}(name):\n"
            f'    """{module}.<name> for a name known only at run time (written by msmap convert): the names whose\n'
            f'    conversion msmap proved, converted; any other raises NotImplementedError."""\n'
            f"    found = {{{table}}}.get(name)\n"
            f"    if found is None:\n"
            f"        raise NotImplementedError(f{message!r})\n"
            f"    return found\n")


def proven(target: dict[str, Any]) -> bool:
    """A passing rewrite probe, or a record saying no call can exercise the target (a dtype)."""
    proof = target.get("proof")
    return proof is not None and (proof.get("result") == "proven" or not_call_probed(proof))


def plain_rename(record: dict[str, Any], choice: Any) -> bool:
    """Whether a function converts automatically, with a passing probe, as a plain rename for ``f(x)``: one
    required parameter (the tensor), every other at a default that carries over, none transformed, and no
    template or adapter to write."""
    from kb.analysis.arguments import reference_blocker, transformed_params
    from kb.analysis.rewrite import is_auto

    if record.get("kind") != "function" or choice is None or not choice.api or not is_auto(choice):
        return False
    target = choice.target
    proof = target.get("proof")
    if proof is None or proof.get("result") != "proven" or target.get("template") or target.get("helper"):
        return False
    required = [p for p in _parameters(record.get("torch_signature") or "") if p]
    return len(required) == 1 and reference_blocker(record, target) is None and not transformed_params(target)


def _parameters(signature: str) -> list[str]:
    """The required parameters' names of a torch signature text (``(input, inplace=False)`` -> ``['input']``);
    a ``*args`` makes the list unreadable (two empty names)."""
    import ast

    try:
        tree = ast.parse(f"def f{signature}: pass")
    except SyntaxError:
        return ["", ""]
    args = tree.body[0].args  # type: ignore[attr-defined]
    if args.vararg is not None:
        return ["", ""]
    positional = args.posonlyargs + args.args
    required = positional[:len(positional) - len(args.defaults)]
    keywords = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    return [a.arg for a in required] + [a.arg for a, d in keywords if d is None]


def reference_converts(record: dict[str, Any], choice: Any, alias: str) -> bool:
    """Whether a reference to ``record``'s torch name (a table entry) converts automatically into something a
    later call with any of torch's arguments gets torch's result from, or an error: a plain rename whose
    parameters all carry over, or a torch-signature adapter (adapters.py)."""
    from kb.analysis.adapters import adapter
    from kb.analysis.arguments import Blocked, reference_blocker, transformed_params
    from kb.analysis.rewrite import is_auto, spelled, unverified_consistent

    if choice is None or not choice.api:
        return False
    automatic = is_auto(choice) or (unverified_consistent(choice) and record.get("kind") == "class")
    if not automatic or not (proven(choice.target) or unverified_consistent(choice)):
        return False
    if record.get("kind") not in ("class", "function"):
        return True  # a dtype, a constant: renamed
    if unverified_consistent(choice) or not choice.target.get("params"):
        return True
    if reference_blocker(record, choice.target) is None and not transformed_params(choice.target):
        return True
    try:
        adapter(record, choice.target, alias, spelled(str(choice.api), alias))
    except Blocked:
        return False
    return True
