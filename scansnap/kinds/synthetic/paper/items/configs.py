"""What each synthetic reproduce item trains: its configs, derived from the presets (no torch here, so the
web process can show an item's work without loading the engine's trainer)."""

from __future__ import annotations

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.paper.presets import preset_config

# ----------------------------------------------------------------- Fig. 4 and Fig. 5 (Syn-Small)
FIG4_PAIRS = ((1.0, 1.0), (10.0, 1.0))  # (η_Y, η_Z): the paper's left and right panels
FIG5_ETAS = (0.1, 0.5, 1.0)


def fig4_config() -> RunConfig:
    """syn-small with the two panels' (η_Y, η_Z) as replicas (the right panel is syn-small-fast-decoder)."""
    fast = preset_config("syn-small-fast-decoder").optim
    assert (fast.eta_y, fast.eta_z) == FIG4_PAIRS[1]  # the right panel is exactly that preset
    return preset_config("syn-small", {"replicas.lr_pairs": [list(p) for p in FIG4_PAIRS]})


def fig5_config() -> RunConfig:
    """syn-small-adam-{0.1,0.5,1} as three replicas of one run."""
    for eta in FIG5_ETAS:  # the replicas are exactly these presets
        o = preset_config(f"syn-small-adam-{eta:g}").optim
        assert (o.method, o.eta_y, o.eta_z) == ("adam", eta, eta)
    return preset_config("syn-small-adam-1", {"replicas.lr_pairs": [[e, e] for e in FIG5_ETAS]})


# ----------------------------------------------------------------- Fig. 6 (Syn-Medium)
FIG6_NUM_LAST = (1, 3, 5, 10)
FIG6_QUICK_SEEDS = (1, 2, 3)


def fig6_config(num_last: int, quick: bool) -> RunConfig:
    """One Fig. 6 panel (preset syn-medium-<num_last>), final snapshot only; 3 seeds in quick mode."""
    over: dict = {"snapshots.linear_every": None, "snapshots.log_count": 0, "snapshots.max_count": 2}
    if quick:
        over["replicas.seeds"] = list(FIG6_QUICK_SEEDS)
    return preset_config(f"syn-medium-{num_last}", over)


# ----------------------------------------------------------------- Theorems 2–4
THEOREMS_MF_OVERRIDES = {
    "data.num_distinct_per_next": 10,
    "data.num_common": 10,
    "optim.eta_y": 0.01,
    "optim.eta_z": 0.01,
    "optim.steps": 3000,
}
LONG_STEPS = 10_000
LONG_PAIRS = [[2.0, 1.0], [5.0, 1.0], [10.0, 1.0]]
LONG_LAYOUTS = {
    "shared query (Thm 4 setting)": {"data.num_last": 1, "data.num_next_per_last": 2},
    "Syn-Small (own query per class)": {},
}


def theorems_applies_config() -> RunConfig:
    """The ``theorem4`` preset shortened to 2000 steps: Theorems 2–4 apply, the four run claims are judged."""
    return preset_config("theorem4", {"optim.steps": 2000})


def theorems_mf_config() -> RunConfig:
    """The T→∞ Lemma-3 mean field of §6.3/§6.4 (preset theorem4, 10 common + 10 distinct tokens)."""
    return preset_config("theorem4", THEOREMS_MF_OVERRIDES)


def theorems_long_config(layout: str) -> RunConfig:
    """A 10⁴-step sampled run of §6.9 in one of :data:`LONG_LAYOUTS`."""
    over = {
        **LONG_LAYOUTS[layout],
        "optim.steps": LONG_STEPS,
        "replicas.lr_pairs": LONG_PAIRS,
        "snapshots.linear_every": None,
        "snapshots.log_count": 81,
        "snapshots.max_count": 100,
        "name": f"snap-{layout}",
    }
    return preset_config("syn-small", over)
