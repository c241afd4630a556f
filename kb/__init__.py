"""msmap: a verified torch -> MindSpore knowledge base.

Flow: data/ (curated YAML, derived JSON Lines, signature snapshots) --build-->
SQLite DB --query--> CLI, language server, docs, scan/convert.
"""
__version__ = "0.1.0"
