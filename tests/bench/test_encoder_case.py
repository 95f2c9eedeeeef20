"""The bench's encoder case on a small BERT router: every figure measured, the removal batch the words of the ticket."""

from __future__ import annotations

import csv

from ticketnet.bench.encoder import TARGETS, encoder_speed
from tests.encoder.conftest import make_small_base, write_splits


def test_the_encoder_case_times_routing_inspection_and_removal(tmp_path):
    from ticketnet.encoder.finetune import EncoderRecipe, fine_tune

    base = make_small_base(tmp_path / "base")
    data = write_splits(tmp_path / "splits", sizes=(("train", 40), ("valid", 20), ("test", 20)))
    out = tmp_path / "router"
    fine_tune(data, out, EncoderRecipe(encoder=str(base), epochs=1, train_blocks=1, max_pieces=48),
              log=lambda m: None)
    rows = lambda name: list(csv.DictReader((data / f"{name}.csv").open(encoding="utf-8")))   # noqa: E731
    found = encoder_speed(out, rows("valid"), rows("test"), repeats=2)
    assert found["test_tickets"] == 20 and found["predict_tickets_per_second"] > 0
    assert found["removal_variants"] == 40 and found["removal_n40_pieces"] >= 42      # 40 words, [CLS], [SEP]
    assert 0 < found["forward_one_s"] < found["removal_n40_s"] * 10
    assert found["inspection_s"] > 0 and found["word_effects_n40_s"] > 0 and found["targets"] == TARGETS
