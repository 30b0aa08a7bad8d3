"""A Plotly chart that updates in place (``Plotly.react`` on a persistent div).

Why: in Streamlit 1.67 ``st.plotly_chart`` hashes the figure spec into the element id, so
every data change remounts the chart (measured: a remount on every 0.5 s tick), which
flickers and resets the user's zoom whatever ``uirevision`` says.  This ``components.v2``
component keeps its div across reruns and calls ``Plotly.react``, so ``layout.uirevision``
preserves zoom and pan while the run streams in.  It uses the plotly.js that Streamlit's own
chart element loads (``window.Plotly``): ``ui.live.area.plotly_loader_ui`` keeps a hidden
``st.plotly_chart`` on the page for that, and the component waits until the library is there.
In lecture mode the browser sets the height of the story's charts to fill the screen (``fitHeight``).
Charts are drawn one per task from a page-wide queue (see ``_JS``): measured in
``bench/ui_latency.py``, it shortens the time from picking n to the c_n chart showing it.
"""

from __future__ import annotations

import json

import streamlit as st

from ui.chart_style import Spec, fit_top, plot_config

_JS = """
// One queue for every live chart of the page: each chart is drawn in a task of its own, so
// input and the next messages are handled between two charts (a tick's six charts are not one
// long task); the waiting chart that comes first on the page is drawn first (the c_n chart,
// which picking n changes, does not wait behind the rest of a tick); and a chart whose newer
// data arrives before it was drawn is drawn once, with the newer data.
const queue = window.__livefigQueue || (window.__livefigQueue = { pending: new Map(), busy: false });

function firstOnPage() {
  let first = null;
  for (const div of queue.pending.keys()) {
    if (!div.isConnected) queue.pending.delete(div);
    else if (!first || (first.compareDocumentPosition(div) & Node.DOCUMENT_POSITION_PRECEDING)) first = div;
  }
  return first;
}

// Lecture mode: the charts of the story (in .st-key-lab-hero) fill the screen under the control bar,
// one row of three below 1600 px wide, two rows of two from 1600 px (assets/live.css lays them out).
const WIDE = 1600, GAP = 12, MIN_H = 300;

function pageTop(el) {
  let y = el.getBoundingClientRect().top + window.scrollY;
  for (let p = el.parentElement; p; p = p.parentElement) y += p.scrollTop || 0;
  return y;
}

function fitHeight(div) {
  const hero = div.closest('[class*="st-key-lab-hero"]');
  if (!hero) return null;
  const rows = window.innerWidth >= WIDE ? 2 : 1;
  const free = window.innerHeight - pageTop(hero) - GAP;
  return Math.max(MIN_H, Math.floor((free - (rows - 1) * GAP) / rows));
}

// The legend sits right under the title, placed on the container (ui/chart_style.py): at a new height
// it moves to keep the same distance in pixels from the top.
function legendAt(layout, h) {
  const lg = layout.legend;
  if (!lg || lg.yref !== 'container' || !layout.height) return {};
  return { 'legend.y': 1 - (1 - lg.y) * layout.height / h };
}

if (!window.__livefigResize) {
  window.__livefigResize = true;
  let timer = null;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      for (const div of document.querySelectorAll('[class*="st-key-lab-hero"] div.livefig')) {
        const h = fitHeight(div);
        if (h && window.Plotly && div.layout) window.Plotly.relayout(div, { height: h, ...legendAt(div.layout, h) });
      }
    }, 150);
  });
}

function drawNext() {
  if (!window.Plotly) { setTimeout(drawNext, 100); return; }  // Streamlit's chart element loads it
  const div = firstOnPage();
  if (!div) { queue.busy = false; return; }
  const data = queue.pending.get(div);
  queue.pending.delete(div);
  try {
    if (div.drawn !== data) {
      div.drawn = data;
      const spec = JSON.parse(data);
      const h = fitHeight(div);
      if (h) {
        const lg = legendAt(spec.fig.layout, h);
        if ('legend.y' in lg) spec.fig.layout.legend.y = lg['legend.y'];
        spec.fig.layout.height = h;
      }
      window.Plotly.react(div, spec.fig.data, spec.fig.layout, spec.config);
    }
  } catch (err) {
    console.error('live chart not drawn', err);  // the other charts are still drawn
  }
  setTimeout(drawNext, 0);
}

export default function(component) {
  const { data, parentElement } = component;
  let div = parentElement.querySelector('div.livefig');
  if (!div) {
    div = document.createElement('div');
    div.className = 'livefig';
    div.style.width = '100%';
    parentElement.appendChild(div);
  }
  if (div.drawn === data && !queue.pending.has(div)) return;  // unchanged (paused run, another n picked)
  queue.pending.set(div, data);  // a chart already waiting is drawn once, with the newer data
  if (!queue.busy) { queue.busy = true; setTimeout(drawNext, 0); }
}
"""
_CSS = "div.livefig { width: 100%; }"
_live_plot = st.components.v2.component("scansnap_live_plot", js=_JS, css=_CSS, isolate_styles=False)


def live_payload(fig: Spec, filename: str) -> str:
    """The component's data: the figure dict (its top room fitted to its title and legend) and its
    plotly config as one JSON string (built once per tick and shared by every session that shows the
    same chart)."""
    config = {**plot_config(filename), "responsive": True}
    return json.dumps({"fig": fit_top(fig), "config": config}, separators=(",", ":"))


def live_plot_ui(payload: str, key: str) -> None:
    """Draw a :func:`live_payload` in an element keyed ``key`` (CSS class ``st-key-<key>``)."""
    _live_plot(data=payload, key=key)
