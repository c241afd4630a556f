"""Each caveat is shown only on the APIs it is about.

A caveat reaches an API's hover, card and docs through a link (the caveat's ``applies_to`` or the
mapping's ``caveats``). A wrong link shows a true statement in the wrong place: the nn.Dropout hover
listed "Activation layers drop inplace", a caveat about ReLU-like layers. A caveat is about a torch
API when its text or claims name the API (``Dropout``, ``Conv2d`` as ``Conv``) or one of its MindSpore counterparts (``Dense``), a
claim tests one of the counterparts, or its text names the family of layers the API belongs to in torch
(``torch.nn.modules.activation``: "Activation layers"; ``torch.nn.modules.pooling``: "pooling").
"""
from __future__ import annotations

import importlib
import re
from typing import Any

# Links whose caveat is about the API without naming it, each checked by hand.
REVIEWED = {
    ("autograd-no-grad-not-needed", "torch.set_grad_enabled"): "one of the grad-mode switches the caveat removes",
    ("autograd-no-retain-graph", "torch.Tensor.backward"): "retain_graph/create_graph are backward()'s arguments",
    ("ckpt-torch-weight-names", "torch.nn.Module.load_state_dict"): "loads the renamed weights",
    ("ckpt-torch-weight-names", "torch.nn.Module.state_dict"): "holds the names that are renamed",
    ("max-with-dim-returns-tuple", "torch.min"): "min with a dimension returns (values, indices) the same way",
    ("same-padding-odd-side", "torch.nn.AvgPool2d"): "pooling with pad_mode='same' pads the same way",
    ("random-tensor-creation", "torch.randint"): "a random tensor creator, as the caveat's randn",
    ("random-tensor-creation", "torch.randn_like"): "a random tensor creator, as the caveat's randn",
    ("training-set-train", "torch.Tensor.backward"): "loss.backward() marks the training step",
    ("autograd-grad-position-weights", "torch.Tensor.backward"): "what backward() differentiates is chosen there",
    ("axis-vs-dim-keyword", "torch.concat"): "concat's dim is one of the renamed keywords",
    ("ckpt-torch-weight-names", "torch.nn.modules.module._IncompatibleKeys"): "load_state_dict's report of names",
    ("dist-launch-and-init", "torch.nn.DataParallel"): "processes come from the launcher instead",
    ("modes-graph-limits", "torch.jit.ignore"): "code jit cannot compile, the caveat's subject",
    ("pool-stride-default-one", "torch.nn.functional.avg_pool1d"): "ops.avg_pool1d's stride defaults to 1 as the layer's",
    ("pool-stride-default-one", "torch.nn.functional.avg_pool2d"): "ops.avg_pool2d's stride defaults to 1 as the layer's",
    ("axis-vs-dim-keyword", "torch.min"): "min's dim is one of the renamed keywords",
    ("autograd-grad-position-weights", "torch.func.grad_and_value"): "its counterpart is value_and_grad, the caveat's subject",
}
# fused quantized convolutions (torch.ao.nn.intrinsic) map to the float Conv2d: its 'same' padding caveat holds
REVIEWED.update({("same-padding-odd-side", f"torch.ao.nn.intrinsic.{path}{name}"): "a convolution, ported as Conv2d"
                 for path in ("", "modules.", "modules.fused.", "quantized.", "quantized.modules.",
                              "quantized.modules.conv_add.") for name in ("ConvAdd2d", "ConvAddReLU2d")})
REVIEWED[("ckpt-torch-weight-names", "torch.distributed.checkpoint.state_dict.set_state_dict")] = \
    "loads a state dict into the model, by torch's names"
# GradScaler's own methods are the loss-scaling steps the caveat spells out (scale, unscale, adjust, its state)
REVIEWED.update({("amp-loss-scaler", api): "a step of the loss scaling the caveat describes" for api in (
    *(f"torch.amp.GradScaler.{name}" for name in ("get_scale", "is_enabled", "load_state_dict", "state_dict", "step",
                                                  "update")), "torch.amp.grad_scaler.GradScaler.step")})
REVIEWED[("pool-stride-default-one", "torch.nn.functional.avg_pool3d")] = "ops.avg_pool3d's stride defaults to 1 as the layer's"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]+", text.lower()))


def _names(api: str) -> set[str]:
    """``Conv2d`` -> {conv2d, conv}; ``normal_`` -> {normal}."""
    last = api.rsplit(".", 1)[-1].lower().rstrip("_")
    stem = re.fullmatch(r"(.+?)[123]d", last)
    return {last, stem[1]} if stem else {last}


def _torch_family(api: str) -> list[str]:
    """Parts of the torch module ``api`` is defined in, such as ``activation`` or ``optim``."""
    parts = api.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return []
        module = getattr(obj, "__module__", None) or ""
        return [p for p in module.split(".")[1:] if p not in ("nn", "modules") and len(p) >= 4]
    return []


def concerns(caveat: dict, api: str, targets: set[str]) -> bool:
    words = _words(caveat["title"] + " " + caveat["body"])
    claimed = {c["api"] for c in caveat.get("claims") or [] if c.get("api")}
    names = _names(api)
    if names & words or names & {c.rsplit(".", 1)[-1].lower() for c in claimed}:
        return True
    if targets & claimed or {t.rsplit(".", 1)[-1].lower() for t in targets} & words:
        return True
    if any(w.startswith(n) for n in names if len(n) >= 4 for w in words):
        return True
    return any(w.startswith(family) for family in _torch_family(api) for w in words)


PARAMETER_CLAIMS = frozenset({"has_param", "lacks_param", "default"})


def unconcerned_links(kb) -> set[tuple[str, str]]:
    """(caveat, torch API) links to an API the caveat is not about: every link a caveat's own
    ``applies_to`` makes, and the links mappings make to caveats whose claims are about particular
    APIs' parameters (a namespace-wide recipe, linked to every API of its namespace, is not)."""
    found = set()
    for api in sorted(kb.torch_names):
        record = kb.mapping(api)
        if not record or not record["caveats"] or not api.startswith("torch."):
            continue
        targets = {t["api"] for t in record["targets"] if t.get("api")}
        for caveat in record["caveats"]:
            specific = api in caveat["applies_to"] or PARAMETER_CLAIMS & {c.get("kind") for c in caveat["claims"] or []}
            if specific and not concerns(caveat, api, targets):
                found.add((caveat["id"], api))
    return found


def test_the_rule_catches_the_dropout_link(real_kb):
    """The link this test was written for, checked against the real caveat."""
    caveat = real_kb.caveat("relu-no-inplace")
    dropout = {t["api"] for t in real_kb.mapping("torch.nn.Dropout")["targets"]}
    assert not concerns(caveat, "torch.nn.Dropout", dropout)
    assert concerns(caveat, "torch.nn.ELU", {"mindspore.nn.ELU"})  # an activation layer


def test_every_caveat_is_linked_only_to_apis_it_concerns(real_kb):
    wrong = unconcerned_links(real_kb)
    unreviewed = sorted(wrong - set(REVIEWED))
    assert not unreviewed, "caveats linked to torch APIs they are not about: " + ", ".join(
        f"{cid} -> {api}" for cid, api in unreviewed)
    assert not set(REVIEWED) - wrong, f"REVIEWED entries no longer needed: {sorted(set(REVIEWED) - wrong)}"
