"""The one list of the kinds of run.  A kind is a package (``scansnap/kinds/<kind>/``) with a ``service``
module whose ``KIND`` is its :class:`~scansnap.service.kinds.RunKind` and, where the pages show its runs, a
``ui`` module whose ``VIEW`` is its :class:`~scansnap.ui.kind_views.KindView` (its science may name its
presets: ``PRESET_SHELF``, :mod:`scansnap.paper.presets`).  The package's last name is the kind's.
Shared code finds the kinds here, by name, and imports none of them itself (the import contracts in
``pyproject.toml``).

``SCANSNAP_KINDS`` (package names, comma-separated) adds kinds from outside this package: a plug-in, or a
kind the test suite brings."""

from __future__ import annotations

import importlib
import os
from typing import Any

BUILT_IN = ("scansnap.kinds.synthetic", "scansnap.kinds.text")  # a new kind: one more name here
KINDS_ENV = "SCANSNAP_KINDS"


def kind_packages() -> tuple[str, ...]:
    """The built-in kinds' packages, then those ``SCANSNAP_KINDS`` adds (read now)."""
    extra = [p.strip() for p in os.environ.get(KINDS_ENV, "").split(",") if p.strip()]
    return BUILT_IN + tuple(dict.fromkeys(p for p in extra if p not in BUILT_IN))


def kind_part(package: str, side: str, name: str) -> Any | None:
    """``<package>.<side>``'s attribute ``name`` (imported now; ``side`` may be dotted, ``paper.items``), or None for
    a kind without that side."""
    try:
        importlib.import_module(package)
    except ModuleNotFoundError as err:
        if err.name is None or not (package == err.name or package.startswith(err.name + ".")):
            raise  # the package exists and fails to import: a real error
        raise ValueError(
            f"{KINDS_ENV} names {package!r}, which is no importable package (allowed: packages with a "
            "'service' module holding KIND, comma-separated)"
        ) from None
    try:
        module = importlib.import_module(f"{package}.{side}")
    except ModuleNotFoundError as err:
        target = f"{package}.{side}"
        if err.name is None or not err.name.startswith(package + ".") or not (target + ".").startswith(err.name + "."):
            raise  # the side exists and fails to import: a real error
        return None
    return getattr(module, name, None)
