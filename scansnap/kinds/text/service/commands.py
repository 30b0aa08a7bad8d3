"""The text kind on the command line: what ``scansnap run`` prints of a real-text run it trained (its
corpus, its model, each metric per layer at the first and the last snapshot)."""

from __future__ import annotations

from typing import Any

from scansnap.core.metrics import METRICS, metric_names


def summary(job: Any, wall: float, first: Any, last: Any) -> list[str]:
    """The device and speed (steps and tokens a second); the corpus and the model; each metric at the first and
    the last snapshot (a per-layer metric one line a layer, the mean over heads); uniform causal attention's
    entropy over the window, the value the layers start near."""
    cfg, tr = job.cfg, job.trainer
    m, o, c = cfg.model, cfg.optim, tr.corpus
    steps = job.step
    tokens = steps * o.batch * o.bptt
    rate = f"{steps / wall:.1f} steps/s, {tokens / wall:,.0f} tokens/s" if wall > 0 else ""
    lines = [
        f"device {job.device}  steps {steps}  wall {wall:.1f}s  {rate}",
        f"corpus: {c.name} — {len(c.train_ids):,} training / {len(c.val_ids):,} validation tokens, "
        f"vocabulary {len(c.vocab):,}",
        f"model: {m.n_layers} layer(s) × {m.n_heads} head(s), d_model {m.d_model}, d_ff {m.d_ff}, {m.positional} "
        f"positions, MLP {m.mlp}; {o.method} lr attention {o.lr_attention:g} / MLP {o.lr_mlp:g} / other "
        f"{o.lr_other:g}; batch {o.batch} × bptt {o.bptt}",
    ]
    if first is not None and last is not None:
        lines.append(f"{'metric':<28}{'step ' + str(first.step):>12}{'step ' + str(last.step):>12}")
        names = (name for name in metric_names("text") if name in first.scalars)
        lines += [row for name in names for row in _rows(name, first.scalars, last.scalars)]
        lines.append(
            f"uniform causal attention over {o.bptt} positions: {float(tr.statics()['uniform_entropy']):.4f} nats"
        )
    return lines


def _rows(name: str, first: dict, last: dict) -> list[str]:
    """One line per layer (mean over heads) for a per-layer metric, else one line."""
    if not METRICS[name].per_layer:
        return [f"{name:<28}{float(first[name]):>12.4g}{float(last[name]):>12.4g}"]
    a, b = first[name].mean(axis=1), last[name].mean(axis=1)
    return [f"{f'{name} (layer {k})':<28}{a[k]:>12.4g}{b[k]:>12.4g}" for k in range(len(a))]
