"""A Plotly chart that updates in place (``Plotly.react`` on a persistent div).

Why: in Streamlit 1.67 ``st.plotly_chart`` hashes the figure spec into the element id, so
every data change remounts the chart (measured: a remount on every 0.5 s tick), which
flickers and resets the user's zoom whatever ``uirevision`` says.  This ``components.v2``
component keeps its div across reruns and calls ``Plotly.react``, so ``layout.uirevision``
preserves zoom and pan while the run streams in.  It uses the plotly.js that Streamlit's own
chart element loads (``window.Plotly``): ``ui.lab_live.plotly_loader_ui`` keeps a hidden
``st.plotly_chart`` on the page for that, and the component waits until the library is there.
"""

from __future__ import annotations

import json

import streamlit as st

from ui.charts import Spec, plot_config

_JS = """
export default function(component) {
  const { data, parentElement } = component;
  let div = parentElement.querySelector('div.livefig');
  if (!div) {
    div = document.createElement('div');
    div.className = 'livefig';
    div.style.width = '100%';
    parentElement.appendChild(div);
  }
  if (div.drawn === data) return;  // an unchanged chart (paused run, another n picked): nothing to redraw
  div.drawn = data;
  const spec = JSON.parse(data);
  const draw = () => window.Plotly.react(div, spec.fig.data, spec.fig.layout, spec.config);
  if (window.Plotly) { draw(); return; }
  const timer = setInterval(() => { if (window.Plotly) { clearInterval(timer); draw(); } }, 100);
  return () => clearInterval(timer);
}
"""
_CSS = "div.livefig { width: 100%; }"
_live_plot = st.components.v2.component("scansnap_live_plot", js=_JS, css=_CSS, isolate_styles=False)


def live_payload(fig: Spec, filename: str) -> str:
    """The component's data: the figure dict and its plotly config as one JSON string (built
    once per tick and shared by every session that shows the same chart)."""
    config = {**plot_config(filename), "responsive": True}
    return json.dumps({"fig": fig, "config": config}, separators=(",", ":"))


def live_plot_ui(payload: str, key: str) -> None:
    """Draw a :func:`live_payload` in an element keyed ``key`` (CSS class ``st-key-<key>``)."""
    _live_plot(data=payload, key=key)
