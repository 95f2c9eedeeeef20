"""The encoder router's word chart: one row per word, both effects, the rollout share beside them."""

from __future__ import annotations

import pytest

from dashboard.charts import encoder as ec


def test_word_frame_keeps_reading_order_and_refuses_a_wrong_length():
    frame = ec.word_frame(["my", "card", "my"], [0.1, 0.4, -0.2], [0.2, 0.5, 0.0], [0.3, 0.5, 0.2], [0.2, 0.6, 0.2],
                          [0.0, 0.3, -0.1])
    assert list(frame["word"]) == ["0:my", "1:card", "2:my"]
    assert frame["removed"].tolist() == pytest.approx([0.1, 0.4, -0.2])
    assert frame["integrated gradients"].tolist() == pytest.approx([0.0, 0.3, -0.1])
    with pytest.raises(ValueError, match="one value per word"):
        ec.word_frame(["a", "b"], [0.1], [0.1, 0.2], [0.5, 0.5], [0.5, 0.5], [0.1, 0.2])


def test_word_effects_chart_draws_both_changes_and_the_share():
    frame = ec.word_frame(["refund", "please"], [0.3, -0.05], [0.4, 0.0], [0.6, 0.2], [0.5, 0.3], [0.2, 0.0])
    spec = ec.word_effects_chart(frame, "p(billing) with − without the word", "[MASK]").to_dict()
    left, right = spec["hconcat"]
    values = [row for d in spec["datasets"].values() for row in d]
    changes = {row["change"] for row in values if "change" in row}
    assert changes == {"removed", "pieces → [MASK]"}
    assert left["encoding"]["x"]["title"] == "p(billing) with − without the word"
    assert right["encoding"]["x"]["field"] == "rollout"
    assert left["encoding"]["y"]["sort"] == ["0:refund", "1:please"]


def test_phrase_frame_lists_each_phrase_with_its_values_and_refuses_a_wrong_length():
    from ticketnet.interpret.interventions.phrases import Phrase

    phrases = [Phrase(0, 2, "my card"), Phrase(2, 5, "was charged twice")]
    frame = ec.phrase_frame(phrases, [0.5, 2.0], [0.4, 1.5])
    assert frame.to_dict("list") == {"phrase": ["my card", "was charged twice"], "shapley value": [0.5, 2.0],
                                     "deletion support": [0.4, 1.5]}
    with pytest.raises(ValueError, match="one value per phrase"):
        ec.phrase_frame(phrases, [0.5], [0.4, 1.5])
