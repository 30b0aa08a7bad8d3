"""Theory: Theorem 4's phase transition, JoMA's entropy bounce, and the four stages in words."""

from typing import TYPE_CHECKING

import streamlit as st

from scansnap.paper.presets import load_presets
from scansnap.ui import charts_pages
from scansnap.ui.page_data import joma_pair, preset_constants, theorem4_curve, theorem4_t0
from scansnap.ui.widgets import font, plot_ui

if TYPE_CHECKING:
    from scansnap.kinds.synthetic.science.calibration import Theorem4Constants

st.title("Theory")

STAGES = [
    (
        "1 · Common tokens are suppressed (Thm 2b)",
        r"\dot z_{ml} = -\eta_Z \sum_{n\in\psi^{-1}(m)} (1-f_{nl}^2)\,\xi_n < 0 \quad (l \in G_{CT})",
        "A token that co-occurs with several next tokens carries no information about which one comes: "
        "its attention logit goes down.",
        "syn-small",
    ),
    (
        "2 · Winners emerge (Thm 2a, Thm 3)",
        r"\dot z_{ml} = \eta_Z f_{nl}^2\,\xi_n > 0,\qquad r_{l/l'|n}(t) = r_{l/l'|n}(0)\,e^{2(z_{ml}(t)-z_{ml}(0))}",
        r"Distinct tokens grow, and faster the larger their initial $\tilde c_l = P(l \mid n)\,e^{z_{ml}}$: the "
        "relative gain of the most frequent distinct token only increases (frequency bias).",
        "syn-small",
    ),
    (
        r"3 · Scanning: t < t′₀ = K ln M / $\eta_Y$",
        r"B_n(t) = \tfrac14 \ln\!\Big(C_0 + \tfrac{2(M-1)^2}{KM^2}\,\eta_Y\eta_Z\,t^2\Big) = O(\ln t)",
        "While the decoder is still learning, the attention keeps sharpening at a logarithmic pace.",
        "theorem4",
    ),
    (
        r"4 · Snapping: t ≥ t₀ = 2(1+o(1)) K ln M / $\eta_Y$",
        r"B_n(t) = \tfrac14 \ln\!\Big(C_0 + \tfrac{2K(M-1)^2}{M^2}\tfrac{\eta_Z}{\eta_Y}\ln^2\tfrac{M\eta_Y t}{K}\Big)"
        r" = O(\ln\ln t)",
        r"Once the decoder has converged, $B_n$ grows only like ln ln t: the attention pattern is frozen. A larger "
        r"$\eta_Z$ gives sparser attention; a larger $\eta_Y$ an earlier snap and denser attention.",
        "theorem4",
    ),
]


def stages_ui() -> None:
    presets = load_presets()
    for title, eq, text, preset in STAGES:
        name = preset if preset in presets else "syn-small"
        with st.container(border=True):
            st.markdown(f"**{title}**")
            st.latex(eq)
            st.markdown(text)
            if st.button(f"Open the Lab with “{presets[name].title}”", key=f"stage.{title[:1]}"):
                st.switch_page("kinds/synthetic/ui/page.py", query_params={"preset": name})


C0_SOURCES = ("a preset's initial state", "ρ₀ (C₀ = ρ₀⁴/K)", "a value of C₀")


def theorem4_ui() -> None:
    st.subheader("Theorem 4 explorer")
    source = st.radio("take C₀ from", C0_SOURCES, horizontal=True, key="th.src")
    preset = _preset_picker() if source == C0_SOURCES[0] else None
    consts = preset_constants(preset) if preset else None
    fixed = consts is not None
    pc = load_presets()[preset].config if fixed else None
    c = st.columns(6)
    M = c[0].number_input("M (vocabulary)", 2, 10**7, consts.M if fixed else 100, key=f"th.M.{preset}", disabled=fixed)
    K = c[1].number_input("K (next tokens)", 1, 10**5, consts.K if fixed else 1, key=f"th.K.{preset}", disabled=fixed)
    ey, ez = (pc.optim.eta_y, pc.optim.eta_z) if pc else (5.0, 0.5)
    eta_y = c[2].number_input("η_Y", 1e-4, 1e4, ey, format="%g", key=f"th.ey.{preset}", disabled=fixed)
    eta_z = c[3].number_input("η_Z", 1e-4, 1e4, ez, format="%g", key=f"th.ez.{preset}", disabled=fixed)
    C0, note = _c0_input(c[4], source, consts, int(K))
    mode = c[5].radio("x axis", charts_pages.AXES, index=1, key="th.axis", horizontal=False)
    t0 = theorem4_t0(M, K, eta_y)
    tmax = st.slider("t max (in units of t₀)", 1.0, 100.0, 10.0, key="th.tmax") * t0
    th = theorem4_curve(float(M), float(K), eta_y, eta_z, C0, tmax)
    fig = charts_pages.theorem4(th, mode, M, K, eta_y, font())
    plot_ui(fig, "th-thm4", f"theorem4-M{M}-K{K}-ey{eta_y:g}-ez{eta_z:g}-C0{C0:.3g}")
    st.caption(
        f"{note} t′₀ = {th['t0_prime']:.3g}, t₀ = {th['t0']:.3g} (theory time: single-sample updates); "
        f"$B_n(t_0)$ = {th['B_t0']:.3f}. Fig. 9 of the paper: M=100, K=1, $\\eta_Y = 10\\,\\eta_Z$, C₀ = 1 (left)."
    )
    if preset and st.button(f"Open the Lab with “{load_presets()[preset].title}”", key="th.open"):
        st.switch_page("kinds/synthetic/ui/page.py", query_params={"preset": preset})


def _preset_picker() -> str | None:
    """A preset with a common token and ≥ 2 next tokens (Theorem 4's ρ_0 needs both)."""
    names = [n for n in load_presets() if preset_constants(n) is not None]
    if not names:
        st.info("No preset has a common token and two next tokens: choose ρ₀ or a value.")
        return None
    pick = "theorem4" if "theorem4" in names else names[0]
    return st.selectbox(
        "preset", names, index=names.index(pick), key="th.preset", format_func=lambda n: load_presets()[n].title
    )


def _c0_input(col, source: str, consts: "Theorem4Constants | None", K: int) -> tuple[float, str]:
    """C₀ and a sentence on where it comes from."""
    if consts is not None:
        col.metric("C₀ = ρ₀⁴/K", f"{consts.C0_paper:.4g}")
        return consts.C0_paper, (
            f"From the preset's initial state (zero init): ρ₀² = 1/ρ(0) = {consts.rho0_sq:.4g}, "
            f"C₀ = ρ₀⁴/K = {consts.C0_paper:.4g}; M, K, $\\eta_Y$, $\\eta_Z$ are the preset's."
        )
    if source == C0_SOURCES[1]:
        rho0 = col.number_input("ρ₀", min_value=1e-3, max_value=1e3, value=1.0, format="%g", key="th.rho0")
        C0 = rho0**4 / K
        return C0, f"ρ₀ = {rho0:g}: C₀ = ρ₀⁴/K = {C0:.4g}."
    C0 = col.number_input("C₀", min_value=1e-6, max_value=1e6, value=1.0, format="%g", key="th.C0")
    return C0, f"C₀ = {C0:g} (a free constant)."


def joma_ui() -> None:
    st.subheader("JoMA: sparser, then denser")
    c = st.columns(3)
    iters = c[0].slider("iterations", 500, 20000, 5000, step=500, key="jo.it")
    tau = c[1].slider("temperature τ", 0.5, 10.0, 3.0, key="jo.tau")
    eta = c[2].select_slider("step η", [0.005, 0.01, 0.02, 0.05, 0.1], value=0.02, key="jo.eta")
    lin, non = joma_pair(iters, tau, eta)
    plot_ui(charts_pages.joma(lin, non, font()), "th-joma", f"joma-entropy-tau{tau:g}")
    st.markdown(
        r"Linear activation: $\dot v = \tfrac1A\,\Delta\circ e^{v^2/2}$ — the most salient component "
        r"takes all, entropy only falls. Nonlinear: $\dot v = \tfrac1A(\mu-v)\circ e^{v^2/2}$ — salient "
        "components converge first, then the others catch up: the entropy **bounces back**."
    )


tab1, tab2, tab3 = st.tabs(["Four stages", "Theorem 4", "JoMA"])
with tab1:
    stages_ui()
with tab2:
    theorem4_ui()
with tab3:
    joma_ui()
