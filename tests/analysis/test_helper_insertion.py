"""Where a helper's definition goes: before the top-level statement that needs it, unless the file
already defines that name above it (kb.analysis.adapters.insertion, used by every rule that writes a helper)."""
from __future__ import annotations

from kb.analysis.adapters import insertion
from kb.analysis.document import Document
from kb.analysis.text import apply_edits


def _call(doc: Document, text: bytes):
    """The tree node of the first occurrence of ``text``."""
    at = doc.source.index(text)
    return doc.tree.root_node.descendant_for_byte_range(at, at + len(text))


def _insert(source: str, needs: str, name: str = "ms_helper") -> str | None:
    doc = Document(source)
    definition = f"def {name}(x):\n    return x\n"  # (ending in a newline, as callers pass it)
    edit = insertion(_call(doc, needs.encode()), doc.source, name, definition)
    return None if edit is None else apply_edits(doc.source, [edit]).decode()


def test_a_helper_goes_before_the_top_level_statement_that_calls_it_with_two_blank_lines():
    source = "import os\n\n\nclass Net:\n    def forward(self, x):\n        return f(x)\n"
    written = _insert(source, "f(x)")
    assert written == ("import os\n\n\ndef ms_helper(x):\n    return x\n\n\nclass Net:\n"
                       "    def forward(self, x):\n        return f(x)\n")
    compile(written, "<converted>", "exec")


def test_a_name_defined_above_is_not_written_again_but_one_defined_below_is():
    above = "def ms_helper(x):\n    return x\n\n\ny = f(1)\n"
    assert _insert(above, "f(1)") is None
    below = "y = f(1)\n\n\ndef ms_helper(x):\n    return x\n"
    assert _insert(below, "f(1)").startswith("def ms_helper(x):\n    return x\n\n\ny = f(1)")
    as_class = "class ms_helper(object):\n    pass\n\n\ny = f(1)\n"
    assert _insert(as_class, "f(1)") is None


def test_another_name_with_the_same_prefix_does_not_count_and_each_text_is_read_afresh():
    source = "def ms_helper_two(x):\n    return x\n\n\ny = f(1)\n"
    assert _insert(source, "f(1)") is not None  # ms_helper_two( is not ms_helper(
    assert _insert(source, "f(1)", "ms_helper_two") is None
    # the same name in a new text: the definitions of the earlier text are not reused
    assert _insert("y = f(1)\n", "f(1)", "ms_helper_two") is not None


def test_blank_lines_already_above_are_counted():
    source = "import os\n\n\n\nz = f(2)\n"
    written = _insert(source, "f(2)")
    assert written == "import os\n\n\n\ndef ms_helper(x):\n    return x\n\n\nz = f(2)\n"
    assert _insert("z = f(2)\n", "f(2)") == "def ms_helper(x):\n    return x\n\n\nz = f(2)\n"
