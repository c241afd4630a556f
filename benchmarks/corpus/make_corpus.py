"""Rebuild the torchvision and timm cases of the conversion corpus from the installed packages.

    python benchmarks/corpus/make_corpus.py

Each case is a folder beside this file: the package's source file(s) and a ``case.json`` naming
the source (package, version, path, licence), every adaptation made, how to build the model and
the inputs.  Adaptations are line deletions or import-line rewrites only, each one recorded; the
model code itself is kept exactly as the package ships it.  For torchvision, adapting means:
drop the pretrained-weights enums, the builder functions that take ``weights`` (the case builds
the model class directly), ``__all__``, the metadata dicts and the ``_log_api_usage_once``
telemetry calls, and point ``..ops.misc`` / ``..ops.stochastic_depth`` / ``._utils`` imports at
sibling copies.  The PyPI cases (nano_gpt, unet, pytorch_ner) were unpacked by hand; their
``case.json`` records the same facts.
"""
from __future__ import annotations

import ast
import importlib.metadata
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

DROP_IMPORTS = {"._meta", "._api", "..transforms._presets", "..utils", "torchvision.utils",
                "torchvision.models._meta", "torchvision.models._api",
                "torchvision.transforms._presets"}
SIBLING = {"..ops.misc": ".misc", "torchvision.ops.misc": ".misc",
           "..ops.stochastic_depth": ".stochastic_depth",
           "torchvision.ops.stochastic_depth": ".stochastic_depth", "torchvision.ops": ".stochastic_depth"}
KEEP_FROM_UTILS = {"_make_divisible"}
TELEMETRY = "_log_api_usage_once"

TORCHVISION = [
    # name, file, build code (assigns model), inputs
    ("tv_resnet18", "resnet.py", "model = ResNet(BasicBlock, [2, 2, 2, 2], num_classes=10)", ["2,3,32,32"]),
    ("tv_resnet_bottleneck", "resnet.py",
     "model = ResNet(Bottleneck, [1, 1, 1, 1], num_classes=10, groups=2, width_per_group=32)", ["2,3,32,32"]),
    ("tv_alexnet", "alexnet.py", "model = AlexNet(num_classes=10)", ["2,3,64,64"]),
    ("tv_vgg11_bn", "vgg.py", "model = VGG(make_layers(cfgs['A'], batch_norm=True), num_classes=10)",
     ["2,3,32,32"]),
    ("tv_squeezenet", "squeezenet.py", "model = SqueezeNet(version='1_1', num_classes=10)", ["2,3,64,64"]),
    ("tv_densenet", "densenet.py",
     "model = DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, num_classes=10)",
     ["2,3,32,32"]),
    ("tv_mobilenet_v2", "mobilenetv2.py", "model = MobileNetV2(num_classes=10, width_mult=0.25)", ["2,3,32,32"]),
    ("tv_mobilenet_v3", "mobilenetv3.py",
     "setting, last = _mobilenet_v3_conf('mobilenet_v3_small', width_mult=0.5)\n"
     "model = MobileNetV3(setting, last, num_classes=10)", ["2,3,32,32"]),
    ("tv_shufflenet_v2", "shufflenetv2.py",
     "model = ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 64], num_classes=10)", ["2,3,32,32"]),
    ("tv_mnasnet", "mnasnet.py", "model = MNASNet(0.5, num_classes=10)", ["2,3,32,32"]),
    ("tv_googlenet", "googlenet.py", "model = GoogLeNet(num_classes=10, aux_logits=False, init_weights=True)",
     ["2,3,32,32"]),
    ("tv_efficientnet", "efficientnet.py",
     "setting, last = _efficientnet_conf('efficientnet_b0', width_mult=0.25, depth_mult=0.25)\n"
     "model = EfficientNet(setting, 0.2, num_classes=10, last_channel=last)", ["2,3,32,32"]),
    ("tv_convnext", "convnext.py",
     "model = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)], "
     "num_classes=10)", ["2,3,32,32"]),
    ("tv_vit", "vision_transformer.py",
     "model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, "
     "mlp_dim=64, num_classes=10)", ["2,3,32,32"]),
    ("tv_regnet", "regnet.py",
     "model = RegNet(BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8), "
     "num_classes=10)", ["2,3,32,32"]),
    ("tv_swin", "swin_transformer.py",
     "model = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], "
     "window_size=[2, 2], num_classes=10)", ["2,3,32,32"]),
]

TIMM = [
    # name, module, files (layers/), build, inputs
    ("timm_mlp", "mlp", ["mlp.py", "grn.py", "helpers.py"], "model = Mlp(16, 32, 10)", ["2,8,16"]),
    ("timm_glumlp", "mlp", ["mlp.py", "grn.py", "helpers.py"], "model = GluMlp(16, 32, 10)", ["2,8,16"]),
    ("timm_grn_mlp", "mlp", ["mlp.py", "grn.py", "helpers.py"],
     "model = GlobalResponseNormMlp(16, 32, 10)", ["2,8,8,16"]),
    ("timm_patch_embed", "patch_embed", ["patch_embed.py", "format.py", "helpers.py", "trace_utils.py"],
     "model = PatchEmbed(img_size=32, patch_size=8, in_chans=3, embed_dim=32)", ["2,3,32,32"]),
    ("timm_squeeze_excite", "squeeze_excite",
     ["squeeze_excite.py", "create_act.py", "activations.py", "activations_me.py", "config.py", "typing.py",
      "helpers.py"],
     "model = SEModule(16, rd_ratio=0.25)", ["2,16,8,8"]),
]


def site_dir(package: str) -> Path:
    return Path(importlib.metadata.distribution(package).locate_file(package))


def _dotted(node: ast.ImportFrom) -> str:
    return "." * node.level + (node.module or "")


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _span(node: ast.AST) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno


def adapt(text: str, rel: str) -> tuple[str, list[str]]:
    """Apply the torchvision adaptations to one file; return the new text and what was done."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop: dict[int, int] = {}  # first line -> last line
    notes: list[str] = []
    removed: set[str] = set()

    def remove(node: ast.AST, why: str) -> None:
        first, last = _span(node)
        drop[first] = last
        notes.append(f"{rel}: removed lines {first}-{last} ({why})")

    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            mod = _dotted(node)
            if mod in DROP_IMPORTS:
                removed |= {a.asname or a.name for a in node.names}
                remove(node, f"import from torchvision internals {mod}")
            elif mod in ("._utils", "torchvision.models._utils"):
                kept = [a.name for a in node.names if a.name in KEEP_FROM_UTILS]
                removed |= {a.name for a in node.names if a.name not in KEEP_FROM_UTILS}
                first, last = _span(node)
                new = f"from ._helpers import {', '.join(kept)}\n" if kept else ""
                lines[first - 1] = new
                for i in range(first, last):
                    lines[i] = ""
                notes.append(f"{rel}: line {first} `from {mod} import ...` -> `{new.strip() or '(removed)'}`"
                             " (only the helpers the model code uses, copied verbatim into _helpers.py)")
            elif mod in SIBLING:
                first, _ = _span(node)
                old = lines[first - 1]
                lines[first - 1] = old.replace(f"from {mod} import", f"from {SIBLING[mod]} import", 1)
                notes.append(f"{rel}: line {first} `from {mod}` -> `from {SIBLING[mod]}` (sibling copy)")
        elif isinstance(node, ast.ClassDef) and any(_names(b) & {"WeightsEnum"} for b in node.bases):
            removed.add(node.name)
            remove(node, f"pretrained-weights enum {node.name}")
        elif isinstance(node, ast.FunctionDef) and "weights" in [a.arg for a in node.args.args +
                                                                   node.args.kwonlyargs]:
            removed.add(node.name)
            remove(node, f"builder {node.name}() taking pretrained weights")
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                  for t in node.targets):
            remove(node, "__all__ naming removed builders")
    changed = True
    while changed:  # metadata assignments that use removed names
        changed = False
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                    and node.lineno not in drop and _names(node.value) & removed:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                removed |= _names(ast.Module(body=[ast.Expr(t) for t in targets], type_ignores=[]))
                remove(node, "metadata built from removed names")
                changed = True
    for parent in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(parent, field, None)
            if not isinstance(block, list):
                continue
            for stmt in block:
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == TELEMETRY:
                    if len(block) == 1 and isinstance(parent, ast.If) and not parent.orelse:
                        remove(parent, "telemetry call and the `if` that only guards it")
                    else:
                        remove(stmt, "telemetry call")
    for first, last in drop.items():
        for i in range(first - 1, last):
            lines[i] = ""
    out = "".join(lines)
    ast.parse(out)
    return out, notes


def segment(path: Path, name: str) -> str:
    text = path.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(text, node)


def write_case(name: str, meta: dict) -> None:
    folder = HERE / name
    (folder / "case.json").write_text(json.dumps(meta, indent=2) + "\n")


def torchvision_cases() -> None:
    tv = site_dir("torchvision")
    version = importlib.metadata.version("torchvision")
    helpers = ("# Verbatim copies of two torchvision helpers the models use (see case.json).\n"
               "import collections.abc\nfrom itertools import repeat\nfrom typing import Any, Optional\n\n\n"
               f"{segment(tv / 'models/_utils.py', '_make_divisible')}\n\n\n"
               f"{segment(tv / 'utils.py', '_make_ntuple')}\n")
    for name, fname, build, inputs in TORCHVISION:
        folder = HERE / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        text, notes = adapt((tv / "models" / fname).read_text(), fname)
        (folder / fname).write_text(text)
        paths = [f"torchvision/models/{fname}"]
        extra = []
        if ".misc import" in text or ".stochastic_depth import" in text or "._helpers import" in text:
            (folder / "_helpers.py").write_text(helpers)
            extra.append("_helpers.py: new file holding verbatim copies of torchvision/models/_utils.py "
                         "_make_divisible and torchvision/utils.py _make_ntuple")
        for sib in ("misc", "stochastic_depth"):
            if f".{sib} import" in text:
                stext, snotes = adapt((tv / "ops" / f"{sib}.py").read_text(), f"{sib}.py")
                stext = stext.replace("from ..utils import _log_api_usage_once, _make_ntuple",
                                      "from ._helpers import _make_ntuple")
                if "from ._helpers import _make_ntuple" in stext:
                    snotes.append(f"{sib}.py: `from ..utils import _log_api_usage_once, _make_ntuple` -> "
                                  "`from ._helpers import _make_ntuple`")
                (folder / f"{sib}.py").write_text(stext)
                paths.append(f"torchvision/ops/{sib}.py")
                notes += snotes
        write_case(name, {
            "name": name,
            "source": {"package": "torchvision", "version": version, "paths": paths,
                       "licence": "BSD-3-Clause"},
            "adaptations": notes + extra,
            "module": fname[:-3],
            "build": build,
            "inputs": inputs,
        })


def timm_cases() -> None:
    layers = site_dir("timm") / "layers"
    version = importlib.metadata.version("timm")
    for name, module, files, build, inputs in TIMM:
        folder = HERE / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for f in files:
            shutil.copyfile(layers / f, folder / f)
        write_case(name, {
            "name": name,
            "source": {"package": "timm", "version": version, "paths": [f"timm/layers/{f}" for f in files],
                       "licence": "Apache-2.0"},
            "adaptations": ["none: the files are copied verbatim; only the sibling modules the first one "
                            "imports (relative imports) are included"],
            "module": module,
            "build": build,
            "inputs": inputs,
        })


if __name__ == "__main__":
    torchvision_cases()
    timm_cases()
    print(f"wrote {len(TORCHVISION) + len(TIMM)} cases under {HERE}", file=sys.stderr)
