"""Scan & Snap lab: train the 1-layer transformer of Tian et al. (NeurIPS 2023) and watch its
attention scan and snap next to the theory.  Start with ``streamlit run app.py``."""

import streamlit as st

from ui.slots import SLOTS
from ui.widgets import apply_lecture_mode, manager

st.set_page_config(page_title="Scan & Snap lab", page_icon="🔭", layout="wide")

PAGES = [
    st.Page("app_pages/lab.py", title="Lab", icon="🧪", default=True),
    st.Page("app_pages/compare.py", title="Compare", icon="📈"),
    st.Page("app_pages/sweep.py", title="Sweep", icon="🧮"),
    st.Page("app_pages/theory.py", title="Theory", icon="📐"),
    st.Page("app_pages/reproduce.py", title="Reproduce", icon="✅"),
    st.Page("app_pages/runs.py", title="Runs", icon="🗂️"),
]
page = st.navigation(PAGES, position="top")
manager()  # created with the first page of any kind: its fork server loads torch (~2 s) while pages render
apply_lecture_mode()
st.caption(
    "**Scan & Snap lab** · how a 1-layer transformer's attention first *scans* (distinct tokens grow, "
    "common tokens fade) and then *snaps* (freezes) — Tian, Wang, Chen, Du, *Scan and Snap: Understanding "
    "Training Dynamics and Token Composition in 1-layer Transformer*, NeurIPS 2023, "
    "[arXiv:2305.16380](https://arxiv.org/abs/2305.16380)"
)
with SLOTS.slot():  # a few script runs at a time, server-wide (ui/slots.py)
    page.run()
