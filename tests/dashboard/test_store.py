"""Split tables on disk: a table stored in an older column layout is never read as the current one."""

from __future__ import annotations

import pandas as pd

from dashboard.data import store


def test_a_new_layout_gets_a_new_file_so_an_old_table_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TICKETNET_CACHE", str(tmp_path))
    old = tmp_path / "splits" / f"heads-valid-w{'a' * 16}-d{'b' * 16}.parquet"    # the layout before support columns
    old.parent.mkdir(parents=True)
    pd.DataFrame({"block": [1], "head": [1], "prob_drop": [0.5]}).to_parquet(old)
    path = store.table_path("heads", "valid", "a" * 16, "b" * 16)
    assert path != old and path.name.startswith("heads-v2-valid-")
    assert store.load_table(path) is None
    assert store.table_path("routed", "valid", "a" * 16, "b" * 16).name.startswith("routed-valid-")
