"""A Plotly chart that updates in place (``Plotly.react`` on a persistent div).

Why: in Streamlit 1.67 ``st.plotly_chart`` hashes the figure spec into the element id, so
every data change remounts the chart (measured: a remount on every 0.5 s tick), which
flickers and resets the user's zoom whatever ``uirevision`` says.  This ``components.v2``
component keeps its div across reruns and calls ``Plotly.react``, so ``layout.uirevision``
preserves zoom and pan while the run streams in.  It uses the plotly.js that Streamlit's own
chart element loads (``window.Plotly``): :func:`plotly_loader_ui` keeps a hidden
``st.plotly_chart`` on the page for that, and the component waits until the library is there.
In lecture mode the browser sets the height of the story's charts to fill the screen (``fitHeight``).
Charts are drawn from a page-wide queue (see ``_JS``), one tick at a time: a tick of the timer in one
task (every paint shows its charts at one step), a new view (another n picked) one chart per task,
the c_n chart first: measured in ``bench/ui_latency.py``, drawing one chart per task shortens the
time from picking n to the c_n chart showing it.
"""

from __future__ import annotations

import json

import streamlit as st

from scansnap.ui.chart_style import Spec, fit_top, plot_config

_JS = """
// One queue for every live chart of the page, drawn in passes, one tick at a time.  A pass takes every
// chart waiting when it begins.  A tick of the timer (the same view, a newer step) is drawn in one
// task, so that every paint shows all its charts at the same step; only when input is waiting
// (navigator.scheduling.isInputPending) does the pass yield between two charts.  A new view (another
// n picked, a scrub: ``data.view`` changed) is drawn one chart per task, the first on the page first,
// so the c_n chart answers the pick without waiting for the other charts.  Data of the tick being
// drawn joins the pass; data of a newer tick waits for the next one, so no chart falls more than a
// pass behind.  (The queue used to draw one chart per task, whichever waiting chart came first on the
// page: when drawing a tick took longer than a tick, it redrew the first charts with every tick while
// the heatmap fell ticks behind them, and the charts on screen showed different steps.)  Every payload
// names its tick and view; a chart whose newer data arrives before it was drawn is drawn once, with it.
const queue = window.__livefigTicks || (window.__livefigTicks = {
  pending: new Map(), pass: new Map(), tick: null, latest: null, view: null, shownView: null, busy: false,
});

function inputPending() {
  const s = navigator.scheduling;
  return !!(s && s.isInputPending && s.isInputPending());
}

function firstOnPage(charts) {
  let first = null;
  for (const div of charts.keys()) {
    if (!div.isConnected) charts.delete(div);
    else if (!first || (first.compareDocumentPosition(div) & Node.DOCUMENT_POSITION_PRECEDING)) first = div;
  }
  return first;
}

// Lecture mode: the charts of the story (in .st-key-lab-hero, .st-key-text-hero) fill the screen under the control bar,
// one row of three below 1600 px wide, two rows of two from 1600 px (scansnap/assets/live.css lays them out; below
// 1600 px with the sidebar open, two to a row, each as tall as the one row: a 2 x 2 screen would squash them).
const WIDE = 1600, GAP = 12, MIN_H = 300;
const HERO = '[class*="st-key-lab-hero"], [class*="st-key-text-hero"]';  // the Lab's, the Real text page's

function pageTop(el) {
  let y = el.getBoundingClientRect().top + window.scrollY;
  for (let p = el.parentElement; p; p = p.parentElement) y += p.scrollTop || 0;
  return y;
}

function fitHeight(div) {
  const hero = div.closest(HERO);
  if (!hero) return null;
  const rows = window.innerWidth >= WIDE ? 2 : 1;
  const free = window.innerHeight - pageTop(hero) - GAP;
  return Math.max(MIN_H, Math.floor((free - (rows - 1) * GAP) / rows));
}

// The legend sits right under the title, placed on the container (scansnap/ui/chart_style.py): at a new height
// it moves to keep the same distance in pixels from the top.
function legendAt(layout, h) {
  const lg = layout.legend;
  if (!lg || lg.yref !== 'container' || !layout.height) return {};
  return { 'legend.y': 1 - (1 - lg.y) * layout.height / h };
}

// A chart follows its place's width (a window resized, the sidebar opened or closed) and, on the lecture
// screen, the window's height.  Plotly's own "responsive" observer left charts drawn through a live run at
// their old width once the run had ended and the window narrowed (1920 -> 1280 px: five of seven still 722 px
// wide in 402-px places, drawn over each other; tests/e2e/test_chart_layout.py), so every live chart is
// refitted here.  A story chart gets its width and height set (a height alone fixes the chart at its old
// width); any other is autosized by plotly (Plots.resize).
function refit(div) {
  const width = Math.round(div.getBoundingClientRect().width);
  const full = div._fullLayout;
  if (!window.Plotly || !full || !div.layout || width === 0) return;  // not drawn yet, or hidden
  const h = fitHeight(div);
  if (h) {
    if (Math.abs(full.width - width) > 1 || full.height !== h) {
      window.Plotly.relayout(div, { width, height: h, ...legendAt(div.layout, h) });
    }
  } else if (Math.abs(full.width - width) > 1) {
    window.Plotly.Plots.resize(div).catch(() => {});  // rejected when hidden meanwhile: refitted when shown
  }
}

const fits = window.__livefigFits || (window.__livefigFits = new ResizeObserver((seen) => {
  for (const e of seen) refit(e.target);
}));

if (!window.__livefigResize) {
  window.__livefigResize = true;
  let timer = null;
  window.addEventListener('resize', () => {  // the window's height: the story charts' place does not change
    clearTimeout(timer);
    timer = setTimeout(() => { for (const div of document.querySelectorAll('div.livefig')) refit(div); }, 150);
  });
}

// A chart out of sight (more than half a screen above or below it) is not redrawn with every tick: its
// newest data waits on the div, and is drawn when the chart comes into sight (an IntersectionObserver
// sees it; scrolling, a resize or a layout change).  A chart's first drawing never waits.  Measured by
// bench/chart_sight.py (the Lab at 1280x720, its sidebar open, the Lecture preset at its pace; 2 cores):
// Plotly.react 245 -> 138 ms per tick, Chromium's renderer 1.0 -> 0.68 cores, with the three charts below
// the screen waiting.
const MARGIN = 0.5;
function outOfSight(div) {
  if (window.__livefigAllInSight) return false;  // bench/chart_sight.py's switch: every chart redrawn each tick
  const r = div.getBoundingClientRect(), h = window.innerHeight;
  return r.height > 0 && (r.bottom < -MARGIN * h || r.top > (1 + MARGIN) * h);
}

const sight = window.__livefigSight || (window.__livefigSight = new IntersectionObserver((seen) => {
  for (const e of seen) {
    const waiting = e.target.waiting;
    if (e.isIntersecting && waiting) { e.target.waiting = null; draw(e.target, waiting); }
  }
}));

function draw(div, data) {
  try {
    if (div.drawn !== undefined && div.drawn !== data.fig && outOfSight(div)) {
      div.waiting = data;  // drawn when it comes into sight
      return;
    }
    div.waiting = null;
    if (div.drawn !== data.fig) {
      div.drawn = data.fig;
      const spec = JSON.parse(data.fig);
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
}

function drawNext() {
  if (!window.Plotly) { setTimeout(drawNext, 100); return; }  // Streamlit's chart element loads it
  if (firstOnPage(queue.pass) === null) {  // a pass has ended: the next one takes what is waiting
    if (firstOnPage(queue.pending) === null) { queue.busy = false; queue.tick = null; return; }
    queue.pass = queue.pending;
    queue.pending = new Map();
    queue.tick = queue.latest.tick;
    queue.view = queue.latest.view;
  }
  const together = queue.view === queue.shownView;  // a tick of the timer: all its charts in this task
  let div = firstOnPage(queue.pass);
  while (div !== null) {
    draw(div, queue.pass.get(div));
    queue.pass.delete(div);
    div = firstOnPage(queue.pass);
    if (!together || inputPending()) break;
  }
  if (div === null) queue.shownView = queue.view;
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
    sight.observe(div);
    fits.observe(div);
  }
  if (div.drawn === data.fig && !div.waiting && !queue.pending.has(div) && !queue.pass.has(div)) return;  // unchanged
  queue.latest = data;
  if (queue.busy && data.tick === queue.tick) {  // the tick being drawn: this pass draws it
    queue.pending.delete(div);
    queue.pass.set(div, data);
  } else {
    queue.pending.set(div, data);  // a chart already waiting is drawn once, with the newer data
  }
  if (!queue.busy) {  // a tick of the timer starts 20 ms later: its charts' messages come one by one
    queue.busy = true;
    setTimeout(drawNext, data.view === queue.shownView ? 20 : 0);
  }
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


def live_plot_ui(payload: str, key: str, tick: str, view: str = "") -> None:
    """Draw a :func:`live_payload` in an element keyed ``key`` (CSS class ``st-key-<key>``).  ``tick`` names
    the run and step its charts were built at, ``view`` what they show (n, q, replica, the scrubbed step,
    the font): the same for every chart of a tick.  The browser draws a tick of the timer (same view) in
    one task, a new view chart by chart (see ``_JS``)."""
    _live_plot(data={"tick": tick, "view": view, "fig": payload}, key=key)


def plotly_loader_ui() -> None:
    """An empty, hidden ``st.plotly_chart`` outside the live fragment: Streamlit loads plotly.js
    with its own chart element, and the live charts (:func:`live_plot_ui`) draw with that library."""
    with st.container(key="plotly-loader"):
        st.html("<style>.st-key-plotly-loader { display: none; }</style>")
        st.plotly_chart(
            {"data": [{"type": "scatter", "x": [0], "y": [0]}], "layout": {"height": 10}}, key="plotly-loader-chart"
        )
