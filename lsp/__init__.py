"""``msmap lsp``: the language server (pygls), a thin layer over ``kb.analysis`` and ``kb.query``.

- ``server``      – the server object and one short handler per LSP method / command.
- ``settings``    – editor settings: one pydantic model (camelCase keys, a default for every key;
  a rejected value is reported and its default used).
- ``documents``   – open documents as engine ``Document``s, edited incrementally.
- ``publisher``   – debounced, version-checked diagnostics per document.
- ``diagnostics`` – engine uses -> LSP diagnostics (severity rules, kept per use between edits).
- ``lookups``     – hover, ``msmap.lookup`` and ``msmap.search`` (MindSpore names under the cursor:
  ``kb.analysis.msnames``).
- ``markdown``    – the Markdown cards (pure functions).
- ``actions``     – quick-fixes, fix-all and class migration as code actions.
- ``protocol``, ``transport``, ``safety`` – UTF-16 positions, cancellable stdio, guarded handlers.
"""
