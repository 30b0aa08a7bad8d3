"""The Lab's live charts in page order: key (the URL's ``charts`` list), download name, what each depends on,
and its title in words.  Plain data, read by the URL parser (:mod:`scansnap.kinds.synthetic.ui.state`) and
the chart builders (:mod:`scansnap.kinds.synthetic.ui.charts`) alike."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chart:
    key: str
    file: str  # PNG download name
    shows: str  # the selection it depends on: "n", "q" or ""
    title: str  # what it shows, in words (the chart picker; the placeholder before the first snapshot)
    tokens: bool = False  # needs the per-token history (absent for top-k runs)


CHARTS = (
    Chart("cn", "c_n-over-time", "n", "Attention c(l | n) over time", tokens=True),
    Chart("B", "snap-vs-theorem4", "n", "The snap: the common token's logit drop and the total growth B̂"),
    Chart("H", "entropy_distinct", "", "Attention entropy on distinct tokens"),
    Chart("cnh", "c_n-heatmap", "", "Attention c_n of every next token", tokens=True),
    Chart("z", "z-trajectories", "q", "Attention logits z(m, l)", tokens=True),
    Chart("bracket", "theorem3-bracket", "n", "Theorem 3: the winner's logit change Δz in its bracket"),
    Chart("loss", "loss-accuracy", "", "Loss and accuracy"),
)
TITLES = {c.key: c.title for c in CHARTS}
CHART_KEYS = tuple(c.key for c in CHARTS)
