"""What msmap itself finds in a file, computed in the test process with the server's own modules
(engine, diagnostics, fix-all) and knowledge base, to compare with what the window shows."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
SQUIGGLE_CLASSES = {"error": "error", "warning": "warning", "information": "info", "hint": "hint"}


@dataclass(frozen=True, order=True)
class Finding:
    line: int  # 1-based, as VS Code shows positions
    column: int
    end_line: int
    end_column: int
    severity: str  # error | warning | information | hint
    message: str
    torch_name: str


class Expected:
    def __init__(self, db: Path):
        from kb.analysis import Catalog
        from kb.query import KB

        self.catalog = Catalog(KB.open(db=db))

    def _server(self, raw: dict[str, Any]):
        from kb.analysis import Engine
        from lsp.settings import parse_settings

        settings, warnings = parse_settings(raw)
        assert not warnings, warnings
        return settings, Engine(self.catalog, settings.engine())

    def uses(self, text: str, **raw: Any) -> list[Any]:
        from kb.analysis import Document

        return self._server(raw)[1].analyze(Document(text)).uses

    def findings(self, text: str, **raw: Any) -> list[Finding]:
        """The diagnostics the server publishes for ``text`` with the settings ``raw`` (camelCase)."""
        from kb.analysis import Document
        from lsp.diagnostics import DiagnosticCache

        settings, engine = self._server(raw)
        found = []
        for use in engine.analyze(Document(text)).uses:
            for d in DiagnosticCache(settings).diagnostics([use]):
                r = d.range
                found.append(Finding(r.start.line + 1, r.start.character + 1, r.end.line + 1, r.end.character + 1,
                                     SEVERITY_NAMES[d.severity.value], d.message, use.torch_name))
        return sorted(found)

    def quick_fix(self, text: str, torch_name: str, **raw: Any) -> tuple[str, str]:
        """(title, file after it) of msmap's quick fix on the first use of ``torch_name``."""
        from kb.analysis import Document

        analysis = self._server(raw)[1].analyze(Document(text))
        use = next(u for u in analysis.uses if u.torch_name == torch_name)
        fix = analysis.fix(use)
        assert fix is not None, f"msmap has no fix for {torch_name}"
        return fix.title, apply_edits(text, fix.edits)

    def fix_all(self, text: str, **raw: Any) -> str:
        """The file after msmap's fix-all ("msmap: Migrate this file")."""
        from kb.analysis import Document

        return self._server(raw)[1].fix_all(Document(text)).text

    def fix_all_count(self, text: str, **raw: Any) -> int:
        """How many fixes fix-all applies (the number "msmap: Migrate this file" reports)."""
        from kb.analysis import Document

        return len(self._server(raw)[1].fix_all(Document(text)).applied)


def apply_edits(text: str, edits: list[Any]) -> str:
    """``text`` with the engine's byte-offset ``TextEdit``s applied."""
    source = text.encode()
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[:edit.start] + edit.new_text.encode() + source[edit.end:]
    return source.decode()
