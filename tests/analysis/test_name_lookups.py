"""getattr(<torch module>, name): a dict of the torch classes the name can be (kb/analysis/namelookups.py),
each fix beside its no-op neighbour, on snippets written for the test (bundled KB)."""
from __future__ import annotations

import pytest

from tests.analysis.test_conversion_rules import classic, converted  # noqa: F401  (classic: the bundled-KB engine fixture)



LOOKUP_HEAD = "import torch.nn as nn\n\n"


def test_getattr_on_torch_nn_with_a_formatted_name_becomes_a_dict_of_the_classes_it_can_be(classic):
    src = LOOKUP_HEAD + ("def make(dim, norm):\n    name = 'Conv{}d'.format(dim)\n    conv = getattr(nn, name)\n"
                         "    if norm:\n        name = f'BatchNorm{dim}d'\n        return getattr(nn, name)(8)\n"
                         "    return conv(3, 8, 3, bias=False)\n")
    out = converted(classic, src)
    assert "getattr(nn" not in out and "import torch" not in out
    conv_dict = next(line for line in out.splitlines() if "conv = " in line)
    assert '"Conv2d": ms_Conv2d' in conv_dict and "BatchNorm" not in conv_dict  # only the reaching assignment
    norm_dict = next(line for line in out.splitlines() if "return {" in line)
    assert '"BatchNorm2d": ms_BatchNorm2d' in norm_dict and "Conv" not in norm_dict
    assert "def ms_Conv2d(in_channels, out_channels, kernel_size" in out  # torch's parameters, mapped


def test_getattr_with_a_literal_name_is_the_class_reference(classic):
    out = converted(classic, LOOKUP_HEAD + "drop = getattr(nn, 'Dropout2d')\n")
    assert "drop = ms_Dropout2d\n" in out and "{" not in out.split("drop = ")[1]


def test_getattr_with_a_defaulted_parameter_lists_the_default_and_the_literals_passed(classic):
    src = LOOKUP_HEAD + ("def block(activation='ReLU'):\n    return getattr(nn, activation)()\n\n"
                         "b = block(activation='ELU')\n")
    out = converted(classic, src)
    assert 'return {"ELU": ms_ELU, "ReLU": ms_ReLU}[activation]()' in out


@pytest.mark.parametrize("src, kept, marked", [
    # names known only at run time go through a table of proven conversions (test_runtime_adapters.py), except
    # where no table is written: a module without one, a receiver imported inside the function
    pytest.param("import torch.optim\n\ndef f(cfg):\n    return getattr(torch.optim, cfg.pop('kind'))\n",
                 "getattr(torch.optim, cfg.pop('kind'))", True, id="computed-name-no-table"),
    pytest.param("def f(name):\n    import torch.nn as nn\n    return getattr(nn, name)\n",
                 "getattr(nn, name)", True, id="parameter-without-default-local-import"),
    pytest.param("import torch.nn as nn\nimport layers\n\ndef f(dim):\n"
                 "    return getattr(layers, 'Conv{}d'.format(dim))\n",
                 "getattr(layers, 'Conv{}d'.format(dim))", False, id="not-a-torch-module"),
])
def test_getattr_lookups_left_as_they_are(classic, src, kept, marked):
    out = converted(classic, src)
    assert kept in out
    assert ("# msmap: getattr on a torch module" in out) == marked
