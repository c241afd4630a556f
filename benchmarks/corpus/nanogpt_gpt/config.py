"""Configuration module."""

import dataclasses
from dataclasses import dataclass
import enum
import logging
import pathlib
from typing import Protocol, Any

_LOGGER = logging.getLogger(__name__)

VOCAB_SIZE = 50257  # Fixed size for GPT model checkpoints
NICE_VOCAB_SIZE = 50304  # Vocab size with nice power of 2, for training
BLOCK_SIZE = 1024  # Fixed size for GPT model checkpoints
DEFAULT_MICRO_BATCH_SIZE = 16


@dataclass(frozen=True, kw_only=True)
class GPTConfig:
    """This class defines the configuration for the GPT model.

    This configuration is used for inference.
    """

    block_size: int = BLOCK_SIZE
    """The maximum context length."""

    vocab_size: int = NICE_VOCAB_SIZE
    """The size of the vocabulary."""

    n_layer: int = 12
    """The number of transformer blocks."""

    n_head: int = 12
    """The number of attention heads."""

    n_embd: int = 768
    """The size of the embedding vector."""

