"""The text budget: parameter count against the model, refusals name the limit and the knobs."""

from __future__ import annotations

import math

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science import contexts
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.model import CausalLM
from scansnap.kinds.text.service import budget
from scansnap.kinds.text.service.budget import check_text_budget, count_parameters, estimate


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


def test_the_corpus_counts_every_token_read_its_groups_counted_and_its_words_as_numpy_holds_them():
    """The corpus part: each training and validation token read (its text and ids while encoded), the groups'
    count (the first MAX_TOKENS ids, one piece of CHUNK pairs, a few V-vectors) and the vocabulary's words,
    4 bytes a character of the longest, as the kept weights pack them (PACKED_COPIES)."""
    cfg = TextRunConfig()
    got = estimate(cfg, vocab=50, train_tokens=100_000, val_tokens=20_000, longest_word=7).bytes_corpus
    groups = 12 * 100_000 + 96 * contexts.CHUNK + 64 * 50
    assert got == budget.CORPUS_TOKEN_BYTES * 120_000 + groups + budget.PACKED_COPIES * 4 * 7 * 50
    huge = estimate(cfg, vocab=50, train_tokens=5_000_000, val_tokens=0, longest_word=7).bytes_corpus
    assert huge - budget.CORPUS_TOKEN_BYTES * 5_000_000 - budget.PACKED_COPIES * 4 * 7 * 50 == pytest.approx(
        12 * contexts.MAX_TOKENS + 96 * contexts.CHUNK + 64 * 50
    )  # the groups count the first MAX_TOKENS only
    unmeasured = estimate(cfg, vocab=50, train_tokens=90_000)  # the validation split, 16-character words
    vf = cfg.data.valid_fraction
    assert unmeasured.bytes_corpus == budget.CORPUS_TOKEN_BYTES * (90_000 + math.ceil(90_000 * vf / (1 - vf))) + (
        12 * 90_000 + 96 * contexts.CHUNK + 64 * 50 + budget.PACKED_COPIES * budget.WORD_BYTES * 50
    )


def test_a_long_word_counts_in_memory_and_on_disk():
    """One 5,000-character word makes numpy's vocabulary array 20,000 bytes a word (the review: 572 MiB at
    30,000 words, estimated at 64 bytes a word)."""
    short, long = (estimate(TextRunConfig(), vocab=30_000, longest_word=n) for n in (16, 5000))
    assert long.bytes_corpus - short.bytes_corpus == budget.PACKED_COPIES * 4 * (5000 - 16) * 30_000
    assert dict(long.disk_parts())["kept weights"] - dict(short.disk_parts())["kept weights"] == pytest.approx(
        (min(budget.WEIGHTS_KEPT, long.snapshots) + 1) * 4 * (5000 - 16) * 30_000
    )
