"""A split table stored in an older layout lives under another name, so it is recomputed rather than misread."""

from dashboard import store


def test_the_long_interpretation_table_does_not_share_a_file_with_the_wide_one():
    hashes = ("w" * 16, "d" * 16)
    wide = store.cache_dir() / "splits" / f"interpret-valid-w{hashes[0]}-d{hashes[1]}.parquet"   # layout 1's name
    assert store.TABLE_VERSIONS["interpret"] >= 2
    assert store.table_path("interpret", "valid", *hashes) != wide
    assert store.table_path("interpret", "valid", *hashes).name.split("-w")[0] == "interpret-valid"
    assert store.table_path("heads", "valid", *hashes).name == f"heads-valid-w{hashes[0]}-d{hashes[1]}.parquet"
