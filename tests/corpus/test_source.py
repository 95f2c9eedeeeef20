"""Bad input stops with one line naming the file and the row, before any work is sent out."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.corpus.conftest import write_csv
from ticketnet.__main__ import main
from ticketnet.corpus.source import input_files, open_source, read_partition
from ticketnet.data.synth import TEAMS
from ticketnet.data.tickets import DataError

ROWS = [{"ticket_id": "a1", "text": "My card was charged twice", "team": "payments"},
        {"ticket_id": "a2", "text": "Where is my parcel?", "team": ""},
        {"ticket_id": "a3", "text": "How do I fit the blade?", "team": "product"}]


def _check(path, tmp_path):
    return open_source(path, tmp_path / "staging", 2, TEAMS)


def test_a_csv_is_staged_in_partitions_and_read_back(tmp_path):
    src = _check(write_csv(tmp_path / "t.csv", ROWS), tmp_path)
    assert src.tickets == 3 and src.labelled and [(p.start, p.stop, p.row0) for p in src.partitions] == [(0, 2, 0), (2, 3, 2)]
    assert read_partition(src.partitions[1]) == [{"ticket_id": "a3", "text": "How do I fit the blade?", "team": "product"}]
    assert read_partition(src.partitions[0])[1]["team"] is None


def test_a_folder_of_parquet_and_csv(tmp_path):
    pd.DataFrame(ROWS[:2]).to_parquet(tmp_path / "one.parquet")
    write_csv(tmp_path / "two.csv", [{"ticket_id": "b1", "text": "refund please"}], ("ticket_id", "text"))
    src = _check(tmp_path, tmp_path / "x")
    assert src.tickets == 3 and [p.row0 for p in src.partitions] == [0, 2]
    assert [r["ticket_id"] for p in src.partitions for r in read_partition(p)] == ["a1", "a2", "b1"]


@pytest.mark.parametrize("case, expected", [
    ("missing", "line 1: missing column(s) text"),
    ("empty", "row 2 (line 3): empty text for ticket a2"),
    ("blank", "row 2 (line 3): ticket a2 has no words"),
    ("duplicate", "row 3 (line 4): duplicate ticket_id 'a1'"),
    ("team", "row 1 (line 2): unknown team 'sales'"),
    ("latin1", "line 3: not UTF-8 text"),
    ("header only", "no tickets after the header line"),
])
def test_bad_csv_names_the_file_and_row(tmp_path, case, expected):
    path = tmp_path / "bad.csv"
    rows = [dict(r) for r in ROWS]
    if case == "missing":
        write_csv(path, rows, ("ticket_id", "team"))
    elif case == "empty":
        rows[1]["text"] = "   "
    elif case == "blank":
        rows[1]["text"] = "\u200b\x00"
    elif case == "duplicate":
        rows[2]["ticket_id"] = "a1"
    elif case == "team":
        rows[0]["team"] = "sales"
    if case == "latin1":
        path.write_bytes("ticket_id,text\na1,fine\na2,caf\xe9 cr\xe8me\n".encode("latin-1"))
    elif case == "header only":
        path.write_text("ticket_id,text\n")
    elif case != "missing":
        write_csv(path, rows)
    with pytest.raises(DataError) as err:
        _check(path, tmp_path)
    assert str(path) in str(err.value) and expected in str(err.value)
    assert not list((tmp_path / "staging").glob("*.parquet"))       # nothing half-staged is left


def test_bad_parquet_and_duplicates_across_files(tmp_path):
    pd.DataFrame({"ticket_id": ["x"], "body": ["hi"]}).to_parquet(tmp_path / "a.parquet")
    with pytest.raises(DataError, match=r"a\.parquet: missing column\(s\) text"):
        _check(tmp_path / "a.parquet", tmp_path)
    folder = tmp_path / "two"
    folder.mkdir()
    pd.DataFrame(ROWS).to_parquet(folder / "1.parquet")
    pd.DataFrame([{"ticket_id": "z", "text": "ok"}, {"ticket_id": "a2", "text": "again"}]).to_parquet(folder / "2.parquet")
    with pytest.raises(DataError, match=r"2\.parquet, row 2: duplicate ticket_id 'a2' \(first at .*1\.parquet, row 2\)"):
        _check(folder, tmp_path)
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        _check(tmp_path / "junk.parquet", tmp_path)
    with pytest.raises(DataError, match="file not found"):
        input_files(tmp_path / "nothing")


def test_the_cli_prints_one_line_and_exits_1_before_any_work(tmp_path, capsys, artifacts):
    bad = write_csv(tmp_path / "bad.csv", [ROWS[0], {**ROWS[1], "ticket_id": "a1"}])
    code = main(["scan", str(bad), "--out", str(tmp_path / "scan"), "--weights", str(artifacts.weights)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[-1].startswith("ticketnet scan: error: ") and "bad.csv, row 2 (line 3): duplicate ticket_id" in err[-1]
    assert not (tmp_path / "scan" / "tickets").exists()
