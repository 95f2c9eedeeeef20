"""An export file: its columns found or named, every kind of bad row refused in one line, a stratified split."""

from __future__ import annotations

import pandas as pd
import pytest

from ticketnet.data.export import ExportColumns, min_per_team, parse_fractions, read_export, split_export, splits_csv
from ticketnet.data.tickets import DataError, parse_tickets


def _export(tmp_path, rows, name="export.csv"):
    path = tmp_path / name
    df = pd.DataFrame(rows)
    if name.endswith(".parquet"):
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def _rows(teams=("billing", "tier-2"), n=10):
    return [{"ticket_id": f"X-{t}-{i}", "subject": f"subject {i}", "body": f"{t} body number {i}", "queue": t}
            for t in teams for i in range(n)]


def test_text_columns_are_joined_and_any_team_name_is_kept(tmp_path):
    rows = _rows(("Billing & Refunds", "réseau", "网络"), 3)
    for name in ("export.csv", "export.parquet"):
        found = read_export(_export(tmp_path, rows, name), ExportColumns(("subject", "body"), "queue"))
        assert not found.ids_made_up
        assert [r["team"] for r in found.rows][::3] == ["Billing & Refunds", "réseau", "网络"]
        assert found.rows[0] == {"ticket_id": "X-Billing & Refunds-0", "text": "subject 0\nBilling & Refunds body number 0",
                                 "team": "Billing & Refunds"}


def test_ids_are_made_up_when_the_file_has_none(tmp_path):
    rows = [{"text": f"hello {i}", "team": "a" if i % 2 else "b"} for i in range(4)]
    found = read_export(_export(tmp_path, rows))
    assert found.ids_made_up and [r["ticket_id"] for r in found.rows] == ["R-000001", "R-000002", "R-000003", "R-000004"]
    with pytest.raises(DataError, match=r"no column 'ticket_id' \(columns found: text, team\)"):
        read_export(_export(tmp_path, rows), ExportColumns(id_given=True))


@pytest.mark.parametrize("change,message", [
    (lambda rs: [{k: v for k, v in r.items() if k != "queue"} for r in rs], r"no column 'queue' \(columns found: ticket_id, subject, body\)"),
    (lambda rs: rs[:1] + [{**rs[1], "ticket_id": rs[0]["ticket_id"]}] + rs[2:], r"row 2: duplicate ticket id 'X-billing-0' \(first on row 1\)"),
    (lambda rs: rs[:2] + [{**rs[2], "subject": " ", "body": ""}] + rs[3:], "row 3: empty text for ticket X-billing-2"),
    (lambda rs: rs[:3] + [{**rs[3], "queue": ""}] + rs[4:], "row 4: empty team for ticket X-billing-3"),
])
def test_bad_rows_are_named(tmp_path, change, message):
    with pytest.raises(DataError, match=message):
        read_export(_export(tmp_path, change(_rows())), ExportColumns(("subject", "body"), "queue"))


def test_files_that_are_not_exports(tmp_path):
    bad = tmp_path / "latin.csv"
    bad.write_bytes("ticket_id,text,team\n1,caf\xe9,a\n".encode("latin-1"))
    with pytest.raises(DataError, match="line 2: not UTF-8"):
        read_export(bad)
    with pytest.raises(DataError, match="file not found"):
        read_export(tmp_path / "absent.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataError, match="empty file"):
        read_export(tmp_path / "empty.csv")
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        read_export(tmp_path / "x.parquet")


def test_the_split_is_stratified_seeded_and_complete():
    rows = [{"ticket_id": f"{t}{i}", "text": "x", "team": t} for t, n in (("a", 50), ("b", 30), ("c", 20)) for i in range(n)]
    parts = split_export(rows, (0.8, 0.1, 0.1), seed=3)
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [80, 10, 10]
    for name, part in parts.items():
        assert {r["team"] for r in part} == {"a", "b", "c"}, name
    ids = [r["ticket_id"] for part in parts.values() for r in part]
    assert sorted(ids) == sorted(r["ticket_id"] for r in rows)
    assert split_export(rows, (0.8, 0.1, 0.1), seed=3) == parts
    assert split_export(rows, (0.8, 0.1, 0.1), seed=4) != parts


def test_teams_too_small_or_alone_are_refused():
    rows = [{"ticket_id": f"{t}{i}", "text": "x", "team": t} for t, n in (("big", 40), ("tiny", 4)) for i in range(n)]
    with pytest.raises(DataError, match=r"team 'tiny' has 4 ticket\(s\); a 0.8/0.1/0.1 split needs at least 10"):
        split_export(rows)
    with pytest.raises(DataError, match="only one team"):
        split_export(rows[:40])
    assert min_per_team((0.8, 0.1, 0.1)) == 10 and min_per_team((0.6, 0.2, 0.2)) == 5


def test_fractions_are_checked():
    assert parse_fractions("0.7,0.15,0.15") == (0.7, 0.15, 0.15)
    for bad in ("0.8,0.2", "0.8,0.1,0.2", "a,b,c", "1,0,0"):
        with pytest.raises(ValueError, match="--split"):
            parse_fractions(bad)


def test_a_written_split_reads_back_exactly():
    rows = [{"ticket_id": "1", "text": 'a "quoted",\nmultiline text', "team": "Tier 2, EMEA"}]
    assert parse_tickets(splits_csv(rows).decode("utf-8"), "split") == rows


def test_without_a_text_column_the_usual_ones_are_read(tmp_path):
    rows = [{"ticket_id": "1", "subject": "Router down", "body": "No light on it", "team": "network"},
            {"ticket_id": "2", "subject": "", "body": "Bill too high", "team": "billing"}]
    found = read_export(_export(tmp_path, rows))
    assert found.text_columns == ("subject", "body")
    assert [r["text"] for r in found.rows] == ["Router down\nNo light on it", "Bill too high"]
    with pytest.raises(DataError, match="no column 'text'"):
        read_export(_export(tmp_path, rows), ExportColumns(text_given=True))
