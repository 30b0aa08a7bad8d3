"""Lab: design the data, turn the training knobs, run, and watch the story next to the theory."""

import functools

import pandas as pd
import streamlit as st

from scansnap.kinds.synthetic.ui import actions as lab_actions
from scansnap.kinds.synthetic.ui import state as lab_state
from scansnap.kinds.synthetic.ui.chart_list import CHART_KEYS, TITLES
from scansnap.kinds.synthetic.ui.live import live_area
from scansnap.paper.presets import load_presets
from scansnap.service.facade import MAX_CONFIG_BYTES
from scansnap.ui import follow, run_bar, session
from scansnap.ui.errors import show_callback_error
from scansnap.ui.knobs import KNOBS, RATIOS, visible
from scansnap.ui.page_data import p_preview
from scansnap.ui.resources import service
from scansnap.ui.run_list import step_text
from scansnap.ui.text import plain
from scansnap.ui.widgets import LIVE_STYLE, font, knob_ui, lecture_on, plot_ui, preset_select, recovery_ui, share_ui

ss = st.session_state
followed = follow.resolve("synthetic")  # a student's page: ?follow=CODE opens the lecturer's newest run
for problem in lab_state.init_state():
    st.warning(plain(problem))  # URL text: shown as typed, never as a link or an image
lecture = lecture_on()
st.html(f"<style>{LIVE_STYLE}</style>")  # the control bar and the chart grids
show = set(st.query_params["show"].split(",")) if "show" in st.query_params else None
cfg = ss["lab.cfg"]
W = lab_state.wkey
PREVIEW_MAX_CELLS = 1_000_000  # P(l|n) entries built for a preview (8 MB): larger problems are not previewed


def knobs_ui(section: str, title: str) -> None:
    """The section's visible knobs under its heading (no heading when a lesson's show= hides them all)."""
    knobs = [k for k in KNOBS if k.section == section and visible(k, cfg, lecture, show)]
    if knobs:
        st.subheader(title)
    for knob in knobs:
        if knob.key == "optim.eta_y" and ss.get("lab.lock"):
            st.caption(f"η_Y = {ss['lab.lock']:g} × η_Z = {cfg['optim']['eta_y']:g} (ratio locked)")
            continue
        if knob.key == "optim.eta_z" and cfg["replicas"].get("lr_pairs"):
            st.warning(
                f"This setup trains {len(cfg['replicas']['lr_pairs'])} (η_Y, η_Z) pairs (replicas.lr_pairs): "
                "the η knobs below are not used. Sweep them on the Sweep page."
            )
        knob_ui(knob, cfg, W(knob.key), functools.partial(lab_actions.on_knob, key=W(knob.key)), lab_state.SCHEMA)
        if knob.key == "optim.eta_z" and (show is None or "lock" in show):
            ratio_ui()


def ratio_ui() -> None:
    locked = st.toggle(
        "lock η_Y/η_Z", value=bool(ss.get("lab.lock")), key=W("lock"), on_change=lab_actions.on_lock, args=(W("lock"),)
    )
    if locked:
        st.select_slider(
            "η_Y/η_Z",
            options=list(RATIOS),
            value=ss["lab.lock"],
            key=W("ratio"),
            format_func=lambda x: f"{x:g}",
            on_change=lab_actions.on_ratio,
            args=(W("ratio"),),
        )


def table_ui() -> None:
    """Explicit P(l|n): one row per next token n (psi = its query index), one column per token."""
    base_key = f"table_base{ss['lab.rev']}"
    if base_key not in ss:
        table, psi = cfg["data"]["table"] or [[1.0]], cfg["data"]["psi"] or [0]
        df = pd.DataFrame(table, columns=[f"l{j}" for j in range(len(table[0]))])
        df.insert(0, "psi", psi)
        ss[base_key] = df
    st.caption("Edit P(l|n) (rows are normalised; 0 = token not in supp(n)); add or delete rows for classes.")
    edited = st.data_editor(ss[base_key], key=W("table"), num_rows="dynamic", hide_index=False)
    tokens = [c for c in edited.columns if c != "psi"]
    table = edited[tokens].astype(float).fillna(0.0).to_numpy().tolist()
    psi = [int(x) if pd.notna(x) else -1 for x in edited["psi"]]
    lab_actions.on_table(table, psi)


def controls_ui(valid: bool) -> None:
    """The control bar (:mod:`scansnap.ui.run_bar`); a student's page, which watches, says whose runs it follows."""
    if followed is not None:
        follow.following_ui(followed, "lab", "synthetic")
    else:
        run_bar.control_bar(lab_actions.RUN, lab_actions.new_seed, W, "btn", valid)


def interrupted_ui() -> None:
    """An interrupted run on screen: offer to resume it from its checkpoint or re-run it."""
    rid = ss.get("lab.run")
    info = service().run(rid) if rid else None
    if info is None or info["status"] != "interrupted" or service().is_live(rid):
        return
    st.warning(f"Run `{rid}` was interrupted at step {info['last_step'] or 0}: {info['message'] or ''}", icon="⚠️")
    recovery_ui(info, "lab", session.owns(rid))


def uploads_ui() -> None:
    """Load a config (JSON) or, in table mode, P(l|n) (CSV); download P(l|n) as CSV."""
    st.file_uploader(
        "Load a config (JSON)",
        type=None,  # any name: a wrong one gets the message of check_upload_name, not Streamlit's generic error
        key=W("upload.cfg"),
        on_change=lab_actions.on_config_upload,
        args=(W("upload.cfg"),),
        help=f"a run config as the Runs page's 'config JSON' download writes it "
        f"(schema in docs/explore.md); at most {MAX_CONFIG_BYTES // 1024} KiB. It replaces the Lab's config.",
    )
    if cfg["data"].get("source") == "table":
        st.file_uploader(
            "Load P(l|n) from CSV",
            type=None,  # any name, checked by on_table_upload (as above)
            key=W("upload.csv"),
            on_change=lab_actions.on_table_upload,
            args=(W("upload.csv"),),
            help="one row per next token n: psi (its query index), then P(l|n) for each contextual "
            "token l; an optional header row starts with psi",
        )
        valid, _ = lab_state.validate(cfg)
        if valid is not None and valid.data.table and valid.data.psi:
            table, psi = [list(r) for r in valid.data.table], list(valid.data.psi)
            st.download_button(
                "Download P(l|n) as CSV",
                data=lambda: service().door("synthetic").table_to_csv(table, psi),
                file_name="scansnap-P.csv",
                mime="text/csv",
                on_click="ignore",
                key="lab.csv",
            )
    if ss.get("lab.upload_error"):
        st.error(plain(ss["lab.upload_error"]))


def live_now_ui() -> None:
    live = service().live_broadcasts()
    if not live:
        return
    st.subheader("📡 Live now")
    for r in live:
        st.page_link(
            "kinds/synthetic/ui/page.py",
            label=f"{plain(r['name'], limit=40)} · step {step_text(r['step'])} · {r['id']}",  # a name is text only
            query_params={"run": r["id"]},
            disabled=r["id"] == ss.get("lab.run"),
        )


def preset_ui() -> None:
    """The preset picker, and what is on screen: the preset's description, or the opened run's own
    config (its name, and the preset it started from)."""
    presets = load_presets()
    cur = ss["lab.preset"]
    origin = ss.get("lab.origin")
    if origin:
        st.markdown(f"**Run: {plain(origin['name'], limit=60)}** (`{origin['id']}`)")
    preset_select("Preset" if not origin else "Start from a preset", presets, cur, W("preset"), lab_actions.on_preset)
    if origin:
        st.caption(f"The knobs below are this run's own config (it started from “{presets[cur].title}”).")
    else:
        st.caption(presets[cur].description)


def charts_picker_ui() -> None:
    """Which live charts are shown (kept in the link)."""
    chosen = ss.get("lab.view", {}).get("charts") or CHART_KEYS
    key = W("charts")
    st.multiselect(
        "Charts shown",
        CHART_KEYS,
        default=[k for k in CHART_KEYS if k in chosen],
        format_func=TITLES.get,
        key=key,
        on_change=lambda: lab_state.set_view("charts", tuple(ss[key]) if 0 < len(ss[key]) < len(CHART_KEYS) else None),
    )


run_cfg, error = lab_state.validate(cfg)
on_screen = bool(ss.get("lab.run"))  # a run's story and first chart fit the first screen (1440×900, sidebar open)
if not lecture and not on_screen:  # a lecture's screen, and a run's, start with the control bar
    st.title("Lab")
controls_ui(run_cfg is not None)
# The sidebar after the control bar: the browser loads each widget type's code as it first meets it,
# so the bar's buttons come before the knobs' inputs (bench/first_paint.py).
with st.sidebar:
    live_now_ui()
    preset_ui()
    if show is None:  # a lecture's ?show= list keeps the sidebar to the knobs it names
        uploads_ui()
    knobs_ui("data", "Data")
    knobs_ui("train", "Training")
    if show is None or "charts" in show:
        st.subheader("View")
        charts_picker_ui()
show_callback_error()
interrupted_ui()
if error:
    st.error(f"Fix this to enable Start — {error}", icon="🚫")
if ss.get("lab.error"):
    st.error(plain(ss["lab.error"]))
if cfg["data"].get("source") == "table" and (show is None or "data.table" in show):
    with st.expander("P(l|n) table", expanded=True):
        table_ui()
    run_cfg, error = lab_state.validate(cfg)  # the table just edited: the preview shows it now, not a rerun later


def preview_ui() -> None:
    if run_cfg is None:
        return
    with st.expander("Data designer preview: P(l|n)", expanded=not ss.get("lab.run")):
        cells = run_cfg.data.table_cells  # from the config alone: nothing is built yet
        if cells > PREVIEW_MAX_CELLS:
            st.info(
                f"P(l|n) has K × M_ctx = {cells:,} entries: too many to preview "
                f"(at most {PREVIEW_MAX_CELLS:,}). Start checks whether it fits this server's budget."
            )
        else:
            plot_ui(p_preview(run_cfg.data.model_dump_json(), font()), "lab-preview", "scansnap-P-preview")


if not lecture and not on_screen and followed is None:
    preview_ui()
if followed is None or followed.run is not None:  # a student waiting for the first run sees only that
    live_area(load_presets()[ss["lab.preset"]].title)
if (lecture or on_screen) and followed is None:  # a run's story and charts come first
    run_bar.viewer_caption(lab_actions.RUN, run_cfg is not None)
    preview_ui()

share_ui("lab-share", {**st.query_params.to_dict()}, run_cfg)
