"""The vocabulary the generated docs explain: relations, families, coverage classes, severities.

Data, not logic: pages, tables and the HTML page all read these texts, so each word is
explained once.  Relation order is roughly the effort a migration takes.
"""
from __future__ import annotations

RELATIONS: dict[str, str] = {
    "consistent": "Same name in the MindSpore namespace, same parameters, same defaults: "
                  "changing the import is enough.",
    "renamed": "The MindSpore API has another name; parameters and behaviour line up.",
    "param_names_differ": "Parameters carry other names (and may sit in another order); "
                          "pass them by their MindSpore names.",
    "defaults_differ": "Parameters match but at least one default does not: pass that argument "
                       "explicitly to keep torch behaviour.",
    "torch_more_params": "torch accepts parameters MindSpore lacks; calls that use them need "
                         "another route.",
    "param_semantics_differ": "A parameter exists on both sides but its value means something "
                              "else (for example a keep probability instead of a drop probability).",
    "composite": "No single MindSpore call does it; a few calls together do.",
    "context_change": "The call itself maps, but the code around it has to change too "
                      "(training step, gradient computation, module structure).",
    "no_equivalent": "MindSpore has nothing to call; the entry's advice says what to do instead.",
}

# Relations whose calls can be rewritten by renaming the callee and its keywords.
CLEAN = ("consistent", "renamed", "param_names_differ", "defaults_differ")
# Relations where a MindSpore API exists but a person has to look at each use.
PARTIAL = ("torch_more_params", "param_semantics_differ", "composite", "context_change")

COVERAGE: dict[str, str] = {
    "mapped": "at least one current MindSpore target has a clean relation "
              f"({', '.join(CLEAN)})",
    "partial": "current MindSpore targets exist, but each needs attention "
               f"({', '.join(PARTIAL)})",
    "none": "there is no current MindSpore target (no_equivalent, or nothing recorded yet)",
}

FAMILIES: dict[str, str] = {
    "classic": "the long-standing MindSpore APIs: `mindspore.nn`, `mindspore.ops`, "
               "`mindspore.Tensor` and friends",
    "mint": "`mindspore.mint`, the newer namespace whose APIs follow torch's names and signatures",
}
FAMILY_TITLES = {"classic": "Classic MindSpore", "mint": "mint"}

SEVERITIES: dict[str, str] = {
    "error": "results are silently wrong, or the code certainly fails, if ignored",
    "warning": "behaviour or numerics may differ; check your use",
    "info": "good to know; behaviour does not change",
}
SEVERITY_ORDER = ("error", "warning", "info")

PARAM_KINDS: dict[str, str] = {
    "same": "same name, same meaning",
    "renamed": "pass it under the MindSpore name",
    "transformed": "convert the value as shown",
    "dropped": "torch only and without effect in MindSpore; leave it out",
    "unsupported": "torch only and it matters; needs manual work",
    "added": "MindSpore only; its default applies",
}


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def relation_class(relation: str) -> str:
    """The coverage class a single relation stands for (used for colours)."""
    return "mapped" if relation in CLEAN else "partial" if relation in PARTIAL else "none"


def relation_rank(relation: str | None) -> int:
    order = list(RELATIONS)
    return order.index(relation) if relation in order else len(order)
