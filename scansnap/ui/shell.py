"""The dashboard's frame: page config, navigation, lecture mode, the paper line, render slots."""

from __future__ import annotations

from contextlib import suppress

import streamlit as st

from scansnap.service.facade import ServiceError
from scansnap.ui.errors import boundary, damage_notice
from scansnap.ui.gc_freeze import freeze_imports
from scansnap.ui.kind_views import views
from scansnap.ui.live.slots import SLOTS
from scansnap.ui.resources import service
from scansnap.ui.widgets import apply_lecture_mode, lecture_requested

SHARED_PAGES = [  # (the page's script, under scansnap/; its URL path; its title; its icon)
    ("app_pages/compare.py", "compare", "Compare", "📈"),
    ("app_pages/sweep.py", "sweep", "Sweep", "🧮"),
    ("app_pages/theory.py", "theory", "Theory", "📐"),
    ("app_pages/reproduce.py", "reproduce", "Reproduce", "✅"),
    ("app_pages/runs.py", "runs", "Runs", "🗂️"),
]
PAPER_LINE = (
    "**Scan & Snap lab** · how a 1-layer transformer's attention first *scans* (distinct tokens grow, "
    "common tokens fade) and then *snaps* (freezes) — Tian, Wang, Chen, Du, *Scan and Snap: Understanding "
    "Training Dynamics and Token Composition in 1-layer Transformer*, NeurIPS 2023, "
    "[arXiv:2305.16380](https://arxiv.org/abs/2305.16380)"
)


def pages() -> list[tuple[str, str, str, str]]:
    """The navigation: each kind's page (its view's), the first the one "/" opens, then the shared pages."""
    kinds = [(v.page, v.url, v.tab, v.icon) for v in views().values() if v.page and v.tab]
    return kinds + SHARED_PAGES


def main() -> None:
    lecture = lecture_requested()
    sidebar = "collapsed" if lecture else "auto"  # a projector's screen is for the controls and the charts
    st.set_page_config(page_title="Scan & Snap lab", page_icon="🔭", layout="wide", initial_sidebar_state=sidebar)
    navigation = [
        st.Page(path, title=title, icon=icon, url_path=url, default=i == 0)
        for i, (path, url, title, icon) in enumerate(pages())
    ]
    page = st.navigation(navigation, position="top")
    damage = None
    with suppress(ServiceError):  # only the pages that need the store say when it cannot be opened
        # created with the first page of any kind: its fork server loads torch (~2 s) while pages render
        damage = service().store_damage()
    apply_lecture_mode()
    if not lecture:  # lecture mode: every pixel of the first screen goes to the run
        st.caption(PAPER_LINE)
    damage_notice(damage)  # every page says it once, over what it shows: nothing writes to a damaged store
    with SLOTS.slot(), boundary():  # a few script runs at a time, server-wide (scansnap/ui/live/slots.py)
        page.run()
    freeze_imports()  # the page's first visit imported modules: its objects leave the collector's passes
