"""Questions about accelerators asked of a CPU target (``--device CPU``, the default): ``torch.cuda.is_available()``,
``torch.cuda.device_count()``, ``torch.backends.mps.is_available()`` ... have one answer there, the one torch
gives on a machine without the accelerator (``False``, ``0``), so the call becomes that constant, and the branch
the constant rules out drops (kb/analysis/branches.py): ``if not torch.cuda.is_available(): return`` ends the
function for good, so what follows it (``torch.cuda.get_device_properties(...)``, a flash-attention capability
check) goes, with its markers; ``"cuda" if torch.cuda.is_available() else "cpu"`` becomes ``"cpu"``.

On GPU or Ascend the answer depends on the machine: the queries keep their knowledge-base mappings
(``mindspore.device_context.gpu.is_available()``, which MindSpore answers at run time), and a query about a device
that only raises without one (``get_device_properties``) keeps its marker wherever it can run.
"""
from __future__ import annotations

from collections.abc import Iterable

from kb.analysis.branches import decide, test_of
from kb.analysis.rules import Context, Finding, Rule, register
from kb.analysis.settingstatements import node_of
from kb.analysis.text import TextEdit

# what torch answers on a machine without the accelerator (tests/analysis/test_b6_device_queries.py asks torch)
ANSWERS: dict[str, object] = {
    "torch.cuda.is_available": False,
    "torch.cuda.device_count": 0,
    "torch.cuda.is_initialized": False,
    "torch.cuda.is_bf16_supported": False,
    "torch.backends.cuda.is_built": False,
    "torch.backends.mps.is_available": False,
    "torch.backends.mps.is_built": False,
    "torch.mps.is_available": False,
    "torch.mps.device_count": 0,
    "torch.xpu.is_available": False,
    "torch.xpu.device_count": 0,
}
DEVICES = ("CPU",)  # the targets whose answers are certain
TITLE = "Answer the device query for a CPU target and drop the branch that cannot run"


@register
class DeviceQueries(Rule):
    name = "device-query"
    scope = "function"
    record = {"torch": "torch.cuda.is_available"}
    title = TITLE
    order = 40
    triggers = (b"cuda", b"mps", b"xpu")
    example = """\
import torch
def config(flash):
    if not torch.cuda.is_available() or not flash:
        return None
    props = torch.cuda.get_device_properties(torch.device("cuda"))
    return props.major
DEVICE = "cuda" if torch.cuda.device_count() > 0 else "cpu"
"""

    def find(self, context: Context) -> Iterable[Finding]:
        if context.settings.device not in DEVICES:
            return
        queries = [u for u in context.uses_called(ANSWERS) if u.kind == "call" and u.call_span]
        if not queries:
            return
        known, tests = {}, {}
        for use in queries:
            call = node_of(context.root, use)
            if call is None or call.type != "call":
                continue
            known[(call.start_byte, call.end_byte)] = ANSWERS[use.torch_name]
            tests[use.start] = (use, call, test_of(call))
        others = [u for u in context.uses_named(("",)) if u.rule is None]
        taken: set[tuple[str, int]] = set()
        for use, call, test in tests.values():
            decision = decide(test, known, context.source)
            fold = [] if decision.covers_test else [TextEdit(call.start_byte, call.end_byte,
                                                             repr(ANSWERS[use.torch_name]))]
            for found, edits in [(use, fold + decision.edits)] + [
                    (other, decision.edits) for other in others  # the uses in code that cannot run go with it
                    if any(a <= other.start and other.end <= b for a, b in decision.dead)]:
                if (found.torch_name, found.start) in taken or not edits:
                    continue
                taken.add((found.torch_name, found.start))
                yield Finding((found.start, found.end), list(edits), replaces=found.torch_name, record=found.record,
                              call_span=(min(e.start for e in edits), max(e.end for e in edits)))
