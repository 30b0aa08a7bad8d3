"""The Real text page's body: its URL state, actions, live area, charts and history reader."""

from __future__ import annotations

from scansnap.kinds.text.ui.state import TEXT_KNOBS
from scansnap.kinds.text.ui.words import SETTING_LABELS, shown_settings
from scansnap.ui.kind_views import KindView

VIEW = KindView(
    "text",
    "kinds/text/ui/page.py",
    "Real text",
    "real-text",
    "open it on the Real text page",
    export_note="A real-text run's zip holds config.json, scalars (step, layer, head, metric, value) and "
    "attn_maps.npz (docs/explore.md: export schema).",
    figure="scansnap.kinds.text.ui.notebook:text_figure",
    figure_names=("attn_entropy", "groups", "loss", "attn_map"),
    tab="Real text",
    icon="📖",
    url="text",
    words="real text",
    first_metric="attn_entropy",
    knobs=tuple(k.key for k in TEXT_KNOBS),
    setting_labels=SETTING_LABELS,
    settings=shown_settings,
    compare_note="Real-text runs: attention entropy and attention on frequent words are the mean over heads, "
    "one line per layer.",
)
