"""``msmap verify``: run a torch model and its MindSpore conversion on the same inputs and compare.

Each framework runs in its own subprocess (kb.verify.child); the MindSpore one cannot import torch.
"""
