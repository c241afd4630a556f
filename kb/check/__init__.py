"""``msmap check``: verify every fact in the built knowledge base against the installed libraries.

Flow (one concern per module):

- ``claims``  — read the DB and list what can be checked (``Item``s), honouring version ranges;
- ``live``    — runs *inside* a subprocess per framework and reports what the installed
  library actually has (existence, parameters, defaults) as JSON lines;
- ``verify``  — compares each item with the live report (``pass`` / ``drift`` / ``not_checkable``);
- ``report``  — the summary table, failure listing, ``--json`` shape and ``--record`` rows.
"""
