"""Real text: a small causal Transformer trained on real English, its attention watched live (Scan & Snap
Fig. 7: the lowest layer's attention becomes sparse; JoMA: sparser, then denser), the paper's open
questions as knobs (positional encoding, layers, sequence length, MLP kind)."""

import functools
from typing import TYPE_CHECKING

import streamlit as st

from scansnap.kinds.text.ui import actions as text_actions
from scansnap.kinds.text.ui import state as text_state
from scansnap.kinds.text.ui.door import text_door
from scansnap.kinds.text.ui.live import text_live_area
from scansnap.kinds.text.ui.state import TEXT_KNOBS
from scansnap.paper.items.costs import about
from scansnap.paper.presets import load_presets
from scansnap.service.facade import ServiceError
from scansnap.ui import follow, run_bar, session
from scansnap.ui.errors import show_callback_error
from scansnap.ui.resources import service
from scansnap.ui.run_list import step_text
from scansnap.ui.text import code, plain, quoted_words
from scansnap.ui.widgets import knob_ui, lecture_on, preset_select, recovery_ui, share_ui

if TYPE_CHECKING:
    from scansnap.kinds.text.science.config import TextRunConfig

ss = st.session_state
followed = follow.resolve("text")  # a student's page: ?follow=CODE opens the lecturer's newest run
for problem in text_state.init_state():
    st.warning(plain(problem))
lecture = lecture_on()
cfg = ss["text.cfg"]
W = text_state.wkey
SOURCES = {"builtin": "built-in: World English Bible", "upload": "my .txt upload", "wikitext-dir": "WikiText folder"}
INTRO = (
    "A small causal Transformer (embedding, positional encoding, self-attention, MLP) learns to predict the "
    "next word of real English. Scan & Snap (Fig. 7) predicts that the lowest layer's attention becomes "
    "**sparse**: its entropy falls. JoMA predicts **sparser, then denser**: a drop, then a partial rebound."
)


def knobs_ui(section: str, title: str | None) -> None:
    knobs = [k for k in TEXT_KNOBS if k.section == section and k.key != "data.source" and not (lecture and k.advanced)]
    if title:
        st.subheader(title)
    for knob in knobs:
        on_change = functools.partial(text_actions.on_knob, key=W(knob.key))
        knob_ui(knob, cfg, W(knob.key), on_change, text_state.SCHEMA)


def corpus_ui() -> None:
    """Which text: built-in, an upload, or a folder the operator offers; its sizes once measured."""
    st.subheader("Corpus")
    folders = text_door().wikitext_folders()
    options = [s for s in SOURCES if s != "wikitext-dir" or folders]
    source = cfg["data"]["source"] if cfg["data"]["source"] in options else options[0]
    knob = next(k for k in TEXT_KNOBS if k.key == "data.source")
    st.selectbox(
        "corpus",
        options,
        index=options.index(source),
        key=W("data.source"),
        format_func=lambda x: SOURCES[x],
        on_change=lambda: text_actions.on_knob(knob, ss[W("data.source")], W("data.source")),
        help=f"WikiText folders appear when the operator sets {text_door().CORPUS_DIR_ENV}",
    )
    if source == "wikitext-dir":
        path = str(cfg["data"]["path"] or "")
        names = folders if any(path.endswith(f"/{f}") or path == f for f in folders) else [path, *folders]
        st.selectbox(
            "WikiText folder",
            names,
            key=W("data.path"),
            on_change=text_actions.on_folder,
            args=(W("data.path"),),
            format_func=lambda p: p.rsplit("/", 1)[-1],
        )
    if source == "upload":  # any file name: a wrong one gets save_upload's message, not Streamlit's generic error
        st.file_uploader(
            "a .txt file (UTF-8 English text)",
            type=None,
            key=W("upload"),
            on_change=text_actions.on_upload,
            args=(W("upload"),),
            help=f"at most {upload_mb()} MB here (the server's upload limit) and at least "
            f"{text_door().MIN_UPLOAD_TOKENS:,} words; the last 10 % is the validation text",
        )
        if cfg["data"]["upload_name"]:
            st.caption(f"Training on {code(cfg['data']['upload_name'])}.")
    knobs_ui("data", None)
    corpus_summary_ui()


def upload_mb() -> int:
    """The largest upload this server takes: Streamlit's server.maxUploadSize, at most the engine's 20 MiB."""
    return int(min(st.get_option("server.maxUploadSize"), text_door().MAX_UPLOAD_BYTES // 2**20))


def corpus_summary_ui() -> None:
    valid, _ = text_state.validate(cfg)
    if valid is None:
        return
    try:
        c = text_door().text_corpus(valid.data)
    except ServiceError as e:
        st.error(plain(str(e)))
        return
    top = ", ".join(f"{quoted_words([w])} ({n:,})" for w, n in c["top_tokens"][:6])
    st.caption(
        f"{plain(c['description'])}. **{c['train_tokens']:,}** training and {c['val_tokens']:,} validation words, "
        f"vocabulary {c['vocab_size']:,}; most frequent: {top}."
    )


def controls_ui(valid: bool) -> None:
    """The control bar and, but on a lecture's screen (below the run there), whose run a viewer watches
    (:mod:`scansnap.ui.run_bar`, as the Lab's); a student's page says whose runs it follows instead."""
    if followed is not None:
        follow.following_ui(followed, "text", "text")
        return
    run_bar.control_bar(text_actions.RUN, text_actions.new_seed, W, "text", valid)
    if not lecture:
        run_bar.viewer_caption(text_actions.RUN, valid)


def recovery_and_budget_ui(run_cfg: "TextRunConfig | None") -> bool:
    """An interrupted run's recovery; the budget of the config on screen.  False if Start must wait."""
    rid = ss.get("text.run")
    info = service().run(rid) if rid else None
    if rid and info is not None and info["status"] == "interrupted" and not service().is_live(rid):
        st.warning(f"Run `{rid}` was interrupted at step {info['last_step'] or 0}: {info['message'] or ''}", icon="⚠️")
        recovery_ui(info, "text", session.owns(rid))
    if run_cfg is None:
        return False
    try:
        est = service().check(run_cfg)
    except ServiceError as e:
        st.error(f"Start is off: {plain(str(e))}", icon="🚫")
        return False
    seconds = service().expected_seconds(run_cfg)
    ss["text.estimate"] = (
        f"Expected time: {about(seconds)} on one training slot ({run_cfg.optim.steps:,} steps). This run needs "
        f"{est.describe()} and ~{est.work:.1e} floating-point operations."
    )
    return True


def live_now_ui() -> None:
    for r in service().live_broadcasts(kind="text"):
        st.page_link(
            "kinds/text/ui/page.py",
            label=f"📡 {plain(r['name'], limit=40)} · step {step_text(r['step'])}",
            query_params={"run": r["id"]},
            disabled=r["id"] == ss.get("text.run"),
        )


def preset_ui() -> None:
    presets = load_presets("text")
    cur = ss["text.preset"]
    preset_select("Preset", presets, cur, W("preset"), text_actions.on_preset)
    if not lecture:
        st.caption(presets[cur].description)


with st.sidebar:
    live_now_ui()
    preset_ui()
    corpus_ui()
    knobs_ui("model", "Model")
    knobs_ui("train", "Training")

run_cfg, error = text_state.validate(cfg)
intro_first = not lecture and not ss.get("text.run")  # a run's first screen is its story and charts: intro below
if intro_first:
    st.title("Real text")
    st.markdown(INTRO)
ok = recovery_and_budget_ui(run_cfg)
controls_ui(ok)
if ok and intro_first:
    st.caption(ss["text.estimate"])
show_callback_error()
if error:
    st.error(f"Fix this to enable Start — {plain(error)}", icon="🚫")
if ss.get("text.error"):
    st.error(plain(ss["text.error"]))
if followed is None or followed.run is not None:  # a student waiting for the first run sees only that
    text_live_area()
if lecture and followed is None:
    run_bar.viewer_caption(text_actions.RUN, ok)
if not intro_first:
    st.markdown(INTRO)
    if ok:
        st.caption(ss["text.estimate"])


share_ui("text-share", {**st.query_params.to_dict()}, run_cfg)
