"""One way to seed every random generator the toolkit uses."""
from __future__ import annotations

import random
from typing import Any

__all__ = ["seed_everything"]


def seed_everything(seed: int) -> Any:
    """Seed python's ``random``, numpy's global generator (``seed % 2**32``) and torch (when
    importable). Returns a new ``torch.Generator`` seeded with ``seed`` for code that draws
    from its own generator (None without torch)."""
    random.seed(seed)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    else:
        np.random.seed(seed % 2**32)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return None
    torch.manual_seed(seed)
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen
