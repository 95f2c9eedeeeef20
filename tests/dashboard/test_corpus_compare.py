"""The Corpus page's "Compare with another scan": other scans of the same input listed, their differences shown."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import app_test
from tests.corpus.conftest import PARTITION, sync_scan, write_csv
from ticketnet.compare import compare_scans

CORPUS = "../pages/corpus.py"


@pytest.fixture(scope="module")
def retrain_scan(corpus_csv, larkfield_retrain, tmp_path_factory):
    out = tmp_path_factory.mktemp("retrain_scan") / "scan"
    sync_scan(corpus_csv, out, larkfield_retrain / "router.pt", "effects", PARTITION)
    return out


def test_another_router_s_scan_of_the_same_input_is_compared(app_env, full_scan, retrain_scan, valid_rows, artifacts,
                                                            tmp_path, monkeypatch):
    root = tmp_path / "scans"
    shutil.copytree(full_scan, root / "shipped")
    shutil.copytree(retrain_scan, root / "routers" / "retrain" / "again")
    sync_scan(write_csv(tmp_path / "other.csv", valid_rows[:30]), root / "other", artifacts.weights, "route", 30)
    monkeypatch.setenv("TICKETNET_SCANS", str(root))
    expected = compare_scans(root / "shipped", root / "routers" / "retrain" / "again", sample=20)

    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    assert any(e.label == "Compare with another scan" for e in at.expander)
    picker = at.selectbox(key="corpus_compare_with")
    assert picker.options == ["retrain · again"]                     # not "other": another input
    changed = next(m for m in at.metric if m.label == "tickets that change team")
    assert changed.value == f"{expected['changed']['count']:,}"
    broken = next(m for m in at.metric if m.label == "broken by B")
    assert broken.value == f"{expected['changed']['broken']:,}"
    sample = next(d.value for d in at.dataframe if "predicted_a" in d.value.columns)
    assert sample["ticket_id"].tolist() == [s["ticket_id"] for s in expected["changed"]["sample"]]
    words = next(d.value for d in at.dataframe if "effect_b" in d.value.columns)
    assert len(words) == sum(len(w) for w in expected["words"].values()) > 0


def test_no_other_scan_says_how_to_make_one(app_env, full_scan, tmp_path, monkeypatch):
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    assert any("No other finished scan of this input" in i.value for i in at.info)


def test_the_routing_delta_chart_reads_the_comparison():
    from dashboard.charts import corpus as corpus_charts

    comparison = {"routing": {"a:b": {"a": 5, "b": 2, "delta": -3, "share_a": 0.5, "share_b": 0.2},
                              "<b>x</b>": {"a": 5, "b": 8, "delta": 3, "share_a": 0.5, "share_b": 0.8}}}
    df = corpus_charts.routing_delta_frame(comparison)
    assert df["team"].tolist() == ["a:b", "<b>x</b>"] and df["change"].tolist() == [-3, 3]
    spec = corpus_charts.routing_delta_chart(comparison).to_dict()
    assert spec["encoding"]["x"]["field"] == "change" and spec["encoding"]["y"]["sort"] == ["a:b", "<b>x</b>"]
