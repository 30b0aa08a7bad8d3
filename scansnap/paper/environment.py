"""The environment a report or a run records: library versions and the device, without importing
the libraries (their installed metadata is read), so that creating a run stays light."""

from __future__ import annotations

import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Any

PACKAGES = ("torch", "numpy", "pandas", "scipy", "plotly", "pyarrow", "pydantic")


def environment(device: str) -> dict[str, Any]:
    """Library versions (from the installed packages' metadata) and the device the runs used."""
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in PACKAGES:
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    return {"versions": versions, "device": device}
