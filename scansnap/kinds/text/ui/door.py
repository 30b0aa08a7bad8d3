"""The real-text kind's own methods on the service (its corpora, uploads, typed sentences), for its page."""

from __future__ import annotations

from typing import Any

from scansnap.ui.resources import service


def text_door() -> Any:
    """``LabService.door("text")``: :class:`scansnap.kinds.text.service.door.TextDoor`."""
    return service().door("text")
