"""The Real text page's figures: what each trace holds (no streamlit)."""

from __future__ import annotations

import numpy as np

from scansnap.kinds.text.paper.text_view import drop_rebound
from scansnap.kinds.text.ui import charts as text_charts


def test_entropy_chart_marks_the_minimum_and_the_rebound_only_where_measured():
    steps = np.arange(0, 110, 10)
    # L0: drop 0.5 then rebound 0.4 (both ≥ 0.1 nats, on the smoothed curve); L1 falls by 0.05 only: no marker
    L0 = [2.5, 2.2, 2.0, 2.0, 2.0, 2.1, 2.2, 2.3, 2.4, 2.4, 2.4]
    L1 = [2.5, 2.48, 2.47, 2.46, 2.45, 2.45, 2.45, 2.45, 2.45, 2.45, 2.45]
    H = np.stack([L0, L1], axis=1)
    marks = [drop_rebound(steps, H[:, k]) for k in range(2)]
    fig = text_charts.entropy_chart(steps, H, 2.63, marks, 15)
    by_name = {t["name"]: t for t in fig["data"]}
    assert by_name["layer 0"]["y"] == L0 and by_name["layer 1"]["x"] == steps.tolist()
    assert by_name["uniform attention (2.63)"]["y"] == [2.63, 2.63]
    low, high = by_name["measured minimum (JoMA: sparser)"], by_name["measured rebound (JoMA: denser)"]
    assert (low["x"], low["y"], low["text"]) == ([20], [2.0], ["0"])
    assert (high["x"], high["y"], high["text"]) == ([100], [2.4], ["0"])


def test_attention_map_labels_words_and_leaves_the_masked_half_blank():
    a = np.tril(np.full((4, 4), 0.25, dtype=np.float32))
    words = ["the", "cat", "the", "mat"]  # a repeated word keeps its own row and column
    fig = text_charts.attention_map(a, words, "layer 0", 15, "k")
    z = fig["data"][0]["z"]
    assert z[0] == [0.25, None, None, None] and z[3] == [0.25] * 4
    assert fig["layout"]["xaxis"]["ticktext"] == words and fig["layout"]["yaxis"]["tickvals"] == [0, 1, 2, 3]
    assert fig["layout"]["yaxis"]["autorange"] == "reversed"  # query 0 on top, as Fig. 7
    assert fig["data"][0]["zmin"] == 0 and fig["data"][0]["zmax"] == 1


def test_a_long_window_labels_every_kth_word():
    a = np.tril(np.ones((64, 64), dtype=np.float32)) / np.arange(1, 65)[:, None]
    fig = text_charts.attention_map(a, [f"w{i}" for i in range(64)], "layer 0", 15, "k")
    ticks = fig["layout"]["xaxis"]["tickvals"]
    assert len(ticks) <= text_charts.MAX_TOKEN_LABELS and ticks[:3] == [0, 2, 4]
