"""Turn the names people type into canonical torch / MindSpore names.

Pure functions over strings: no DB access here.  ``candidates()`` lists the
canonical spellings to try, most likely first; the query layer picks the first
one that exists.
"""
from __future__ import annotations

# Conventional import aliases -> the module they stand for.  Data, not logic.
TORCH_ALIASES: dict[str, str] = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "functional": "torch.nn.functional",
    "init": "torch.nn.init",
    "optim": "torch.optim",
    "lr_scheduler": "torch.optim.lr_scheduler",
    "Tensor": "torch.Tensor",
    "Module": "torch.nn.Module",
    "Optimizer": "torch.optim.Optimizer",
    "autograd": "torch.autograd",
    "dist": "torch.distributed",
    "distributed": "torch.distributed",
    "data": "torch.utils.data",
    "utils": "torch.utils",
    "linalg": "torch.linalg",
    "LA": "torch.linalg",
    "fft": "torch.fft",
    "special": "torch.special",
    "cuda": "torch.cuda",
    "amp": "torch.amp",
    "accelerator": "torch.accelerator",
}

MS_ALIASES: dict[str, str] = {
    "mindspore": "mindspore",
    "ms": "mindspore",
    "mint": "mindspore.mint",
    "ops": "mindspore.ops",
    "msnn": "mindspore.nn",
    "Cell": "mindspore.nn.Cell",
}


def normalize(name: str) -> str:
    """Strip whitespace, call parentheses and a leading/trailing dot: ' nn.Linear(3, 4) ' -> 'nn.Linear'."""
    name = name.strip()
    if "(" in name:
        name = name[: name.index("(")]
    return name.strip().strip(".")


def is_mindspore(name: str) -> bool:
    head = name.split(".", 1)[0]
    return head in ("mindspore", "ms", "mint", "ops")


def candidates(name: str) -> list[str]:
    """Canonical spellings to try for a user-typed API name, most likely first."""
    name = normalize(name)
    if not name:
        return []
    head, _, rest = name.partition(".")
    out: list[str] = []
    if is_mindspore(name):
        base = MS_ALIASES.get(head, head)
        out.append(f"{base}.{rest}" if rest else base)
        return out
    out.append(name)
    if head in TORCH_ALIASES and head != "torch":
        base = TORCH_ALIASES[head]
        out.append(f"{base}.{rest}" if rest else base)
    if not name.startswith("torch"):
        out.append(f"torch.{name}")
        out.append(f"torch.nn.{name}")
        out.append(f"torch.nn.functional.{name}")
    return list(dict.fromkeys(out))


def method_name(name: str) -> str | None:
    """'x.view' / '.view' / 'tensor.view' -> 'view' (for tensor-method lookup); else None."""
    name = normalize(name) if not name.strip().startswith(".") else name.strip()
    if name.startswith("."):
        return name[1:] or None
    head, _, rest = name.partition(".")
    if rest and "." not in rest and head not in TORCH_ALIASES and not is_mindspore(name):
        return rest
    return None
