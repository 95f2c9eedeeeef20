"""The Corpus page in AppTest: a scan opens with its summary and reliance chart, filters query the tickets, a pick
reaches the Heads page."""

from __future__ import annotations

import shutil

from dashboard.text import md_escape
from tests.conftest import HEADS, app_test

CORPUS = "../pages/corpus.py"


def test_the_corpus_page_opens_a_scan_filters_and_picks(app_env, full_scan, tmp_path, monkeypatch):
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Corpus"
    assert [m.value for m in at.metric][:2] == ["240", f"{at.metric[1].value}"]
    assert any("level **full**" in c.value for c in at.caption)
    headers = [h.value for h in at.header]
    assert "What the router relies on, per team" in headers and "Tickets" in headers
    assert any("far below" in md.value.lower() for md in at.markdown)
    before = next(c.value for c in at.caption if "tickets match" in c.value)
    assert before.startswith("240 of 240")

    at.text_input(key="corpus_token").set_value("refund").run()
    after = next(c.value for c in at.caption if "tickets match" in c.value)
    n = int(after.split(" of ")[0].replace(",", ""))
    assert 0 < n < 240
    ids = at.selectbox(key="corpus_pick_id").options[1:]
    assert len(ids) == n
    at.selectbox(key="corpus_pick_id").set_value(ids[0]).run()
    assert not at.exception
    assert at.query_params.get("ticket") in ("custom", ["custom"])
    at.switch_page(HEADS).run()
    assert not at.exception and not at.error
    assert any(md_escape(ids[0]) in md.value and "corpus ticket" in md.value for md in at.markdown)


def test_without_a_scan_the_page_offers_to_make_one(app_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "none"))
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception
    assert any(b.label.startswith("Scan the shipped valid and test splits") for b in at.button)
    assert any("No scan yet" in i.value for i in at.info)
