"""Plan the rewrite of one torch use into text edits.

Every rule is read from the KB record: the target API names the new callee
(spelled through the file's MindSpore alias: ``ms.nn.Dense``), its ``params``
drive the arguments (``arguments.py``), a method reached through an object is
renamed in place (``self.parameters()`` -> ``self.trainable_params()``), and a
class deriving from a torch class gets its base replaced and its overridden
methods renamed in one fix (``forward`` -> ``construct``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kb.analysis.adapters import adapter, adapter_name, insertion
from kb.analysis.annotations import typing_subscript
from kb.analysis.arguments import (
    Blocked,
    Unpacked,
    UnsupportedValue,
    plan_arguments,
    read_arguments,
    reference_blocker,
    transformed_params,
)
from kb.analysis.factorykwargs import call_factory_edits
from kb.analysis.resolver import Site
from kb.analysis.settings import TargetChoice, severity_rank
from kb.analysis.templates import check_statement, conditions, fields, receiver_text, removal, removes, render
from kb.analysis.text import TextEdit
from kb.analysis.transforms import MISSING, literal, parse_signature, same_value
from kb.analysis.tupleparams import widened
from kb.probes.values import DIM_NAMES, combo_key, literal_value, value_class, value_verdict
from kb.proof_gaps import reason_class

AUTO_RELATIONS = frozenset({
    "consistent", "renamed", "param_names_differ", "defaults_differ", "torch_more_params",
    "param_semantics_differ",
})
BEHAVIOUR_RELATIONS = {
    "param_semantics_differ": "a parameter's meaning differs",
    "defaults_differ": "defaults differ",
}
MINDSPORE = "mindspore"


@dataclass
class Rewrite:
    title: str
    edits: list[TextEdit] = field(default_factory=list)
    behaviour: str | None = None  # why the result may behave differently, if it may


def spelled(api: str, alias: str) -> str:
    """``mindspore.nn.Dense`` written through the file's alias: ``ms.nn.Dense``."""
    if api == MINDSPORE:
        return alias
    if not api.startswith(MINDSPORE + "."):
        raise Blocked(f"target {api!r} is not a mindspore name")
    return alias + api[len(MINDSPORE):]


def leaf(api: str) -> str:
    return api.rsplit(".", 1)[-1]


def removes_construct(choice: TargetChoice) -> bool:
    """Whether ``choice``'s automatic template removes the call's construct (``@torch.no_grad()``,
    ``with torch.no_grad():`` unwrapped): its plan writes outside the call."""
    templates = choice.target.get("template") or []
    return bool(templates) and is_auto(choice) and any(map(removes, templates))


def is_auto(choice: TargetChoice) -> bool:
    if not choice.runs:
        return False
    auto = choice.target.get("auto")
    if auto and choice.target.get("template"):  # a template says how, whatever the relation (even none)
        return True
    if auto is not None:
        return bool(auto) and choice.relation in AUTO_RELATIONS
    return choice.relation in AUTO_RELATIONS


def runs_as_written(site: Site, choice: TargetChoice) -> bool:
    """A torch method call left as written is the target's own call: same method name, a relation that
    converts as it is, and no recorded probe found it crash, differ or lack a kernel here (``kb.proof_gaps``'
    reasons "wrong", "crash", "no kernel"). ``x.dim()`` is; ``x.element_size()`` (MindSpore: ``itemsize``),
    ``x.kthvalue(2)`` (crashes) and ``x.quantile(q)`` (no CPU kernel) are not."""
    if not choice.runs or not choice.api or choice.relation not in AUTO_RELATIONS:
        return False
    if choice.api.rsplit(".", 1)[-1] != site.torch_name.rsplit(".", 1)[-1]:
        return False
    proof = choice.target.get("proof") or {}
    return not (proof and reason_class(proof) in ("wrong", "crash", "no kernel"))


def value_blocker(site: Site, choice: TargetChoice, literals_only: bool = False) -> str | None:
    """Why a call's argument keeps an automatic target from being applied: its value is one the
    target's rewrite probe did not prove (or found different from torch), see ``kb.probes.values``.
    Only parameters the probe varied are checked; None when every argument is proven. ``literals_only``:
    values that are not literals are left out (a torch-signature adapter checks them at run time)."""
    proof = choice.target.get("proof") or {}
    values = proof.get("values")
    if not values or site.kind != "call" or site.call is None:
        return None
    try:
        args, _ = read_arguments(site.call)
    except Blocked:
        return None
    signature = parse_signature(site.record.get("torch_signature"))
    order = signature.positional if signature is not None else []
    # a required size (in_features, kernel_size) was not varied: any size is alike
    required = {p.name for p in signature.parameters if p.default is None} - DIM_NAMES if signature else set()
    positional = [a for a in args if a.keyword is None and not a.star]
    named = [(order[i], a.value) for i, a in enumerate(positional) if i < len(order)]
    named += [(a.keyword, a.value) for a in args if a.keyword is not None]
    defaults = {p.name: p.default for p in signature.parameters} if signature is not None else {}
    # a parameter MindSpore does not take is the argument rules' to refuse (with their reason) or drop
    absent = {m.get("torch") for m in choice.target.get("params") or []
              if isinstance(m, dict) and m.get("kind") in ("unsupported", "dropped")}
    checked = [(param, text) for param, text in named
               if param not in required and param not in absent and not _is_default(text, defaults.get(param))
               and not (literals_only and literal(text) is MISSING)]
    if proof.get("combos") and _proven_combination(checked, values, proof["combos"]):
        return None  # these literal values together ran and matched torch (data/probes/callforms.yaml)
    for param, text in checked:  # (torch's own default written out: the call styles that omit it proved it)
        why = value_verdict(values, param, text, proof.get("value_failures"))
        if why is not None:
            return why
    return None


def _proven_combination(checked: list[tuple[str, str]], values: dict[str, Any], combos: list[str]) -> bool:
    """Whether a curated call form with exactly these literal values (by class) ran and matched torch."""
    classes = {}
    for param, text in checked:
        if param not in values:
            continue  # not varied by any probe: not part of a combination
        is_literal, value = literal_value(text)
        if not is_literal:
            return False
        classes[param] = value_class(value)
    return bool(classes) and combo_key(classes) in combos


def static_forward(local_class: Any) -> bool:
    """A class whose ``forward`` is a static method (``torch.autograd.Function``'s shape: ``forward(ctx, x)``,
    ``backward(ctx, grad)``, called through ``.apply``) does not become a Cell by renaming its base:
    ``construct`` is an instance method and gradients go in ``bprop``. It is left with its reason."""
    method = local_class.methods.get("forward") if local_class is not None else None
    holder = method.parent if method is not None else None
    return holder is not None and holder.type == "decorated_definition" and any(
        d.type == "decorator" and d.text.strip() == b"@staticmethod" for d in holder.named_children)


def _is_default(text: str, default: str | None) -> bool:
    if default is None:
        return False
    value, torch_default = literal(text), literal(default)
    return value is not MISSING and same_value(value, torch_default)


def unverified_consistent(choice: TargetChoice) -> bool:
    """A same-named target whose signatures could not be compared (no params, not auto): safe for
    a call that passes no arguments (``nn.Sigmoid()``), see ``bare_call``."""
    return choice.relation == "consistent" and not choice.target.get("params") and choice.runs \
        and not choice.target.get("auto")


def bare_call(site: Site, choice: TargetChoice) -> bool:
    if not unverified_consistent(choice) or site.kind != "call" or site.call is None:
        return False
    arguments = site.call.child_by_field_name("arguments")
    return arguments is not None and arguments.type == "argument_list" and not arguments.named_children


def behaviour_note(choice: TargetChoice, caveats: list[dict[str, Any]]) -> str | None:
    notes = []
    if choice.relation in BEHAVIOUR_RELATIONS:
        notes.append(BEHAVIOUR_RELATIONS[choice.relation])
    notes += [str(c.get("title") or c.get("id")) for c in caveats if severity_rank(c) >= 1]
    return "; ".join(notes) or None


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def family_aside(family: str | None) -> str:
    """Why a fix names the other family's API: `` (a classic API: mint has none)``."""
    other = "classic" if family == "mint" else "mint"
    return f" (a {family} API: {other} has none)"


def _title(action: str, choice: TargetChoice, behaviour: str | None) -> str:
    if choice.fallback:
        action += family_aside(choice.target.get("family"))
    if behaviour:
        action += f" (changes behaviour: {behaviour})"
    return action


def _params_change(target: dict[str, Any]) -> bool:
    for rule in target.get("params") or []:
        kind = rule.get("kind", "same")
        if kind == "added" and not rule.get("transform"):
            continue
        if kind != "same" or (rule.get("ms") and rule.get("ms") != rule.get("torch")):
            return True
    return False


def plan(site: Site, choice: TargetChoice, caveats: list[dict[str, Any]], source: bytes, alias: str,
         renames: list[TextEdit] | None = None) -> Rewrite:
    """The rewrite of one site; raises ``Blocked`` when it cannot be automatic.

    A base class whose target is a ``context_change`` (``nn.Module`` -> ``Cell``) is
    the one context change the engine completes itself: the change is renaming
    the overridden methods, and those renames come from the methods' own records.
    """
    class_migration = site.kind == "class_base" and choice.relation == "context_change" and bool(choice.api) \
        and not static_forward(site.local_class)
    as_type = site.kind == "attribute" and site.member is None and in_type_context(site.node)
    templates = choice.target.get("template") if is_auto(choice) else None
    checked_later = None  # a value known only at run time, which the adapter checks against the proven ones
    if site.kind == "call" and is_auto(choice):  # proven only at the parameter values the probe ran
        unproven = value_blocker(site, choice)
        if unproven is not None:
            if templates or site.member is not None or value_blocker(site, choice, literals_only=True) is not None:
                raise Blocked(unproven)
            checked_later = UnsupportedValue(unproven)
    if templates == [""] and site.kind in ("call", "attribute"):
        construct = site.call if site.kind == "call" and site.call is not None else site.node
        return Rewrite(_title(f"Remove {_text(construct)}", choice, None), removal(construct, source), None)
    behaviour = behaviour_note(choice, caveats)
    held = receiver_text(site.member) if site.kind == "attribute" and site.member is not None else None
    if templates and held and site.record.get("kind") == "attribute" \
            and fields(templates[0]) == (set(), set()):  # (``{self}``/``{ms}`` only, no argument)
        # an attribute that becomes an expression of its object (``self._modules`` -> ``self.name_cells()``)
        text = templates[0].replace("{self}", held).replace("{ms}", alias)
        return Rewrite(_title(f"Rewrite as {text}", choice, behaviour),
                       [TextEdit(site.node.start_byte, site.node.end_byte, text)], behaviour)
    if templates and site.kind == "call" and site.call is not None:
        receiver = receiver_text(site.member) if site.member is not None else None
        try:
            text = render(templates, site.call, site.record, choice.target, alias, receiver)
        except Blocked:  # only some calls fit (``{enabled=False}``): the others need the human a relation asks for
            if choice.relation not in AUTO_RELATIONS and any(conditions(t) for t in templates):
                raise Blocked(f"{choice.relation}: not an automatic rewrite") from None
            raise
        if not text.strip():  # a template of conditions only: the construct goes, as with ``""``
            return Rewrite(_title(f"Remove {_text(site.call)}", choice, None), removal(site.call, source), None)
        check_statement(text, site.call)
        edits = [TextEdit(site.call.start_byte, site.call.end_byte, text)] + call_factory_edits(site.call, source)
        helper = choice.target.get("helper")
        name = helper.split(None, 1)[1].split("(", 1)[0] if helper else ""  # def NAME( / class NAME(
        if helper and name in text:  # a function the template calls, written once before the statement that needs it
            added = insertion(site.node, source, name, helper.replace("{ms}", alias).rstrip("\n") + "\n")
            edits += [added] if added is not None else []
        return Rewrite(_title(f"Rewrite as {text}", choice, behaviour), edits, behaviour)
    reference = site.kind == "attribute" and site.member is None and unverified_consistent(choice) \
        and site.record.get("kind") == "class"  # scale_activation=nn.Sigmoid: a same-named class
    if not choice.api or not (is_auto(choice) or class_migration or as_type or bare_call(site, choice) or reference):
        raise Blocked(f"{choice.relation.replace('_', ' ')}: not an automatic rewrite")
    api, target = choice.api, choice.target
    if site.kind == "method_def":
        return Rewrite(_title(f"Migrate {site.local_class.name if site.local_class else 'class'} to MindSpore",
                              choice, behaviour), list(renames or []), behaviour)
    if site.kind == "class_base":
        new = spelled(api, alias)
        edits = [TextEdit(site.node.start_byte, site.node.end_byte, new)] + list(renames or [])
        name = site.local_class.name if site.local_class else "class"
        extra = "".join(f", {r.new_text}" for r in renames or [])
        return Rewrite(_title(f"Derive {name} from {new}" + (f" (rename to {extra[2:]})" if extra else ""),
                              choice, behaviour), edits, behaviour)
    if site.kind not in ("call", "attribute"):
        raise Blocked("imports are rewritten together with their uses")
    edits = []
    if site.member is not None:
        old, new = _text(site.member), leaf(api)
        if new != old:
            edits.append(TextEdit(site.member.start_byte, site.member.end_byte, new))
            action = f"Rename .{old}() to .{new}()" if site.kind == "call" else f"Rename .{old} to .{new}"
        else:
            action = f"Update the arguments of .{old}()"
    else:
        old, new = _text(site.node), spelled(api, alias)
        edits.append(TextEdit(site.node.start_byte, site.node.end_byte, new))
        action = f"Replace {old} with {new}"
    bound = partial_call(site.node) if site.kind == "attribute" else None
    if site.kind == "call" and site.call is not None:
        try:
            if checked_later is not None:
                raise checked_later
            edits += plan_arguments(site.call, site.record, widened(site.record, target), source) \
                + call_factory_edits(site.call, source)
        except (UnsupportedValue, Unpacked) as blocked:  # antialias=antialias, mode=self.mode, *args: an adapter
            # takes torch's values when the code runs and refuses those MindSpore cannot honour
            if site.member is not None or (b"**" in site.call.text and not isinstance(blocked, Unpacked)
                                           and blocked is not checked_later):
                raise
            edits = _adapter_edits(site, choice, alias, source, blocked) + call_factory_edits(site.call, source)
            action = f"Call {adapter_name(api)} (torch's parameters; it raises where MindSpore has no counterpart)"
    elif bound is not None:  # partial(nn.BatchNorm2d, eps=1e-3): the partial's arguments are the call's
        try:
            mapped = plan_arguments(bound, site.record, target, source, skip=1)
            why = reference_blocker(site.record, target, defaults_written=True)
            if why is not None:
                raise Blocked(f"bound with functools.partial: {why}")
            edits += mapped
        except Blocked as blocked:  # partial(ms_Conv2d, kernel_size=3, bias=False): torch's names stay
            edits = _adapter_edits(site, choice, alias, source, blocked)
    elif _params_change(target) and not in_type_context(site.node) and not unverified_consistent(choice):
        why = reference_blocker(site.record, target)
        if why is not None:  # the adapter maps every later call's arguments, transforms included
            edits = _adapter_edits(site, choice, alias, source, Blocked(f"referenced without a call: {why}"))
        passed_later = transformed_params(target) if why is None else []
        if passed_later:
            note = f"a later call through this name must not pass {', '.join(passed_later)} (its value is transformed)"
            behaviour = f"{behaviour}; {note}" if behaviour else note
    if not edits:  # the torch code is already the MindSpore code (``self.register_buffer(...)``)
        return Rewrite("", [], behaviour)
    return Rewrite(_title(action, choice, behaviour), edits, behaviour)


def _adapter_edits(site: Site, choice: TargetChoice, alias: str, source: bytes, why: Blocked) -> list[TextEdit]:
    """The reference renamed to a torch-signature adapter, defined once in the file (adapters.py)."""
    if _root(site.node).has_error:  # where to write the adapter is not known in a broken file
        raise why
    try:
        definition = adapter(site.record, choice.target, alias, spelled(str(choice.api), alias))
    except Blocked as blocked:
        raise Blocked(f"{why}; {blocked}") from None
    name = adapter_name(str(choice.api))
    added = insertion(site.node, source, name, definition)
    return [TextEdit(site.node.start_byte, site.node.end_byte, name)] + ([added] if added is not None else [])


def _root(node: Any) -> Any:
    while node.parent is not None:
        node = node.parent
    return node


TYPE_TESTS = (b"isinstance", b"issubclass")
TYPE_PARTS = frozenset({"tuple", "parenthesized_expression", "binary_operator", "subscript", "generic_type",
                        "type_parameter", "list"})
CASTS = (b"cast", b"typing.cast")


PARTIALS = (b"partial", b"functools.partial")


def partial_call(node: Any) -> Any | None:
    """The ``partial(...)`` call whose first argument ``node`` is, if any."""
    parent = node.parent
    call = parent.parent if parent is not None and parent.type == "argument_list" else None
    function = call.child_by_field_name("function") if call is not None else None
    if function is None or function.text not in PARTIALS:
        return None
    first = next((c for c in parent.named_children if c.type != "comment"), None)
    return call if first is not None and first.id == node.id else None


def in_type_context(node: Any) -> bool:
    """A name used only as a type: an annotation, the class argument of isinstance/issubclass
    (alone or in a tuple), the type given to ``typing.cast``, or an ``except`` clause. Renaming
    it never changes a call."""
    child, parent = node, node.parent
    while parent is not None:
        kind = parent.type
        if kind == "type":
            return True
        if kind == "except_clause":
            return True
        if kind in TYPE_PARTS:  # (A, B), X | None, Optional[X], tuple[X, ...]
            if kind == "subscript" and typing_subscript(parent, child):
                return True  # LayerType = Union[str, Type[nn.Module]]: a type alias
            child, parent = parent, parent.parent
            continue
        if kind == "argument_list":
            call = parent.parent
            function = call.child_by_field_name("function") if call is not None else None
            args = [c for c in parent.named_children if c.type != "comment"]
            if function is not None and function.text in CASTS:  # typing.cast(nn.Embedding, obj)
                return len(args) == 2 and args[0].id == child.id
            return (function is not None and function.text in TYPE_TESTS and len(args) == 2
                    and args[1].id == child.id)
        return False
    return False


def method_renames(site: Site, choice: TargetChoice | None) -> TextEdit | None:
    """The ``def`` rename a method_def site contributes to its class migration."""
    if choice is None or not choice.api or not is_auto(choice) or site.node is None:
        return None
    new = leaf(choice.api)
    if new == _text(site.node):
        return None
    return TextEdit(site.node.start_byte, site.node.end_byte, new)
