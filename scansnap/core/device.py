"""Device choice: CUDA when present (and allowed), else CPU; described in every run's metadata."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def resolve_device(preference: str = "auto") -> torch.device:
    """'auto' → cuda if available else cpu; 'cuda' without a GPU is an error with a clear message."""
    if preference == "cpu":
        return torch.device("cpu")
    if preference == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device='cuda' was asked for but no CUDA GPU is available; use 'auto' or 'cpu'")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def describe_device(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda:{device.index or 0} ({torch.cuda.get_device_name(device)})"
    return f"cpu ({torch.get_num_threads()} threads)"


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` intra-op torch threads (None: leave as is), then restore.

    Small tensors run best on one thread: on a 2-core machine shared with any other busy process,
    torch's 2-thread pool spin-waits so badly that a small step ran 10–40× slower (measured here)."""
    old = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
