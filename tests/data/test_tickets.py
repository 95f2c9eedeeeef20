"""The strict ticket CSV loader: every malformed file gets one error naming the file and the line."""

import pytest

from ticketnet.data.synth import TEAMS
from ticketnet.data.tickets import DataError, load_split, teams_of

HEADER = "ticket_id,text,team,evidence\n"


def write(tmp_path, content, name="split.csv", mode="w"):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_loads_rows_as_dicts(tmp_path):
    p = write(tmp_path, HEADER + 'T-10001,"Hi, my card was declined",payments,my card was declined\n'
                                 "T-10002,Where is my parcel,delivery,\n")
    rows = load_split(p)
    assert [r["ticket_id"] for r in rows] == ["T-10001", "T-10002"]
    assert rows[0]["text"] == "Hi, my card was declined" and rows[0]["team"] == "payments"
    assert rows[1]["evidence"] == ""


@pytest.mark.parametrize("content,message", [
    ("", "empty file"),
    ("\n\n", "empty file"),
    ("ticket_id,text\nT-1,hello\n", r"line 1: missing column\(s\) team"),
    (HEADER, "no tickets after the header"),
    (HEADER + "T-1,,payments,\n", "line 2: empty text for ticket T-1"),
    (HEADER + "T-1,hello,billing,\n", "line 2: unknown team 'billing'"),
    (HEADER + "T-1,hello, ,\n", "line 2: empty team for ticket T-1"),
    (HEADER + "T-1,hello,payments,\nT-2,hi,returns,\nT-1,again,returns,\n", "line 4: duplicate ticket_id 'T-1' \\(first on line 2\\)"),
    (HEADER + "T-1,hello,payments\n", "line 2: wrong number of fields"),
    (HEADER + "T-1,hello,payments,,extra\n", "line 2: wrong number of fields"),
    (HEADER + 'T-1,hello,payments,\nT-2,"unterminated,payments,\n', "line 3: malformed CSV"),
])
def test_malformed_files_name_the_file_and_line(tmp_path, content, message):
    p = write(tmp_path, content)
    with pytest.raises(DataError, match=message) as err:
        load_split(p, teams=TEAMS)
    assert str(p) in str(err.value)


def test_wrong_encoding_and_binary(tmp_path):
    p = write(tmp_path, (HEADER + "T-1,caf\xe9,payments,\n").encode("latin-1"))
    with pytest.raises(DataError, match=r"line 2: not UTF-8"):
        load_split(p)
    p = write(tmp_path, b"PK\x03\x04\x00\x00binary", name="x.csv")
    with pytest.raises(DataError, match="NUL byte|not UTF-8"):
        load_split(p)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        load_split(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a folder"):
        load_split(tmp_path)


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    p = write(tmp_path, ("\ufeff" + HEADER + "T-1,hello,account,\r\n").encode("utf-8"))
    assert load_split(p)[0]["team"] == "account"


def test_teams_are_the_five_charters():
    assert TEAMS == ("payments", "delivery", "returns", "product", "account")


def test_any_team_name_is_read_exactly_when_no_team_list_is_given(tmp_path):
    p = write(tmp_path, HEADER + 'T-1,hello,Tier-2 Réseau,\nT-2,hi," billing & refunds ",\nT-3,yo,网络,\n')
    assert [r["team"] for r in load_split(p)] == ["Tier-2 Réseau", "billing & refunds", "网络"]
    with pytest.raises(DataError, match="unknown team '网络'"):
        load_split(p, teams=("Tier-2 Réseau", "billing & refunds"))


def test_teams_of_sorts_by_name_or_follows_teams_txt(tmp_path):
    rows = [{"team": t} for t in ("zeta", "Alpha", "beta", "zeta")]
    assert teams_of(rows) == ("Alpha", "beta", "zeta")
    (tmp_path / "teams.txt").write_text("zeta\nbeta\nAlpha\nunused\n")
    assert teams_of(rows, tmp_path) == ("zeta", "beta", "Alpha", "unused")
    (tmp_path / "teams.txt").write_text("zeta\nbeta\n")
    with pytest.raises(DataError, match="does not list the team"):
        teams_of(rows, tmp_path)
    with pytest.raises(DataError, match="only one team"):
        teams_of([{"team": "solo"}] * 3)
    with pytest.raises(DataError, match="201 teams"):
        teams_of([{"team": f"t{i}"} for i in range(201)])


def test_the_shipped_data_names_larkfields_teams_in_the_routers_order():
    from ticketnet import data_dir, load_card

    assert teams_of(load_split(data_dir() / "train.csv"), data_dir()) == TEAMS == load_card().teams
