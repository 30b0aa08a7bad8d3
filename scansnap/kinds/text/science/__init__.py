"""Real text: a small causal Transformer language model, its word-level tokenizer,
its trainer and the attention statistics of Scan & Snap Fig. 7 and JoMA's real-data figure.

Pure torch/numpy; no I/O: the corpora are read by ``scansnap.kinds.text.service.corpora`` and handed in as
:class:`scansnap.kinds.text.science.data.CorpusText`.
"""

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.recorded import METRICS

# its presets: their folder under scansnap/assets/presets/, their config class, what one is called
PRESET_SHELF = ("text", TextRunConfig, "text preset")

__all__ = ["METRICS", "PRESET_SHELF"]
