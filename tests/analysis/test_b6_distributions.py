"""Held-out batch 6, cause 3: ``torch.distributions`` Normal, Categorical, Bernoulli and Independent (elegantrl's
actors, pfrl): helper classes written into the converted file (data/curated/distributions.yaml) that compute torch's
formulas in MindSpore ops. log_prob, entropy, cdf, the moments, probs, logits and mode run next to torch in both
families with torch's values and dtypes; samples come from MindSpore's generator, so only what torch guarantees
of them is compared (shape, dtype, support), never the numbers (the KB caveat says so)."""
from __future__ import annotations

import pytest

from tests.analysis.executed import FAMILIES, assert_converted_and_matching, one_case_per_family

DISTRIBUTIONS = '''import torch
import torch.nn as nn
from torch.distributions.normal import Normal
from torch.distributions import Bernoulli, Categorical


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.ActionDist = torch.distributions.Categorical

    def forward(self, x, a):
        logits = torch.cat([x, x[:, :1] * 2], -1)
        by_probs = self.ActionDist(logits.softmax(-1))
        by_logits = Categorical(logits=logits)
        drawn = by_logits.sample()
        fair = torch.tensor(float(drawn.dtype == torch.int64)) + ((drawn >= 0) & (drawn < 5)).float()
        return (by_probs.log_prob(a), by_probs.entropy(), by_logits.log_prob(a), by_logits.entropy(),
                by_logits.probs, by_logits.logits, by_logits.mode.float(), fair, by_probs.sample((3,)).shape[0])


def run(x, y, a):
    normal = Normal(x, y.abs() + 0.5)
    drawn = normal.rsample((2,))
    unit = Normal(0.0, 1.0)
    coin = Bernoulli(logits=x)
    coin_p = Bernoulli(torch.sigmoid(y))
    flips = coin.sample()
    joint = torch.distributions.Independent(Normal(x, y.abs() + 0.5), 1)
    actor = Actor()
    return (normal.log_prob(y), normal.entropy(), normal.cdf(y), normal.mean, normal.stddev, normal.variance,
            unit.log_prob(x), torch.tensor(list(drawn.shape)), torch.tensor(float(drawn.dtype == torch.float32)),
            coin.log_prob((y > 0).float()), coin.entropy(), coin.probs, coin_p.logits, coin_p.mean,
            ((flips == 0) | (flips == 1)).float(), joint.log_prob(y), joint.entropy(), joint.mean,
            torch.tensor(list(joint.batch_shape) + list(joint.event_shape)), actor(x, a))
'''


@pytest.fixture(scope="module")
def executed(real_kb, tmp_path_factory):
    return one_case_per_family(real_kb, tmp_path_factory, "distributions", source=DISTRIBUTIONS,
                               inputs={"x": [3, 4], "y": [3, 4], "a": {"shape": [3], "dtype": "int64", "range": [0, 4]}})


@pytest.mark.parametrize("family", FAMILIES)
def test_distributions_give_torch_s_values(executed, family):
    case = executed[f"{family}/distributions"]
    assert_converted_and_matching(case, "torch.distributions")
    assert "MsCategorical" in case.converted and "MsIndependent" in case.converted
