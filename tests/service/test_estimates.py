"""The budget's estimates carry every term that grows with a config (issue: "estimates that hold"): the
bytes a run stores (snapshots, scalars, statics, checkpoint, a text run's kept weights) bound what a
trained run stores; the refusals name the disk limits; the slot seconds count steps, snapshots and
checkpoints.  The terms are pinned, not the host's speed (bench/estimates.py measures that)."""

from __future__ import annotations

import math

import pytest

from scansnap.core.config import ConfigError
from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.synthetic.service import budget as syn
from scansnap.kinds.text.service import runs as text_runs
from scansnap.paper.presets import get_preset
from scansnap.service import budget, runner
from scansnap.service.control import RunControl
from scansnap.service.jobs import JobManager
from scansnap.service.limits import Limits
from scansnap.service.run_kinds import run_disk_bytes
from scansnap.service.store import RunStore
from tests.service.test_text_runs import SMALL  # a small text model, seconds to train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _stored_with_checkpoint(store: RunStore, cfg, owner: str) -> int:
    """Train ``cfg`` with a checkpoint at every snapshot, stopped at its last snapshot but one (a stopped
    run keeps its checkpoint), and return what its owner's runs store."""
    control = RunControl()
    job = runner.RunJob(cfg, store, owner=owner)
    stop_at = sorted(job.trainer.schedule)[-2]
    job.run(control, on_snapshot=lambda snap: snap.step >= stop_at and control.stop())
    assert store.checkpoint(job.run_id) is not None
    return store.owner_bytes(owner)


@pytest.mark.parametrize(
    "preset, over",
    [
        ("syn-small", {}),  # full snapshots
        ("syn-medium-1", {"optim.steps": 30}),  # 160 replicas: top-k snapshots, class means only
        ("lecture", {"optim.steps": 60}),
    ],
)
def test_a_synthetic_runs_stored_bytes_are_within_its_disk_estimate(tmp_path, monkeypatch, preset, over):
    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)
    cfg = get_preset(preset).config.with_overrides(over) if over else get_preset(preset).config
    with RunStore(tmp_path) as store:
        stored = _stored_with_checkpoint(store, cfg, "browser-1")
        estimate = syn.estimate(cfg)
        assert stored <= estimate.disk_bytes
        parts = dict(estimate.disk_parts())
        assert parts.pop("the store's write-ahead log") >= budget.WAL_BYTES  # the server's WAL, a run's share
        assert sum(parts.values()) < 3 * stored + 2**20  # the run's own: an upper bound, not a wild one


def test_a_text_runs_stored_bytes_are_within_its_disk_estimate(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)
    cfg = get_preset("text-fig7-1layer", "text").config.with_overrides(SMALL)
    with RunStore(tmp_path) as store:
        stored = _stored_with_checkpoint(store, cfg, "browser-1")
        assert store.weight_steps(store.list_runs()[0]["id"])  # its kept weights are counted in
        assert stored <= run_disk_bytes(tmp_path, cfg)


def test_the_compact_run_of_the_finding_is_refused_for_its_disk(monkeypatch):
    """The finding: a compact run of 99,990 distinct tokens a class, a snapshot at each of 2,000 steps,
    stored 6.2 GiB; the estimate counts each snapshot's z and c (4 · R · (Q+K) · M_ctx bytes, and their
    headers) and refuses
    it over the default 1,024 MB a run, naming the variable."""
    over = {"data.num_distinct_per_next": 99_990, "data.layout": "compact", "optim.steps": 2000}
    cfg = get_preset("syn-small").config.with_overrides(
        over | {"snapshots.linear_every": 1, "snapshots.max_count": 2000}
    )
    K, Q, M_ctx, _, _ = syn.problem_sizes(cfg)
    count = len(snapshot_steps(cfg.optim.steps, cfg.snapshots))
    assert dict(syn.estimate(cfg).disk_parts())[f"{count:,} snapshots"] == count * (
        4.0 * (Q + K) * M_ctx + 2 * syn.ARRAY_HEADER_BYTES
    )
    assert syn.estimate(cfg).disk_bytes > 6 * 2**30
    with pytest.raises(ConfigError, match=r"over the limit of 1,024 MB per run \(SCANSNAP_MAX_RUN_DISK_MB\)"):
        syn.check_budget(cfg)
    monkeypatch.setenv("SCANSNAP_MAX_RUN_DISK_MB", "8000")
    syn.check_budget(cfg)  # the operator may allow it
    monkeypatch.setenv("SCANSNAP_MAX_RUN_DISK_MB", "lots")
    with pytest.raises(ConfigError, match=r"SCANSNAP_MAX_RUN_DISK_MB='lots' is not a number"):
        syn.check_budget(cfg)


def test_a_visitors_runs_share_one_disk_budget(tmp_path):
    """Each run fits the per-run limit, but a visitor's stored and live runs together may not pass
    SCANSNAP_MAX_OWNER_DISK_MB; another visitor, and the operator, are not held by it."""
    cfg = get_preset("syn-medium-1").config.with_overrides({"optim.steps": 20})
    per_run = run_disk_bytes(tmp_path, cfg)
    limits = Limits(max_owner_disk_mb=1.5 * per_run / 2**20, max_per_owner=5)
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=limits)
    try:
        jobs.submit(cfg, owner="browser-1", limited=True, paused=True)
        with pytest.raises(RuntimeError, match=r"over the limit of .* MB per visitor \(SCANSNAP_MAX_OWNER_DISK_MB\)"):
            jobs.submit(cfg, owner="browser-1", limited=True, paused=True)
        jobs.submit(cfg, owner="browser-2", limited=True, paused=True)
        jobs.submit(cfg, owner="browser-1", limited=False, paused=True)  # the operator's own runs
    finally:
        jobs.shutdown()


def test_a_finished_runs_stored_bytes_count_against_its_owner(tmp_path):
    cfg = get_preset("syn-medium-1").config.with_overrides({"optim.steps": 20})
    with RunStore(tmp_path) as store:
        runner.RunJob(cfg, store, owner="browser-1").run(RunControl())
        stored = store.owner_bytes("browser-1")
        assert stored > 0 and store.owner_bytes("browser-2") == 0
    limits = Limits(max_owner_disk_mb=(stored + 0.5 * run_disk_bytes(tmp_path, cfg)) / 2**20)
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=limits)
    try:
        with pytest.raises(RuntimeError, match="SCANSNAP_MAX_OWNER_DISK_MB"):
            jobs.submit(cfg, owner="browser-1", limited=True, paused=True)
    finally:
        jobs.shutdown()


def test_checkpoints_are_counted_once_per_interval_and_never_at_the_last_snapshot(monkeypatch):
    """n = min(S − 1, ⌊other / C⌋ + 1) checkpoints of b bytes at STORE_BYTES_PER_S each."""
    b, rate = 3e8, budget.STORE_BYTES_PER_S
    assert budget.checkpoint_seconds(12.0, 100, b) == pytest.approx(
        (math.floor(12 / budget.CHECKPOINT_SECONDS) + 1) * b / rate
    )
    assert budget.checkpoint_seconds(1e6, 10, b) == pytest.approx(9 * b / rate)
    assert budget.checkpoint_seconds(1e6, 1, b) == 0.0
    assert budget.checkpoint_seconds(1e6, 10, 0.0) == 0.0


def test_the_synthetic_slot_seconds_count_the_checkpoints_of_a_large_decoder():
    """The finding: num_last = 2, 4,500 distinct tokens a class, paper layout: a 620 MB checkpoint stored
    every few seconds; its slot seconds hold those writes beside the steps, snapshots and work."""
    over = {"data.num_last": 2, "data.num_distinct_per_next": 4500, "optim.steps": 200}
    cfg = get_preset("syn-small").config.with_overrides(over)
    est = syn.estimate(cfg)
    snapshots = len(snapshot_steps(cfg.optim.steps, cfg.snapshots))
    per_step = syn.STEP_OVERHEAD_S + syn.batch_elements(cfg) * syn.BATCH_ELEMENT_S
    other = syn.RUN_START_S + 200 * per_step + snapshots * syn.SNAPSHOT_S + est.work / syn.OPS_PER_S
    raw = est.bytes_checkpoint / budget.PACKED_COPIES
    assert raw > 600e6
    assert syn.estimated_seconds(cfg) == pytest.approx(other + budget.checkpoint_seconds(other, snapshots, raw))


@pytest.mark.parametrize(
    "over",
    [
        {"data.num_distinct_per_next": 99_990, "data.layout": "compact"},  # the export finding's wide run
        {"replicas.seeds": [0, 1, 2], "optim.batch": 64},
        {"data.num_last": 5, "data.num_next_per_last": 4},
        {"data.num_last": 10, "data.num_next_per_last": 2, "data.num_common_per_last": 50},  # S = 510 + d ≫ |supp|
        {"optim.batch": 16, "data.num_last": 50, "data.num_next_per_last": 2, "replicas.seeds": [0, 1, 2, 3]},  # K ≫ B
    ],
)
def test_the_synthetic_slot_seconds_count_every_element_of_each_steps_batch(over, monkeypatch):
    """The sampled model builds one grouped batch a stream each step, U × K × G × (s + 1) elements (zeroed,
    scattered into, its log taken): the estimate counts at least what the trainer builds, for every step."""
    from scansnap.kinds.synthetic.science.train import Trainer

    cfg = get_preset("syn-small").config.with_overrides(over | {"optim.steps": 4})
    trainer = Trainer(cfg)
    for _ in range(4):
        built = trainer.kind.batches(trainer.samplers)  # one (1, K, G_i, s) a stream, cut from (U, K, max G_i, s + 1)
        _, K, _, s = built[0].logx.shape
        assert 0 < len(built) * K * max(b.logx.shape[2] for b in built) * (s + 1) <= syn.batch_elements(cfg)
    with_batches = syn.estimated_seconds(cfg)
    monkeypatch.setattr(syn, "BATCH_ELEMENT_S", 0.0)
    # at least: the checkpoints, one every few seconds of the run, come with its longer time
    assert with_batches - syn.estimated_seconds(cfg) >= 4 * syn.batch_elements(cfg) * 6e-8 * (1 - 1e-9)
    assert syn.batch_elements(cfg.with_overrides({"model.kind": "yz-meanfield"})) == 0  # its one batch, built once


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"data.num_last": 1, "data.num_next_per_last": 1},  # one class owns every token
        {"data.num_last": 4, "data.num_next_per_last": 1, "data.num_common_per_last": 7},  # a query's own: distinct
        {"data.num_last": 6, "data.num_next_per_last": 3, "data.num_common_per_last": 40},  # a query's own: shared
        {
            "data.source": "table",
            "data.table": [[1.0 if j in (n, (n + 1) % 12) else 0.0 for j in range(12)] for n in range(12)],
            "data.psi": [0] * 12,
        },  # a ring: all shared
    ],
)
def test_the_role_columns_are_the_fused_steps_own(over):
    """S counted from the config equals the columns the trainer's role layout gives a class's context."""
    from scansnap.kinds.synthetic.science.train import Trainer

    cfg = get_preset("syn-small").config.with_overrides(over | {"optim.steps": 1})
    assert syn.role_columns(cfg) == Trainer(cfg).kind.layout.S


def test_the_synthetic_memory_estimate_holds_the_packed_checkpoint_the_twin_and_the_worker():
    """Finding 9 (peak 3,520 MB against 1,921 estimated): the checkpoint is held PACKED_COPIES times while
    it is stored, the worker process itself is counted, and a yz run holds its mean-field twin."""
    over = {"data.num_last": 2, "data.num_distinct_per_next": 4500, "optim.steps": 200}
    cfg = get_preset("syn-small").config.with_overrides(over)
    est = syn.estimate(cfg)
    _, Q, M_ctx, M_out, _ = syn.problem_sizes(cfg)
    n_params = Q * M_ctx + M_ctx * M_out
    assert est.bytes_checkpoint == budget.PACKED_COPIES * 4 * n_params * 2  # SGD with momentum: 1 buffer
    assert est.total_mb == pytest.approx(budget.SAFETY * sum(b for _, b in est.parts()) / 2**20 + budget.WORKER_MB)
    assert est.total_mb > 3520
    small = syn.estimate(get_preset("syn-small").config)
    assert syn.twin_replicas(get_preset("syn-small").config) == 1 and small.bytes_twin > 0


def test_the_text_slot_seconds_grow_with_steps_and_snapshots_beyond_the_flop(tmp_path):
    """Finding 2: a tiny model at 100,000 steps and a snapshot every 50 was estimated at its FLOP alone
    (≈ 3 s) and took 373 s a cell; each step and each snapshot now carries its fixed cost."""
    tiny = {"model.d_model": 4, "model.d_ff": 4, "optim.batch": 1, "optim.bptt": 4, "data.vocab_size": 50}
    base = get_preset("text-fig7-1layer-live", "text").config.with_overrides(tiny)

    def seconds(steps: int, every: int) -> float:
        over = {"optim.steps": steps, "snapshots.linear_every": every, "snapshots.max_count": 2000}
        return text_runs.text_seconds(tmp_path, base.with_overrides(over))

    assert seconds(100_000, 100_000) - seconds(50_000, 50_000) >= 50_000 * text_runs.TEXT_STEP_S
    assert seconds(100_000, 50) - seconds(100_000, 100_000) >= 1900 * text_runs.TEXT_SNAPSHOT_S
    assert seconds(100_000, 50) >= 300
