"""routed_split: a router's stored predictions when they are its own on this CSV, else the rows routed now."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from tests.corpus.conftest import write_csv
from ticketnet import predictions
from ticketnet.compare import routed_split, split_csv
from ticketnet.data.tickets import load_split


@pytest.fixture
def no_routing(monkeypatch):
    """Routing fails: a table that comes back must have been read from predictions/."""
    from ticketnet.router import Router

    def refuse(*_a, **_k):
        raise AssertionError("routed instead of reading the stored predictions")

    monkeypatch.setattr(Router, "load", classmethod(lambda cls, *a, **k: refuse()))


def test_a_split_name_reads_the_stored_predictions(artifacts, no_routing):
    folder = artifacts.weights.parent
    csv = artifacts.data / "test.csv"
    if not predictions.has_predictions(artifacts.weights, "test", csv):
        pytest.skip("no stored predictions for the test split")
    table = routed_split(folder, "test")
    pd.testing.assert_frame_equal(table, predictions.read_predictions(artifacts.weights, "test", csv))


def test_a_copy_of_a_stored_split_is_recognised(artifacts, tmp_path, no_routing):
    # The manifest keys a split by its file's name and bytes: valid.csv copied anywhere is the same split.
    if not predictions.has_predictions(artifacts.weights, "valid", artifacts.data / "valid.csv"):
        pytest.skip("no stored predictions for the valid split")
    copy = shutil.copy(artifacts.data / "valid.csv", tmp_path / "valid.csv")
    assert len(routed_split(artifacts.weights.parent, str(copy))) == 1500


def test_other_rows_are_routed_now(artifacts, router, tmp_path):
    rows = load_split(artifacts.data / "test.csv")[:25]
    csv = write_csv(tmp_path / "few.csv", rows, ("ticket_id", "text", "team", "pattern"))
    table = routed_split(artifacts.weights.parent, str(csv))
    pd.testing.assert_frame_equal(table, predictions.routed_table(router, load_split(csv)))


def test_the_handwritten_split_brings_its_style(artifacts):
    if not (artifacts.data / "handwritten.csv").is_file():
        pytest.skip("no hand-written split")
    table = routed_split(artifacts.weights.parent, "handwritten")
    styles = {r["ticket_id"]: r["style"] for r in load_split(artifacts.data / "handwritten.csv")}
    assert table["style"].tolist() == [styles[t] for t in table["ticket_id"]]


def test_bad_input_is_one_line(artifacts, tmp_path):
    folder = artifacts.weights.parent
    with pytest.raises(ValueError, match="unknown split 'tset'.*test") as info:
        split_csv(folder, "tset")
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="not a folder"):
        routed_split(tmp_path / "absent", "test")
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("ticket_id,text\nA,my card was charged twice\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing column.*team"):
        routed_split(folder, str(unlabelled))
    other = tmp_path / "other.csv"
    other.write_text("ticket_id,text,team\nA,my card was charged twice,finance\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown team 'finance'"):
        routed_split(folder, str(other))
    assert routed_split(folder, str(other), teams=("finance", "payments"))["team"].tolist() == ["finance"]
