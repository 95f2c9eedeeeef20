"""compare-scans: two real scans of one input by two routers, checked against pandas; different inputs refused."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.corpus.conftest import PARTITION, sync_scan, write_csv
from ticketnet.__main__ import main
from ticketnet.compare.scans import compare_scans


@pytest.fixture(scope="module")
def retrain_scan(corpus_csv, larkfield_retrain, tmp_path_factory):
    """The same CSV as `full_scan`, scanned at effects level by the weaker retrain."""
    out = tmp_path_factory.mktemp("retrain_scan") / "scan"
    sync_scan(corpus_csv, out, larkfield_retrain / "router.pt", "effects", PARTITION)
    return out


def _tickets(scan):
    return pd.concat([pd.read_parquet(p, columns=["row", "ticket_id", "predicted", "confidence", "label"])
                      for p in sorted((scan / "tickets").glob("*.parquet"))]).set_index("row").sort_index()


def test_two_routers_on_one_input(full_scan, retrain_scan, tmp_path, capsys):
    result = compare_scans(full_scan, retrain_scan, sample=4, words=3, min_word_tickets=3)
    a, b = _tickets(full_scan), _tickets(retrain_scan)
    changed = a["predicted"] != b["predicted"]
    assert result["tickets"] == len(a) == 240
    assert result["changed"]["count"] == int(changed.sum()) > 0
    assert result["changed"]["fixed"] == int((changed & (b["predicted"] == a["label"])).sum())
    assert result["changed"]["broken"] == int((changed & (a["predicted"] == a["label"])).sum())
    assert [s["ticket_id"] for s in result["changed"]["sample"]] == a.loc[changed, "ticket_id"].head(4).tolist()
    for team, r in result["routing"].items():
        assert (r["a"], r["b"]) == (int((a["predicted"] == team).sum()), int((b["predicted"] == team).sum()))
        assert r["delta"] == r["b"] - r["a"]
    assert sum(f["tickets"] for f in result["changed"]["flows"]) == result["changed"]["count"]
    assert result["accuracy"]["a"] == round(float((a["predicted"] == a["label"]).mean()), 4)

    ta, tb = (pd.read_parquet(s / "tokens.parquet") for s in (full_scan, retrain_scan))
    both = ta.merge(tb, on=["team", "token"], suffixes=("_a", "_b"))
    both = both[(both["tickets_a"] >= 3) & (both["tickets_b"] >= 3)]
    both["delta"] = both["mean_effect_b"] - both["mean_effect_a"]
    both = both[both["delta"] != 0]
    for team, words in result["words"].items():
        expected = both[both["team"] == team].assign(size=lambda d: d["delta"].abs())
        expected = expected.sort_values(["size", "token"], ascending=[False, True]).head(3)
        assert [w["token"] for w in words] == expected["token"].tolist()
        assert [w["delta"] for w in words] == [round(x, 4) for x in expected["delta"]]
    assert set(result["words"]) == set(both["team"])

    out = tmp_path / "scans.json"
    assert main(["compare-scans", str(full_scan), str(retrain_scan), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["changed"]["count"] == result["changed"]["count"]
    assert f"{result['changed']['count']:,} tickets" in printed and "words whose mean deletion effect" in printed


def test_a_scan_against_itself_changes_nothing(full_scan):
    result = compare_scans(full_scan, full_scan)
    assert result["changed"]["count"] == 0 and result["words"] == {}
    assert all(r["delta"] == 0 for r in result["routing"].values())


def test_scans_of_different_inputs_are_refused(full_scan, valid_rows, artifacts, tmp_path, capsys):
    other = sync_scan(write_csv(tmp_path / "other.csv", valid_rows[:30]), tmp_path / "other", artifacts.weights,
                      "route", 30)
    assert other["tickets"] == 30
    with pytest.raises(ValueError, match="different inputs"):
        compare_scans(full_scan, tmp_path / "other")
    assert main(["compare-scans", str(full_scan), str(tmp_path / "other")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ticketnet compare-scans: error: the scans read different inputs") and "\n" not in err
