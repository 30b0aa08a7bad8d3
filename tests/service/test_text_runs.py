"""Real-text runs in the store: the scalar layout round trip, old databases, the stored maps, a
stopped-then-resumed run equal to an uninterrupted one, and the export."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from scansnap.kinds.text.service.runs import (
    MAP_MAX_T,
    MAX_HEAD_MAPS,
    TEXT_SCALARS,
    store_rows,
    stored_maps,
)
from scansnap.paper.presets import get_preset
from scansnap.service import runner
from scansnap.service.control import RunControl
from scansnap.service.export import export_run
from scansnap.service.run_kinds import create_run, kind_named
from scansnap.service.store import RunStore

# A small model on the built-in corpus: seconds, not minutes (2 layers × 2 heads, vocabulary 500).
SMALL = {
    "data.vocab_size": "500",
    "model.d_model": "16",
    "model.d_ff": "16",
    "model.n_layers": "2",
    "model.n_heads": "2",
    "model.device": "cpu",
    "optim.batch": "4",
    "optim.bptt": "8",
    "optim.steps": "40",
    "probe.val_windows": "2",
    "snapshots.linear_every": "5",
    "snapshots.log_count": "0",
}


def small_cfg(**extra: str):
    return get_preset("text-fig7-1layer", "text").config.with_overrides(SMALL | extra)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_scalar_rows_round_trip_through_the_store_and_the_export_frame(tmp_path):
    """(layer, head, metric, value) → the text table (layer, head; −1 for none) → back, <NA> for none."""
    rows = [
        (0, None, "attn_entropy", 2.5),  # layer 0, mean over heads
        (0, 0, "attn_entropy", 2.4),
        (0, 1, "attn_entropy", 2.6),
        (1, None, "attn_share_frequent", 0.3),
        (None, None, "val_loss", 6.0),  # run-level
        (None, None, "train_loss", float("nan")),
    ]
    assert store_rows(rows)[0] == (0, None, "attn_entropy", 2.5)
    assert store_rows(rows)[4] == (-1, None, "val_loss", 6.0)
    store = RunStore(tmp_path)
    rid = create_run(store, small_cfg())
    store.append_snapshot(rid, 7, {"attn_map_mean": np.zeros((2, 3, 3), np.float32)}, store_rows(rows))
    back = store.scalars(rid)
    assert list(back.columns) == ["step", "layer", "head", "metric", "value"]
    assert [str(back[c].dtype) for c in ("step", "layer", "head", "value")] == ["int64", "Int64", "Int64", "float64"]
    assert pd.api.types.is_string_dtype(back["metric"])
    con = sqlite3.connect(tmp_path / "runs.sqlite")  # the text kind's own table, not the synthetic one
    count = "SELECT count(*) FROM {} WHERE run_id = ?"
    assert con.execute(count.format(TEXT_SCALARS.name), (rid,)).fetchone()[0] == 4  # one block per metric (4)
    assert con.execute(count.format("scalar_blocks"), (rid,)).fetchone()[0] == 0
    con.close()
    got = [
        (None if pd.isna(r.layer) else int(r.layer), None if pd.isna(r.head) else int(r.head), r.metric, r.value)
        for r in back.itertuples()
    ]
    assert got[:5] == rows[:5] and got[5][:3] == rows[5][:3] and np.isnan(got[5][3])
    assert (back["step"] == 7).all()


def test_text_runs_have_their_kind_and_old_databases_read_as_synthetic(tmp_path):
    con = sqlite3.connect(tmp_path / "runs.sqlite")  # a database from before the kind (and published) columns
    con.execute(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT, config_json TEXT, status TEXT, device TEXT, "
        "versions_json TEXT, created REAL, updated REAL, message TEXT, owner TEXT, pid INTEGER, host TEXT, "
        "last_step INTEGER)"
    )
    con.execute("INSERT INTO runs (id, name, config_json, status, created) VALUES ('old1', 'old', '{}', 'finished', 1)")
    con.commit()
    con.close()
    store = RunStore(tmp_path)
    assert store.get_run("old1")["kind"] == "synthetic"
    rid = create_run(store, small_cfg())
    assert store.get_run(rid)["kind"] == "text" and store.get_run(rid)["status"] == "queued"
    with pytest.raises(ValueError, match="is not a kind's name"):
        store.create_run("x", "{}", "cpu", {}, kind="Poetry!")
    with pytest.raises(ValueError, match="unknown run kind 'poetry'; allowed: synthetic, text"):
        kind_named("poetry")


def test_stored_maps_keep_the_first_positions_and_per_head_maps_while_small():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 80, 80)).astype(np.float32)
    out = stored_maps({"attn_map": a, "attn_map_mean": a.mean(1)})
    assert out["attn_map_mean"].shape == (2, MAP_MAX_T, MAP_MAX_T)
    np.testing.assert_array_equal(out["attn_map"], a[:, :, :MAP_MAX_T, :MAP_MAX_T])
    many = rng.random((4, 8, 10, 10)).astype(np.float32)  # 32 head-layers > MAX_HEAD_MAPS
    assert MAX_HEAD_MAPS < 4 * 8
    assert set(stored_maps({"attn_map": many, "attn_map_mean": many.mean(1)})) == {"attn_map_mean"}


def _all(store: RunStore, rid: str) -> tuple[list[int], dict[int, dict], pd.DataFrame]:
    steps = store.steps(rid)
    return steps, {s: store.snapshot(rid, s) for s in steps}, store.scalars(rid)


def test_stopped_then_resumed_run_equals_an_uninterrupted_one(tmp_path, monkeypatch):
    """Checkpoint at every snapshot; stop after step 15; resume from the store: every stored number
    equals the uninterrupted run's, bit for bit (dropout 0.3 draws from the trainer's own RNG)."""
    from scansnap.service.runner import RunJob

    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)
    cfg = small_cfg()
    whole = RunJob(cfg, RunStore(tmp_path / "a"), name="whole")
    assert whole.run() == "finished"

    store = RunStore(tmp_path / "b")
    first = RunJob(cfg, store, name="cut")
    control = RunControl()
    status = first.run(control, on_snapshot=lambda s: control.stop() if s.step >= 15 else None)
    assert status == "stopped" and store.checkpoint(first.run_id)[0] == 15
    again = RunJob.resume(store, first.run_id)
    assert again.step == 15
    assert again.run() == "finished"

    steps_a, snaps_a, rows_a = _all(whole.store, whole.run_id)
    steps_b, snaps_b, rows_b = _all(store, first.run_id)
    assert steps_a == steps_b == [0, 5, 10, 15, 20, 25, 30, 35, 40]
    for s in steps_a:
        for k in snaps_a[s]:
            np.testing.assert_array_equal(snaps_a[s][k], snaps_b[s][k], err_msg=f"{k} at step {s}")
    pd.testing.assert_frame_equal(rows_a, rows_b)
    assert rows_b.groupby(["step", "layer", "head", "metric"], dropna=False).size().max() == 1  # no duplicates


def test_export_of_a_text_run(tmp_path):
    from scansnap.service.runner import RunJob

    job = RunJob(small_cfg(), RunStore(tmp_path / "data"), name="export")
    assert job.run() == "finished"
    files = export_run(job.store, job.run_id, tmp_path / "out", "csv")
    assert [p.name for p in files] == ["config.json", "scalars.csv", "attn_maps.npz", "run.json"]
    df = pd.read_csv(tmp_path / "out" / "scalars.csv")
    ent = df[(df.metric == "attn_entropy") & df["head"].isna()]
    assert sorted(ent["layer"].unique()) == [0, 1] and len(ent) == 2 * len(job.store.steps(job.run_id))
    assert set(df[df["layer"].isna()]["metric"]) == {"train_loss", "val_loss", "val_ppl"}
    z = np.load(tmp_path / "out" / "attn_maps.npz")
    S = len(job.store.steps(job.run_id))
    assert z["attn_map_mean"].shape == (S, 2, 8, 8) and z["attn_map"].shape == (S, 2, 2, 8, 8)
    np.testing.assert_allclose(z["attn_map_mean"].sum(-1), 1.0, rtol=1e-5)  # each causal row is a distribution
    assert np.all(np.triu(z["attn_map_mean"], k=1) == 0)  # no attention to later words
    words = job.store.statics(job.run_id)["probe_window_tokens"]
    assert list(z["tokens"]) == list(words[:8])


def test_a_typed_sentence_is_read_with_the_weights_kept_at_or_before_the_step_on_screen(tmp_path):
    """The weights kept with the snapshots give each layer's attention on any sentence: at the last
    step equal to the trained model's own maps (float32 torch against the float64 NumPy forward);
    a step between two kept ones reads the earlier; rewinding and deleting drop them."""
    import torch

    from scansnap.kinds.text.science.tokenizer import basic_english
    from scansnap.kinds.text.service.door import TextDoor
    from scansnap.service.facade import ServiceError, StoredRuns
    from scansnap.service.runner import RunJob

    store = RunStore(tmp_path)
    job = RunJob(small_cfg(), store, name="typed")
    assert job.run() == "finished"
    rid = job.run_id
    assert store.weight_steps(rid) == [0, 5, 10, 15, 20, 25, 30, 35, 40]  # 9 snapshots: all kept (≤ 12)
    stored = TextDoor(SimpleNamespace(stored=StoredRuns(store), store=store, data_dir=store.data_dir))
    text = "And God said zyxwv, let there be light: and there was light."
    got = stored.sentence_maps(rid, 40, text)
    n_words = len(basic_english(text))
    assert got.step == 40 and got.unknown == ["zyxwv"] and got.cut == n_words - 8  # bptt 8: the first 8 words
    assert got.words == basic_english(text)[:8]
    vocab = job.trainer.corpus.vocab
    ids = torch.as_tensor(vocab.encode(got.words))[None]
    model = job.trainer.model.eval()
    with torch.no_grad():
        want = torch.stack(model(ids, need_weights=True)[1])[:, 0].mean(1).numpy()  # (L, T, T), head mean
    assert got.maps.shape == want.shape == (2, 8, 8)
    np.testing.assert_allclose(got.maps, want, atol=1e-5)  # float32 arithmetic in torch, ~1e-7 apart here
    assert stored.sentence_maps(rid, 17, text).step == 15
    assert not np.allclose(stored.sentence_maps(rid, 0, text).maps, got.maps)  # trained: the maps moved
    with pytest.raises(ServiceError, match="no weights kept yet at or before step -1"):
        stored.sentence_maps(rid, -1, text)
    with pytest.raises(ServiceError, match="type a few words"):
        stored.sentence_maps(rid, 40, "  ;:  ")
    store.truncate_after(rid, 20)
    assert store.weight_steps(rid) == [0, 5, 10, 15, 20]
    store.delete(rid)
    assert store.weight_steps(rid) == []
