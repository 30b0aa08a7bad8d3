"""Work done once when the server starts, so the first visitor does not wait for it: the modules the
Lab imports (plotly, pandas, scipy, the engine), the presets, the default P(l|n) preview, and the
service (the run store and the training workers' fork server, which loads torch in its own process;
a store that cannot be opened is left to the pages, which say why).
``SCANSNAP_PREWARM=0`` turns it off (bench/first_paint.py measures the difference)."""

from __future__ import annotations

import os
import time
from contextlib import suppress

from scansnap.service.facade import ServiceError


def prewarm() -> float:
    """Warm what the first page needs; returns the seconds it took (0 when turned off)."""
    if os.environ.get("SCANSNAP_PREWARM", "1") == "0":
        return 0.0
    t0 = time.perf_counter()
    from scansnap.kinds.synthetic.ui import (
        actions,  # noqa: F401
        live,  # noqa: F401
    )
    from scansnap.paper.presets import load_presets
    from scansnap.ui import shell  # noqa: F401  (the imports are the point)
    from scansnap.ui.chart_style import FONT, LECTURE_FONT
    from scansnap.ui.knobs import DEFAULT_PRESET, LECTURE_PRESET
    from scansnap.ui.page_data import p_preview
    from scansnap.ui.resources import service

    presets = load_presets()
    for name, font in ((DEFAULT_PRESET, FONT), (LECTURE_PRESET, LECTURE_FONT), (LECTURE_PRESET, FONT)):
        if name in presets:
            p_preview(presets[name].config.data.model_dump_json(), font)
    with suppress(ServiceError):  # a store that cannot be opened: the pages that need it say so
        service()
    return time.perf_counter() - t0
