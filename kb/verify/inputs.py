"""``--input`` specs and the seeded arrays made from them (the same arrays go to both frameworks)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kb.errors import MsmapError

FLOATS = ("float32", "float64", "float16")
INTS = ("int64", "int32")
MAX_INPUT_BYTES = 1 << 30  # all inputs together: both framework processes hold a copy, and the model its activations
MAX_DIMS = 32


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str = "float32"
    low: int = 0
    high: int = 2
    values: tuple[int, ...] | None = None  # '=12,9:int64': these values, not random ones

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            return np.array(self.values, dtype=self.dtype)
        if self.dtype in FLOATS:
            return rng.standard_normal(self.shape).astype(self.dtype)
        if self.dtype == "bool":
            return rng.integers(0, 2, self.shape).astype(bool)
        return rng.integers(self.low, self.high, self.shape).astype(self.dtype)


def parse_spec(text: str) -> InputSpec:
    """'1,3,32,32' (float32, normal) | '2,8:int64:64' (integers in [0, 64)) | '2,8:int64:5:9' ([5, 9))
    | '=12,9:int64' (exactly these values, e.g. sequence lengths)."""
    parts = text.strip().split(":")
    if parts[0].startswith("="):
        dtype = parts[1] if len(parts) > 1 and parts[1] else "int64"
        try:
            values = tuple(int(v) for v in parts[0][1:].split(","))
        except ValueError:
            raise MsmapError(f"--input {text!r}: literal values must be integers, e.g. =12,9:int64") from None
        if dtype not in INTS or len(parts) > 2:
            raise MsmapError(f"--input {text!r}: literal values take an integer dtype and no range")
        _check_ints(text, dtype, values)
        _check_size(text, (len(values),), dtype)
        return InputSpec((len(values),), dtype, values=values)
    try:
        shape = tuple(int(d) for d in parts[0].split(",") if d.strip())
    except ValueError:
        shape = ()
    if not shape or any(d <= 0 for d in shape):
        raise MsmapError(f"--input {text!r}: the shape must be positive integers separated by commas, e.g. 1,3,32,32")
    if len(shape) > MAX_DIMS:
        raise MsmapError(f"--input {text!r}: {len(shape)} dimensions; at most {MAX_DIMS}")
    dtype = parts[1] if len(parts) > 1 and parts[1] else "float32"
    if dtype not in FLOATS + INTS + ("bool",):
        raise MsmapError(f"--input {text!r}: dtype {dtype!r} is not one of {', '.join(FLOATS + INTS + ('bool',))}")
    _check_size(text, shape, dtype)
    bounds = parts[2:]
    if bounds and dtype not in INTS:
        raise MsmapError(f"--input {text!r}: a range only goes with an integer dtype")
    try:
        nums = [int(b) for b in bounds]
    except ValueError:
        raise MsmapError(f"--input {text!r}: the range must be integers, e.g. 2,8:int64:64") from None
    if len(nums) > 2 or (nums and (nums[-1] <= (nums[0] if len(nums) == 2 else 0))):
        raise MsmapError(f"--input {text!r}: the range is HIGH or LOW:HIGH with LOW < HIGH")
    low, high = (0, nums[0]) if len(nums) == 1 else (nums[0], nums[1]) if nums else (0, 2)
    if dtype in INTS:
        _check_ints(text, dtype, (low, high - 1), " (a range's HIGH is one past the largest value)")
    return InputSpec(shape, dtype, low, high)


def _check_ints(text: str, dtype: str, values: tuple[int, ...], hint: str = "") -> None:
    info = np.iinfo(dtype)
    wrong = next((v for v in values if not info.min <= v <= info.max), None)
    if wrong is not None:
        raise MsmapError(f"--input {text!r}: {wrong} does not fit in {dtype} "
                         f"(from {info.min} to {info.max}){hint}")


def _check_size(text: str, shape: tuple[int, ...], dtype: str) -> None:
    size = math.prod(shape) * np.dtype(dtype).itemsize
    if size > MAX_INPUT_BYTES:
        raise MsmapError(f"--input {text!r}: {_bytes(size)} of {dtype}; an input may hold at most "
                         f"{_bytes(MAX_INPUT_BYTES)} (both framework processes keep a copy)")


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    for power, unit in enumerate(("KiB", "MiB", "GiB", "TiB"), start=1):
        if n < 1024 ** (power + 1):
            return f"{n / 1024 ** power:.1f} {unit}"
    return f"{n // 1024 ** 5:,} PiB" if n < 1024 ** 7 else "more than a million PiB"


def check_total(specs: list[InputSpec]) -> None:
    """MsmapError when the inputs together hold more than MAX_INPUT_BYTES."""
    total = sum(math.prod(s.shape) * np.dtype(s.dtype).itemsize for s in specs)
    if total > MAX_INPUT_BYTES:
        raise MsmapError(f"--input: {len(specs)} inputs hold {_bytes(total)} together; at most "
                         f"{_bytes(MAX_INPUT_BYTES)} (both framework processes keep a copy)")


def make_inputs(specs: list[InputSpec], seed: int) -> list[np.ndarray]:
    check_total(specs)
    rng = np.random.default_rng(seed)
    return [s.make(rng) for s in specs]
