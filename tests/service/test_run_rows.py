"""scansnap.service.replication (read_rows / write_rows): a run's rows copied into another store (what a cluster node
streams back to the server) hold every value the original holds, and a replay changes nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scansnap.paper.presets import get_preset
from scansnap.service.replication import read_rows, write_rows
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore

TEXT_SMALL = {
    "optim.steps": 12,
    "snapshots.linear_every": 6,
    "snapshots.log_count": 0,
    "model.d_model": 16,
    "model.d_ff": 16,
    "model.device": "cpu",
    "data.vocab_size": 300,
}


def assert_same_run(a: RunStore, b: RunStore, run_id: str, other_id: str | None = None) -> None:
    """Every stored value of run ``run_id`` in ``a`` equals that of run ``other_id`` (default: the same
    id) in ``b``: statics, snapshots, scalars, checkpoint."""
    other_id = other_id or run_id
    ra, rb = a.get_run(run_id), b.get_run(other_id)
    for col in ("name", "config_json", "status", "device", "last_step", "kind", "versions"):
        assert ra[col] == rb[col], col
    sa, sb = a.statics(run_id), b.statics(other_id)
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)
    assert a.steps(run_id) == b.steps(other_id)
    for step in a.steps(run_id):
        x, y = a.snapshot(run_id, step), b.snapshot(other_id, step)
        assert x.keys() == y.keys()
        for k in x:
            np.testing.assert_array_equal(x[k], y[k], err_msg=f"{k} at step {step}")
    pd.testing.assert_frame_equal(a.scalars(run_id), b.scalars(other_id))
    ca, cb = a.checkpoint(run_id), b.checkpoint(other_id)
    assert (ca is None) == (cb is None)
    if ca is not None:
        assert ca[0] == cb[0] and ca[2] == cb[2]
        for k in ca[1]:
            np.testing.assert_array_equal(ca[1][k], cb[1][k])


@pytest.mark.parametrize(
    ("preset", "kind", "sets"),
    [("syn-small", "synthetic", {"optim.steps": 20}), ("text-seq-32-live", "text", TEXT_SMALL)],
)
def test_a_runs_rows_copied_into_another_store_hold_every_value(tmp_path, one_torch_thread, preset, kind, sets):
    cfg = get_preset(preset, kind).config.with_overrides(sets)
    src, dst = RunStore(tmp_path / "src"), RunStore(tmp_path / "dst")
    try:
        job = RunJob(cfg, src, name="original")
        assert job.run() == "finished"
        rid = job.run_id
        with pytest.raises(KeyError, match=rid):  # a run the server does not hold (deleted there) is refused
            write_rows(dst, read_rows(src, rid))
        write_rows(dst, read_rows(src, rid), node="node-a", create=True)
        assert_same_run(src, dst, rid)
        assert dst.get_run(rid)["node"] == "node-a" and src.get_run(rid)["node"] is None
        # in steps: the rows after each step, replayed twice (a retried message), end in the same store
        mid = src.steps(rid)[1]
        part = RunStore(tmp_path / "part")
        write_rows(part, read_rows(src, rid), create=True)
        part.rename(rid, "renamed here")  # the server's own columns are not the trainer's to change
        for _ in range(2):
            write_rows(part, read_rows(src, rid, after=mid, statics=False))
        assert part.get_run(rid)["name"] == "renamed here"
        part.rename(rid, "original")
        assert_same_run(src, part, rid)
        part.close()
    finally:
        src.close()
        dst.close()


def test_rows_after_a_step_replace_what_the_copy_held_after_it(tmp_path, one_torch_thread):
    """A resumed run drops the snapshots after its checkpoint; the copy drops them with the next rows."""
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 20})
    src, dst = RunStore(tmp_path / "src"), RunStore(tmp_path / "dst")
    try:
        job = RunJob(cfg, src)
        job.run()
        rid = job.run_id
        write_rows(dst, read_rows(src, rid), create=True)
        keep = src.steps(rid)[3]
        src.truncate_after(rid, keep)
        write_rows(dst, read_rows(src, rid, after=keep, statics=False))
        assert dst.steps(rid) == src.steps(rid) and max(dst.steps(rid)) == keep
        assert dst.scalars(rid)["step"].max() == keep and dst.get_run(rid)["last_step"] == keep
    finally:
        src.close()
        dst.close()
