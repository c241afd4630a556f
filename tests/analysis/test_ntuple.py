"""torch's private _single/_pair/_triple/_quadruple (torch.nn.modules.utils), common in model code, become
ms_ntuple(n), written into the file (data/curated/recipes.yaml): the converted calls give torch's values."""
from __future__ import annotations

import pytest
from torch.nn.modules import utils

from tests.analysis.roundtrip import converted

VALUES = [3, 2.5, (1, 2), [4, 5], range(3), "ab", None]


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
def test_the_converted_helper_gives_torch_s_values(classic, name):
    source = f"from torch.nn.modules.utils import {name}\n\n\ndef parse(v):\n    return {name}(v)\n"
    text = converted(classic, source)
    assert "torch" not in text.replace("torch.nn.modules.utils._ntuple", "").replace("torch's", "")
    scope: dict = {}
    exec(text, scope)
    for value in VALUES:
        try:
            expected = getattr(utils, name)(value)
        except TypeError:
            with pytest.raises(TypeError):
                scope["parse"](value)
            continue
        assert scope["parse"](value) == expected, value


def test_a_helper_of_the_same_name_defined_in_the_file_stays(classic):
    source = "def _pair(x):\n    return (x, x)\n\n\nk = _pair(3)\n"
    assert converted(classic, source) == source
