"""The text budget: parameter count against the model, refusals name the limit and the knobs."""

from __future__ import annotations

import pytest

from engine.core.config import ConfigError
from engine.core.text import contexts
from engine.core.text.config import TextRunConfig
from engine.core.text.model import CausalLM
from engine.service.kinds.text import budget
from engine.service.kinds.text.budget import check_text_budget, count_parameters, estimate


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"model.n_layers": 3, "model.tie_weights": True},
        {"model.positional": "learned", "model.norm": "pre", "model.mlp": "none", "model.n_heads": 4},
    ],
)
def test_parameter_count_matches_the_model(over):
    cfg = TextRunConfig().with_overrides({"model.d_model": 24, "model.d_ff": 40, "optim.bptt": 11, **over})
    model = CausalLM(cfg.model, 97, cfg.optim.bptt)
    assert count_parameters(cfg, 97) == sum(p.numel() for p in model.parameters())


def test_memory_grows_with_the_logits_and_adam_doubles_the_state():
    base = estimate(TextRunConfig(), vocab=10_000)
    longer = estimate(TextRunConfig().with_overrides({"optim.bptt": 70}), vocab=10_000)
    assert longer.bytes_step > 1.9 * base.bytes_step  # 3·B·T·V logits dominate
    adam = estimate(TextRunConfig().with_overrides({"optim.method": "adam"}), vocab=10_000)
    assert adam.bytes_params == 2 * base.bytes_params  # params + grads (2 copies) → + m, v (4 copies)


def test_refusals_name_the_limit_and_what_to_reduce(monkeypatch):
    big = TextRunConfig().with_overrides({"optim.bptt": 512})
    with pytest.raises(ConfigError, match=r"over the limit of 2,048 MB per run \(SCANSNAP_MAX_RUN_MB\)"):
        check_text_budget(big, vocab=13_445)
    monkeypatch.setenv("SCANSNAP_MAX_TEXT_FLOP", "1e12")
    over_flop = r"SCANSNAP_MAX_TEXT_FLOP\): it would take ≈ .* h on 2 CPU cores; reduce optim\.steps"
    with pytest.raises(ConfigError, match=over_flop):
        check_text_budget(TextRunConfig(), vocab=13_445)
    monkeypatch.setenv("SCANSNAP_MAX_TEXT_FLOP", "1e16")
    assert check_text_budget(TextRunConfig(), vocab=13_445).total_mb < 2048


def test_the_corpus_counts_its_tokens_read_and_one_piece_of_its_groups_counted():
    """The corpus part grows with the training tokens (their text and ids while encoded) and holds one piece of
    pairs of the groups' count (contexts.CHUNK pairs), whatever the vocabulary: the count never holds N(l, n)."""
    small, large = (estimate(TextRunConfig(), vocab=v, train_tokens=n) for v, n in ((50, 100_000), (30_000, 900_000)))
    assert small.bytes_corpus == budget.CORPUS_TOKEN_BYTES * 100_000 + budget.GROUPS_BYTES
    assert large.bytes_corpus - small.bytes_corpus == budget.CORPUS_TOKEN_BYTES * 800_000
    assert budget.GROUPS_BYTES == 32 * contexts.CHUNK
