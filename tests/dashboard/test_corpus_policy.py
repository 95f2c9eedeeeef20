"""The Corpus page's routing-policy section: shown for a scan made by a router with a stored policy, else absent."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from dashboard.charts import corpus as corpus_charts
from tests.conftest import app_test, without_policy

CORPUS = "../pages/corpus.py"


@pytest.fixture
def policy_scans(artifacts, valid_rows, tmp_path, monkeypatch):
    """Two route-level scans of 50 valid tickets: "plain" by the shipped router without its policy, "shipped" by a copy of it with a
    stored policy (precision 0.98, LAC at alpha 0.1, fitted on valid's stored predictions)."""
    from tests.corpus.conftest import sync_scan, write_csv
    from ticketnet.card import load_card
    from ticketnet.policy import fit_policy, split_scores, store_policy

    folder = tmp_path / "router"
    shutil.copytree(artifacts.weights.parent, folder, ignore=shutil.ignore_patterns(".*"))
    without_policy(folder)                        # "plain": a router that stores none
    source = write_csv(tmp_path / "in.csv", valid_rows[:50])
    sync_scan(source, tmp_path / "scans" / "plain", folder / "router.pt", "route", 50)
    fit = split_scores(artifacts.weights, "valid", artifacts.data)
    store_policy(folder, fit_policy(fit, load_card(artifacts.weights).teams, precision=0.98, alpha=0.1))
    sync_scan(source, tmp_path / "scans" / "shipped", folder / "router.pt", "route", 50)
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    return tmp_path / "scans"


def test_the_page_shows_the_automation_rate_and_set_sizes_of_a_policy_scan(app_env, policy_scans):
    frame = pd.read_parquet(policy_scans / "shipped" / "tickets")
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    assert "Routing policy" in [h.value for h in at.header]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["automation rate"] == f"{frame['auto'].mean():.1%}"
    assert metrics["to a person"] == f"{int((~frame['auto']).sum()):,}"
    assert metrics["mean set size"] == f"{frame['set_size'].mean():.2f}"
    assert "Prediction set sizes" in [s.value for s in at.subheader]

    at.selectbox(key="corpus_folder").set_value(str(policy_scans / "plain")).run()
    assert not at.exception
    assert "Routing policy" not in [h.value for h in at.header]


def test_the_set_size_chart_has_one_bar_per_size_in_order():
    policy = {"tickets": 10, "set_sizes": {0: 1, 1: 6, 3: 3}}
    frame = corpus_charts.set_size_frame(policy)
    assert frame["set size"].tolist() == ["0", "1", "3"] and frame["share"].tolist() == pytest.approx([.1, .6, .3])
    spec = corpus_charts.set_size_chart(policy).to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["x"]["sort"] == ["0", "1", "3"]
