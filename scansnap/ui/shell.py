"""The dashboard's frame: page config, navigation, lecture mode, the paper line, render slots."""

from __future__ import annotations

from contextlib import suppress

import streamlit as st

from scansnap.service.facade import ServiceError
from scansnap.ui.errors import boundary, damage_notice
from scansnap.ui.gc_freeze import freeze_imports
from scansnap.ui.live.slots import SLOTS
from scansnap.ui.resources import service
from scansnap.ui.widgets import apply_lecture_mode, lecture_requested

PAGES = [
    ("app_pages/lab.py", "Lab", "🧪"),
    ("app_pages/text.py", "Real text", "📖"),
    ("app_pages/compare.py", "Compare", "📈"),
    ("app_pages/sweep.py", "Sweep", "🧮"),
    ("app_pages/theory.py", "Theory", "📐"),
    ("app_pages/reproduce.py", "Reproduce", "✅"),
    ("app_pages/runs.py", "Runs", "🗂️"),
]
PAPER_LINE = (
    "**Scan & Snap lab** · how a 1-layer transformer's attention first *scans* (distinct tokens grow, "
    "common tokens fade) and then *snaps* (freezes) — Tian, Wang, Chen, Du, *Scan and Snap: Understanding "
    "Training Dynamics and Token Composition in 1-layer Transformer*, NeurIPS 2023, "
    "[arXiv:2305.16380](https://arxiv.org/abs/2305.16380)"
)


def main() -> None:
    lecture = lecture_requested()
    sidebar = "collapsed" if lecture else "auto"  # a projector's screen is for the controls and the charts
    st.set_page_config(page_title="Scan & Snap lab", page_icon="🔭", layout="wide", initial_sidebar_state=sidebar)
    pages = [st.Page(path, title=title, icon=icon, default=i == 0) for i, (path, title, icon) in enumerate(PAGES)]
    page = st.navigation(pages, position="top")
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
