"""Work done once when the server starts, so the first visitor does not wait for it: the modules the
pages import (plotly, pandas, scipy, the engine), the presets, what each kind's view warms (the Lab: its
live area and the default P(l|n) previews), and the service (the run store and the training workers' fork
server, which loads torch in its own process; a store that cannot be opened is left to the pages, which
say why).  ``SCANSNAP_PREWARM=0`` turns it off (bench/first_paint.py measures the difference)."""

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
    from scansnap.paper.presets import load_presets
    from scansnap.ui import shell  # noqa: F401  (the imports are the point)
    from scansnap.ui.kind_views import views
    from scansnap.ui.resources import service

    load_presets()
    for view in views().values():
        if view.warm is not None:
            view.warm()
    with suppress(ServiceError):  # a store that cannot be opened: the pages that need it say so
        service()
    return time.perf_counter() - t0
