"""The torch API surface: which namespaces are walked, and torch-only rules.

Every API gets a ``namespace`` bucket: the row's ``bucket`` below.  Besides the
shared rules in ``walk``:

- ``torch`` itself: names from ``__all__`` and ``dir()`` (``__all__`` misses
  ``unique``, ``set_default_dtype`` ...).  Kept: functions, classes, dtypes
  (kind ``dtype``) and layout / memory-format / qscheme / float constants
  (kind ``attribute``).  Skipped: TorchScript IR classes (pybind11 types such
  as ``torch.Graph``), legacy typed storages (``torch.FloatStorage``), flags.
- ``torch.Tensor``, ``torch.nn.Module`` and ``torch.optim.Optimizer``: public
  methods, recorded as ``torch.Tensor.add`` etc.; Tensor also keeps its
  properties (``shape``, ``T``) as kind ``attribute``.
- ``torch.nn`` keeps classes only; ``torch.nn.functional`` / ``torch.nn.init``
  functions only.  ``torch.nn.utils.rnn`` / ``clip_grad`` and
  ``torch.autograd.functional`` share their parent's bucket; an object already
  listed under the parent is not listed again.
- Re-exports that belong elsewhere are dropped: ``torch.Tensor`` outside
  ``torch``, the ``__torch_function__`` helpers, and the C++ ``*Options``
  structs of ``torch.distributed``.
"""
from __future__ import annotations

import inspect
import re

from kb.introspect.walk import Namespace, Rules

FUNCTIONS = frozenset({"function"})
CLASSES = frozenset({"class"})
MEMBERS = frozenset({"method", "attribute"})
TOP_KINDS = frozenset({"function", "class", "dtype", "attribute"})

TORCH_NAMESPACES = [
    Namespace("torch", "torch", names="union", kinds=TOP_KINDS, skip=re.compile(r"^StorageBase$")),
    Namespace("torch.Tensor", "torch.Tensor", members=True, kinds=MEMBERS),
    Namespace("torch.nn", "torch.nn", kinds=CLASSES),
    Namespace("torch.nn.functional", "torch.nn.functional", kinds=FUNCTIONS),
    Namespace("torch.nn.init", "torch.nn.init", kinds=FUNCTIONS),
    Namespace("torch.nn.utils", "torch.nn.utils"),
    Namespace("torch.nn.utils", "torch.nn.utils.rnn"),
    Namespace("torch.nn.utils", "torch.nn.utils.clip_grad"),
    Namespace("torch.nn.Module", "torch.nn.Module", members=True, kinds=frozenset({"method"})),
    Namespace("torch.optim", "torch.optim"),
    Namespace("torch.optim", "torch.optim.Optimizer", members=True, kinds=frozenset({"method"})),
    Namespace("torch.optim.lr_scheduler", "torch.optim.lr_scheduler"),
    Namespace("torch.autograd", "torch.autograd"),
    Namespace("torch.autograd", "torch.autograd.functional"),
    Namespace("torch.utils.data", "torch.utils.data"),
    Namespace("torch.distributed", "torch.distributed", skip=re.compile(r"Options$")),
    Namespace("torch.linalg", "torch.linalg"),
    Namespace("torch.fft", "torch.fft", names="union"),
    Namespace("torch.special", "torch.special"),
    Namespace("torch.cuda", "torch.cuda"),
    Namespace("torch.accelerator", "torch.accelerator", optional=True),
    Namespace("torch.amp", "torch.amp"),
]

# __torch_function__ plumbing re-exported by torch.nn.functional and friends
OVERRIDE_HELPERS = re.compile(r"^(has_torch_function\w*|handle_torch_function|boolean_dispatch)$")


def rules() -> Rules:
    import torch

    def keep(ns: Namespace, name: str, obj, listed: bool) -> bool:
        if OVERRIDE_HELPERS.match(name):
            return False
        if obj is torch.Tensor and ns.bucket != "torch":
            return False
        meta = type(obj).__name__ if inspect.isclass(obj) else ""
        if meta == "_LegacyStorageMeta":
            return False
        return not (ns.bucket == "torch" and meta == "pybind11_type")

    return Rules(
        root="torch",
        is_dtype=lambda obj: isinstance(obj, torch.dtype),
        keep=keep,
        constant_types=(float, torch.layout, torch.memory_format, torch.qscheme),
        private_ok=("torch._C", "torch._lowrank"),
    )


def version() -> str:
    import torch

    return torch.__version__.split("+")[0]
