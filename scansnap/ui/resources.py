"""The server-wide objects every page shares: the service facade of the run store's directory."""

from __future__ import annotations

import os

import streamlit as st

from scansnap.service.facade import LabService, get_service


def data_dir() -> str:
    return os.environ.get("SCANSNAP_DATA_DIR") or "data"


@st.cache_resource(show_spinner=False)
def _service(path: str) -> LabService:
    return get_service(path)


def service() -> LabService:
    """The process-wide service (one job manager per data directory; stopped and joined at exit)."""
    return _service(data_dir())
