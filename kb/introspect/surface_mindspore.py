"""The MindSpore API surface: which namespaces are walked, and MindSpore-only rules.

Names are recorded under the namespace they are enumerated from
(``mindspore.mint.nn.functional.relu``), never under the implementation
module.  Besides the shared rules in ``walk``:

- ``mindspore`` and the ``mindspore.mint`` family read ``__all__`` and
  ``dir()`` together: in 2.10 ``mint.__all__`` lists names that do not resolve
  and omits real ones (``mint.ones``, ``mint.nn.Dropout``).  Names reached only
  through ``dir()`` that look like implementation aliases (``*_ext``, ``*_op``,
  ``*_impl``, ``*_func``) are skipped.
- ``mindspore.Tensor``, ``mindspore.nn.Cell``: public methods (and properties
  as kind ``attribute``) as ``mindspore.Tensor.<name>``;
  ``mindspore.experimental.optim.Optimizer``: the methods it defines itself.
- ``mindspore.ops`` keeps functions, primitive classes (``ops.Conv2D``) and
  primitive instances (``ops.reduce_sum``, kind ``function``).
- ``mindspore.dataset``: the classes in ``__all__`` only.
- The classes ``Tensor``, ``Parameter`` and ``Cell`` are recorded only at
  their home (``mindspore``, ``mindspore.nn``), not at every re-export.
- Namespaces marked optional are skipped (with a note on stderr) in versions
  that lack them.
"""
from __future__ import annotations

import re

from kb.introspect.walk import Namespace, Rules

CLASSES = frozenset({"class"})
MEMBERS = frozenset({"method", "attribute"})
TOP_KINDS = frozenset({"function", "class", "dtype", "attribute"})
IMPL_ALIAS = re.compile(r"(_ext|_op|_impl|_func|_prim)$|^(constexpr|jit_\w+)$")


def _mint(path: str, optional: bool = True) -> Namespace:
    return Namespace(path, path, names="union", skip=IMPL_ALIAS, optional=optional)


MINDSPORE_NAMESPACES = [
    Namespace("mindspore", "mindspore", names="union", kinds=TOP_KINDS, skip=IMPL_ALIAS),
    Namespace("mindspore.ops", "mindspore.ops"),
    Namespace("mindspore.nn", "mindspore.nn"),
    Namespace("mindspore.nn.Cell", "mindspore.nn.Cell", members=True, kinds=MEMBERS),
    Namespace("mindspore.Tensor", "mindspore.Tensor", members=True, kinds=MEMBERS),
    _mint("mindspore.mint", optional=False),
    _mint("mindspore.mint.nn"),
    _mint("mindspore.mint.nn.functional"),
    _mint("mindspore.mint.nn.init"),
    _mint("mindspore.mint.linalg"),
    _mint("mindspore.mint.special"),
    _mint("mindspore.mint.fft"),
    _mint("mindspore.mint.optim"),
    _mint("mindspore.mint.distributed"),
    Namespace("mindspore.experimental.optim", "mindspore.experimental.optim", optional=True),
    Namespace(
        "mindspore.experimental.optim.Optimizer", "mindspore.experimental.optim.Optimizer",
        members=True, own_only=True, kinds=frozenset({"method"}), optional=True,
    ),
    Namespace("mindspore.experimental.optim.lr_scheduler", "mindspore.experimental.optim.lr_scheduler",
              optional=True),
    Namespace("mindspore.communication", "mindspore.communication", kinds=TOP_KINDS),
    Namespace("mindspore.communication.management", "mindspore.communication.management", kinds=TOP_KINDS),
    Namespace("mindspore.dataset", "mindspore.dataset", kinds=CLASSES),
    Namespace("mindspore.amp", "mindspore.amp"),
    Namespace("mindspore.common.initializer", "mindspore.common.initializer"),
    Namespace("mindspore.hal", "mindspore.hal", optional=True),
    Namespace("mindspore.runtime", "mindspore.runtime", optional=True),
    Namespace("mindspore.device_context.cpu", "mindspore.device_context.cpu", optional=True),
    Namespace("mindspore.device_context.gpu", "mindspore.device_context.gpu", optional=True),
    Namespace("mindspore.device_context.ascend", "mindspore.device_context.ascend", optional=True),
    Namespace("mindspore.train", "mindspore.train"),
]

def rules() -> Rules:
    import mindspore
    from mindspore.common import dtype as mstype

    core = {id(mindspore.Tensor): "mindspore", id(mindspore.Parameter): "mindspore",
            id(mindspore.nn.Cell): "mindspore.nn"}

    def keep(ns: Namespace, name: str, obj, listed: bool) -> bool:
        home = core.get(id(obj))
        return home is None or home == ns.path

    return Rules(
        root="mindspore",
        is_dtype=lambda obj: isinstance(obj, mstype.Type),
        keep=keep,
        constant_types=(int, float, str),
    )


def version() -> str:
    import mindspore

    return mindspore.__version__
