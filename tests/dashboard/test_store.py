"""Split tables on disk: a table stored in an older column layout lives under another name, so it is recomputed
rather than misread."""

from __future__ import annotations

import pandas as pd

from dashboard.data import store

HASHES = ("a" * 16, "b" * 16)


def test_the_long_interpretation_table_does_not_share_a_file_with_the_wide_one():
    wide = store.cache_dir() / "splits" / f"interpret-valid-w{HASHES[0]}-d{HASHES[1]}.parquet"   # layout 1's name
    path = store.table_path("interpret", "valid", *HASHES)
    assert store.TABLE_VERSIONS["interpret"] >= 2
    assert path != wide and path.name.split("-w")[0] == "interpret-valid"


def test_a_head_table_of_the_drop_layout_is_not_read_as_support(tmp_path, monkeypatch):
    monkeypatch.setenv("TICKETNET_CACHE", str(tmp_path))
    old = tmp_path / "splits" / f"heads-valid-w{HASHES[0]}-d{HASHES[1]}.parquet"    # before the support columns
    old.parent.mkdir(parents=True)
    pd.DataFrame({"block": [1], "head": [1], "prob_drop": [0.5]}).to_parquet(old)
    path = store.table_path("heads", "valid", *HASHES)
    assert path != old and path.name == f"heads-valid-w{HASHES[0]}-d{HASHES[1]}-v2.parquet"
    assert store.load_table(path) is None
    assert store.table_path("routed", "valid", *HASHES).name == f"routed-valid-w{HASHES[0]}-d{HASHES[1]}.parquet"


def test_a_missing_table_is_a_stat_and_a_broken_one_is_none(tmp_path, monkeypatch):
    # Every Interpretation run asks for the split-wide tables; before a split is computed there is no file, and
    # that answer must not cost a Parquet reader's exception each time.
    read = []
    monkeypatch.setattr(pd, "read_parquet", lambda path: read.append(path) or pd.DataFrame({"x": [1]}))
    assert store.load_table(tmp_path / "none.parquet") is None and read == []
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not a table")
    monkeypatch.undo()
    assert store.load_table(broken) is None
    good = tmp_path / "good.parquet"
    pd.DataFrame({"x": [1, 2]}).to_parquet(good)
    assert list(store.load_table(good)["x"]) == [1, 2]
