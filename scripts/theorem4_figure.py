"""Measured vs calibrated Theorem 4 on a preset: −Δz_common and B̂ against the step (log axis).

    PYTHONPATH=. .venv/bin/python scripts/theorem4_figure.py [--preset theorem4] [--out FILE]

Trains the preset (scansnap.kinds.synthetic.science.train.Trainer), computes the calibrated curves
(scansnap.kinds.synthetic.science.calibration) and the printed Eqn. 129 in engine units, marks the predicted t'_0,
t_0 and the measured snap step (scansnap.kinds.synthetic.science.theory_checks), and writes a PNG when kaleido is
installed, else a self-contained HTML file and, where Playwright and Chromium are there, a
screenshot of it as PNG.  Prints the numbers it plots.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.kinds.synthetic.science import calibration as cal
from scansnap.kinds.synthetic.science import theory_checks as tc
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.presets import get_preset


def measure(preset: str) -> dict:
    cfg = get_preset(preset).config
    t_start = time.perf_counter()
    tr = Trainer(cfg)
    snaps = list(tr.run())
    seconds = time.perf_counter() - t_start
    pb, z0 = tr.problem, tr.Z0[0].double().numpy()
    steps = np.array([s.step for s in snaps])
    B = np.array([s.scalars["B_hat"][0].mean() for s in snaps])
    dz = cal.dz_common(np.array([s.arrays["z"][0] for s in snaps]), z0, pb.psi, pb.common_mask).mean(1)
    c = cal.theorem4_constants(pb.P, pb.psi, pb.common_mask, z0, pb.M_out)
    theory = cal.calibrated_curves(steps, c, cfg.optim.eta_y, cfg.optim.eta_z, cfg.optim)
    printed = cal.printed_curves(steps, c, cfg.optim.eta_y, cfg.optim.eta_z)
    return {"steps": steps, "B": B, "dz": dz, "theory": theory, "printed": printed, "seconds": seconds}


def figure(m: dict, preset: str) -> go.Figure:
    th, pr, steps = m["theory"], m["printed"], m["steps"]
    x = np.maximum(steps, 0.5)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("−Δz of the common token", "B̂ (pooled Δz_l/f_l²)"))
    panels = ((m["dz"], th.dz_common_theory, pr["dz_common"]), (m["B"], th.B_theory, pr["B"]))
    for col, (meas, calib, printed) in enumerate(panels, start=1):
        show = col == 1
        dots = {"size": 6, "color": "#1f77b4", "symbol": "circle-open"}
        fig.add_scatter(x=x, y=meas, mode="markers", name="measured", marker=dots, row=1, col=col, showlegend=show)
        name = f"calibrated Thm 4 (ρ₀² = {th.constants.rho0_sq:.3g})"
        fig.add_scatter(
            x=x, y=calib, mode="lines", name=name, line={"color": "#d62728"}, row=1, col=col, showlegend=show
        )
        fig.add_scatter(
            x=x,
            y=printed,
            mode="lines",
            line={"dash": "dot", "color": "grey"},
            name="Eqn. 129 in engine units (C₀' = Nc·K·ρ₀⁴/(K_m(K−1)))",
            row=1,
            col=col,
            showlegend=show,
        )
        snap = tc.measured_snap_step(steps, meas)
        marks = [(th.t0_prime, "t'₀ predicted", "dash"), (th.t0, "t₀ predicted", "dash")]
        marks += [(snap, "snap measured", "solid")] if snap else []
        top = float(np.nanmax(meas))
        for t, label, dash in marks:
            line = {"dash": dash, "width": 1, "color": "black"}
            fig.add_scatter(x=[t, t], y=[0, top], mode="lines", line=line, showlegend=False, row=1, col=col)
            fig.add_annotation(
                x=np.log10(t),
                y=top,
                text=label,
                textangle=-90,
                xanchor="right",
                yanchor="top",
                showarrow=False,
                row=1,
                col=col,
            )  # annotations on a log axis take log10 positions
    fig.update_xaxes(type="log", title_text="step")
    fig.update_layout(title=f"Theorem 4, calibrated, on the {preset} preset", width=1100, height=450)
    return fig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="theorem4")
    ap.add_argument("--out", default="theorem4_calibration")
    args = ap.parse_args()
    m = measure(args.preset)
    ok, th = m["steps"] >= 10, m["theory"]
    for key, meas, calib in (("dz_common", m["dz"], th.dz_common_theory), ("B_hat", m["B"], th.B_theory)):
        err = np.max(np.abs(calib[ok] / meas[ok] - 1))
        snap = tc.measured_snap_step(m["steps"], meas)
        print(f"{key}: max relative error for t >= 10: {err:.4f}; measured snap step: {snap}")
    print(f"predicted t'_0 = {th.t0_prime:.1f}, t_0 = {th.t0:.1f}; training took {m['seconds']:.1f} s")
    write(figure(m, args.preset), Path(args.out))


def write(fig: go.Figure, out: Path) -> None:
    """PNG with kaleido; else a self-contained HTML, and a PNG screenshot of it by Chromium if
    Playwright and Debian's Chromium are there (as the browser tests use them)."""
    png, html = out.with_suffix(".png"), out.with_suffix(".html")
    if importlib.util.find_spec("kaleido"):
        fig.write_image(png)
        print(f"wrote {png}")
        return
    fig.write_html(html, include_plotlyjs=True)
    print(f"wrote {html} (kaleido is not installed)")
    try:
        from playwright.sync_api import sync_playwright

        from bench.webserver import launch_chromium

        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1120, "height": 470})
            page.goto(html.resolve().as_uri())
            page.wait_for_selector(".main-svg")
            page.screenshot(path=str(png))
            browser.close()
        print(f"wrote {png} (Chromium screenshot of the HTML)")
    except (ImportError, RuntimeError) as e:
        print(f"no PNG: {e}")


if __name__ == "__main__":
    main()
