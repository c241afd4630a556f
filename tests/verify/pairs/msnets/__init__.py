"""MindSpore twins of torchnets.py (a package: the files use relative imports)."""
