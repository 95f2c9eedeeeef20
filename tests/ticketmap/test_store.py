"""The map is computed once per router and split, kept on disk under their hashes, and recomputed for new weights."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from ticketnet import ticketmap
from ticketnet.ticketmap import MapStore
from ticketnet.ticketmap import store as map_store


@pytest.fixture
def small_router_folder(artifacts, tmp_path):
    """A copy of the shipped router's files and a 300-ticket valid split and 2,000-ticket train split."""
    folder = tmp_path / "router"
    folder.mkdir()
    for name in ("router.pt", "vocab.json", "router.json"):
        shutil.copy(artifacts.weights.parent / name, folder / name)
    for split, n in (("valid", 300), ("train", 2_000)):
        lines = (artifacts.data / f"{split}.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        (tmp_path / f"{split}.csv").write_text("".join(lines[:n + 1]), encoding="utf-8")
    return folder


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = map_store.pooled_of_texts

    def counted(router, texts, workers=1):
        calls.append(len(texts))
        return real(router, texts, workers)

    monkeypatch.setattr(map_store, "pooled_of_texts", counted)
    return calls


def test_a_split_map_is_computed_once_and_read_back_from_disk(small_router_folder, tmp_path, monkeypatch):
    from ticketnet import Router

    calls = _counting(monkeypatch)
    weights, csv = small_router_folder / "router.pt", tmp_path / "valid.csv"
    store = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2)
    first = store.split_map("PCA", "valid", csv)
    assert calls == [300]
    assert list(first.columns) == ["ticket_id", "text", "team", "predicted", "confidence", "correct", "x", "y"]
    again = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2).split_map("PCA", "valid", csv)
    pd.testing.assert_frame_equal(first, again)
    assert calls == [300], "the second store must read the stored map, not route again"
    store.split_map("UMAP", "valid", csv)
    assert calls == [300], "UMAP reuses the stored pooled vectors"
    assert sorted(p.name.split("-w")[0] for p in (tmp_path / "maps").iterdir()) == ["map-pca-valid", "map-umap-valid",
                                                                                    "pooled-valid"]


def test_changed_weights_or_data_are_never_served_an_old_map(small_router_folder, tmp_path, monkeypatch):
    from ticketnet import Router

    calls = _counting(monkeypatch)
    weights, csv = small_router_folder / "router.pt", tmp_path / "valid.csv"
    MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2).split_map("PCA", "valid", csv)
    meta = json.loads((small_router_folder / "router.json").read_text(encoding="utf-8"))
    meta["note"] = "retrained"                          # any byte of any of the three files is a new router
    (small_router_folder / "router.json").write_text(json.dumps(meta), encoding="utf-8")
    MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2).split_map("PCA", "valid", csv)
    assert calls == [300, 300]
    csv.write_text("".join(csv.read_text(encoding="utf-8").splitlines(keepends=True)[:201]), encoding="utf-8")
    table = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2).split_map("PCA", "valid", csv)
    assert calls == [300, 300, 200] and len(table) == 200


def test_an_unreadable_stored_file_is_recomputed(small_router_folder, tmp_path, monkeypatch):
    from ticketnet import Router

    calls = _counting(monkeypatch)
    weights, csv = small_router_folder / "router.pt", tmp_path / "valid.csv"
    store = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2)
    store.pooled("valid", csv)
    store.pooled_path("valid", csv).write_bytes(b"not an npz")
    again = store.pooled("valid", csv)
    assert calls == [300, 300] and again.vectors.shape == (300, 64)


def test_a_split_over_the_limit_is_mapped_on_its_seeded_sample(small_router_folder, tmp_path):
    from ticketnet import Router

    weights, csv = small_router_folder / "router.pt", tmp_path / "train.csv"
    store = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2, limit=500)
    table = store.split_map("PCA", "train", csv)
    pooled = store.pooled("train", csv)
    keep = ticketmap.seeded_sample(2_000, 500)
    assert table["ticket_id"].tolist() == pooled.ticket_ids[keep].tolist()
    # Fitted on the sample alone: the same as PCA of the sample's vectors.
    assert np.array_equal(table[["x", "y"]].to_numpy(), ticketmap.project(pooled.vectors[keep], "PCA"))


def test_neighbours_are_training_tickets_with_their_labels_and_never_the_ticket_itself(small_router_folder, tmp_path):
    from ticketnet import Router
    from ticketnet.data.tickets import load_split

    weights, csv = small_router_folder / "router.pt", tmp_path / "train.csv"
    store = MapStore(tmp_path / "maps", Router.load(weights), weights, workers=2)
    pooled = store.pooled("train", csv)
    found = store.neighbours(pooled.vectors[11], csv, exclude_id=str(pooled.ticket_ids[11]))
    assert found["rank"].tolist() == list(range(1, 11)) and found["distance"].is_monotonic_increasing
    assert str(pooled.ticket_ids[11]) not in set(found["ticket_id"])
    labels = {r["ticket_id"]: r["team"] for r in load_split(csv)}
    assert all(labels[t] == team for t, team in zip(found["ticket_id"], found["team"]))
