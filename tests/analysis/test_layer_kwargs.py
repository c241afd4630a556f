"""A layer subclass whose ``__init__`` passes ``**kwargs`` on to its torch base (kb/analysis/layersubclass.py):
the keyword arguments reach the MindSpore base through a function written into the file that maps torch's
parameters at run time (``bias=False`` -> ``has_bias=False``, ``groups`` -> ``group``), so a caller's torch
keywords work, and ``has_bias`` is not given twice."""
from __future__ import annotations

import torch

from tests.analysis.executed import run_without_torch
from tests.analysis.roundtrip import converted

SOURCE = '''\
import torch.nn as nn


class StdConv2d(nn.Conv2d):
    def __init__(self, in_ch, out_ch, kernel_size, stride=1, padding=0, eps=1e-6, **kwargs):
        super().__init__(in_ch, out_ch, kernel_size, stride=stride, padding=padding, **kwargs)
        self.eps = eps
'''


def test_torch_keywords_through_kwargs_reach_the_mindspore_base(classic, tmp_path):
    text = converted(classic, SOURCE)
    assert "super().__init__(**ms_Conv2d_args(in_ch, out_ch, kernel_size, stride=stride, padding=padding, **kwargs))" \
        in text
    assert "has_bias=True" not in text
    done = run_without_torch(tmp_path, text, """
        import converted
        m = converted.StdConv2d(4, 8, 3, padding=1, bias=False, groups=2)
        print(m.has_bias, m.group, tuple(m.weight.shape))
        try:
            converted.StdConv2d(4, 8, 3, padding_mode='reflect')
        except NotImplementedError as exc:
            print('refused:', 'padding_mode' in str(exc))
    """)
    assert done.returncode == 0, done.stderr
    expected = torch.nn.Conv2d(4, 8, 3, padding=1, bias=False, groups=2)
    assert done.stdout.split("\n")[:2] == [f"False 2 {tuple(expected.weight.shape)}", "refused: True"]


def test_a_super_call_without_unpacking_keeps_the_plain_map(classic):
    source = SOURCE.replace(", **kwargs)", ")").replace("eps=1e-6, **kwargs", "eps=1e-6")
    text = converted(classic, source)
    assert "ms_Conv2d_args" not in text
    # (a list kernel_size or stride is handed to MindSpore as a tuple: tupleparams.py)
    assert "super().__init__(in_ch, out_ch, tuple(kernel_size) if isinstance(kernel_size, list) else kernel_size, " \
        "stride=tuple(stride) if isinstance(stride, list) else stride, padding=" in text
