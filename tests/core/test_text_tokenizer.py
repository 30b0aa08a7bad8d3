"""basic_english, the vocabulary and the batching scheme of the paper's notebook."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scansnap.kinds.text.science.data import (
    CorpusText,
    batchify,
    encode_corpus,
    full_windows,
    line_chunks,
    split_train_valid,
    window,
    windows_per_epoch,
)
from scansnap.kinds.text.science.tokenizer import UNK, basic_english, build_vocabulary


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # lower-case; "," "!" "." "?" "(" ")" become separate tokens
        ("Hello, World! Bye.", ["hello", ",", "world", "!", "bye", "."]),
        # ' gets spaces around it: it's → it ' s ;  '"' is removed
        ('It\'s "quoted"', ["it", "'", "s", "quoted"]),
        # ';' and ':' become spaces; <br /> becomes a space
        ("a;b:c<br />d", ["a", "b", "c", "d"]),
        ("(x)? y", ["(", "x", ")", "?", "y"]),
        # WikiText's own markers: <unk> stays one token, @,@ is split at the comma
        ("the <unk> of 1 @,@ 000", ["the", "<unk>", "of", "1", "@", ",", "@", "000"]),
        ("  \n\n ", []),
    ],
)
def test_basic_english_rules(text, tokens):
    assert basic_english(text) == tokens


def test_tokenizing_in_line_pieces_equals_tokenizing_whole():
    text = "\n".join(f"Line {i}: it's (a) test, <br />no. {i}!" for i in range(3000))
    pieces = list(line_chunks(text, size=1000))
    assert len(pieces) > 10 and "".join(pieces) == text
    assert [t for p in pieces for t in basic_english(p)] == basic_english(text)


def test_vocabulary_order_cap_and_unk_counts():
    tokens = ["b", "a", "c", "a", "b", "a", "d", "<unk>", "e"]  # a:3 b:2 c,d,e:1 <unk>:1
    v = build_vocabulary(tokens, max_size=4)
    assert v.itos == (UNK, "a", "b", "c")  # by count, ties alphabetical (c before d, e)
    assert v.counts.tolist() == [1 + 2, 3, 2, 1]  # <unk>: the literal one + d + e
    assert v.counts.sum() == len(tokens)
    assert v.encode(["a", "zzz", "c"]).tolist() == [1, 0, 3]
    assert v.decode([2, 0]) == ["b", UNK]
    with pytest.raises(ValueError, match="max_size = 1"):
        build_vocabulary(tokens, 1)


def test_encode_corpus_caps_training_tokens_and_maps_validation():
    corpus = CorpusText("t", "one two two three three three\n" * 10, "three four\n")
    enc = encode_corpus(corpus, vocab_size=10, max_train_tokens=20)
    assert len(enc.train_ids) == 20
    assert enc.vocab.itos[:2] == (UNK, "three")
    assert enc.vocab.decode(enc.val_ids) == ["three", UNK]  # "four" never occurs in training


def test_split_train_valid_cuts_at_a_line_break():
    text = "".join(f"line {i}\n" for i in range(100))
    train, valid = split_train_valid(text, 0.1)
    assert train + valid == text
    assert train.endswith("\n") is False and valid.startswith("\n")
    assert 0.08 < len(valid) / len(text) < 0.12
    one_line = "word " * 1000
    train, valid = split_train_valid(one_line, 0.25)
    assert train + valid == one_line and train.endswith("word") and valid.startswith(" ")


def test_batchify_and_windows_follow_the_tutorial():
    ids = np.arange(23)
    data = batchify(ids, 3)  # ⌊23/3⌋ = 7 per stream, the remainder (21, 22) dropped
    assert data.tolist() == [list(range(0, 7)), list(range(7, 14)), list(range(14, 21))]
    assert windows_per_epoch(7, 4) == 2  # ⌈(7 − 1)/4⌉
    x, y = window(data, 0, 4)
    assert x.tolist()[0] == [0, 1, 2, 3] and y.tolist()[0] == [1, 2, 3, 4]
    x, y = window(data, 1, 4)  # last window is shorter: T′ = min(4, 7 − 1 − 4) = 2
    assert x.tolist()[1] == [11, 12] and y.tolist()[1] == [12, 13]
    xs, ys = full_windows(data, 0, 1, 3)
    assert xs.shape == (3, 3) and torch.equal(ys, data[:, 1:4])
