"""The synthetic kind's science: its config, the token distribution, the (Y, Z) model, the trainer,
the attention statistics and the theorems' curves (pure numpy/scipy/torch, no I/O)."""

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.recorded import METRICS

# its presets: their folder under scansnap/assets/presets/ (its root), their config class, what one is called
PRESET_SHELF = ("", RunConfig, "preset")

__all__ = ["METRICS", "PRESET_SHELF"]
