"""The corpus scan on an encoder router (a small random BERT fine-tuned on four teams): the tickets table routes as
`predict_encoded`, the effects are `word_effects`', level full is refused, and the Corpus page shows the scan."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from tests.corpus.conftest import sync_scan
from tests.encoder.conftest import make_small_base, write_splits
from ticketnet.catalog import weights_in

N = 30


@pytest.fixture(scope="module")
def encoder_router(tmp_path_factory):
    """(router folder, its weights file, the data folder) of a small fine-tuned encoder router."""
    from ticketnet.encoder.finetune import EncoderRecipe, fine_tune

    base = make_small_base(tmp_path_factory.mktemp("base"))
    data = write_splits(tmp_path_factory.mktemp("splits"), sizes=(("train", 80), ("valid", 40), ("test", N)))
    routers = tmp_path_factory.mktemp("routers")
    fine_tune(data, routers / "small-bert", EncoderRecipe(encoder=str(base), epochs=2, lr=1e-3, train_blocks=1,
                                                          batch_size=8), log=lambda m: None)
    return routers / "small-bert", weights_in(routers / "small-bert"), data


@pytest.fixture(scope="module")
def loaded(encoder_router):
    from ticketnet.loading import load_router

    return load_router(encoder_router[1])


def _rows(data) -> list[dict]:
    with open(data / "test.csv", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _tickets(out) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((out / "tickets").glob("*.parquet"))], ignore_index=True)


@pytest.fixture(scope="module")
def effects_scan(encoder_router, tmp_path_factory):
    _, weights, data = encoder_router
    out = tmp_path_factory.mktemp("encoder_scan") / "scan"
    summary = sync_scan(data / "test.csv", out, weights, "effects", 12)
    return out, summary


def test_route_level_gives_predict_encoded_probabilities_and_the_cards_flags(encoder_router, loaded, tmp_path):
    _, weights, data = encoder_router
    summary = sync_scan(data / "test.csv", tmp_path / "scan", weights, "route", 12)
    rows = _rows(data)
    tickets = _tickets(tmp_path / "scan")
    assert len(tickets) == N == summary["tickets"] and tickets["ticket_id"].tolist() == [r["ticket_id"] for r in rows]
    encoded = [loaded.encode(r["text"]) for r in rows]
    probs = loaded.predict_encoded(encoded).double()
    stored = torch.from_numpy(np.stack(tickets["probabilities"].to_numpy()).astype(np.float64))
    assert (stored - probs).abs().max() < 1e-6
    assert (torch.tensor(tickets["confidence"].to_numpy()) - probs.max(1).values).abs().max() < 1e-6
    assert tickets["predicted"].tolist() == [loaded.teams[k] for k in probs.argmax(1).tolist()]
    for i in (0, 7):
        a = loaded.assess_encoded(encoded[i])
        assert bool(tickets["low_confidence"][i]) == a.low_confidence and bool(tickets["unfamiliar"][i]) == a.unfamiliar
        assert tickets["distance"][i] == pytest.approx(float(loaded.distance(loaded.pooled([encoded[i]]))[0]), abs=1e-4)
    assert tickets["tokens"][0].tolist() == sorted({w.lower() for w in encoded[0].words})
    assert summary["router_kind"] == "encoder" and summary["flags"]["unfamiliar"] == int(tickets["unfamiliar"].sum())
    assert summary["accuracy"] == pytest.approx(float((tickets["predicted"] == tickets["label"]).mean()))
    assert not (tmp_path / "scan" / "tokens.parquet").exists()


def test_effects_level_gives_word_effects_per_word_and_keys_the_tokens_table_by_word(effects_scan, loaded,
                                                                                      encoder_router):
    from ticketnet.encoder.inspection import inspect_ticket
    from ticketnet.encoder.removal import word_effects
    from ticketnet.interpret.metrics.agreement import kendall_tau

    out, summary = effects_scan
    tickets = _tickets(out)
    assert len(tickets) == N and summary["level"] == "effects"
    text = tickets["text"][3]
    ins = inspect_ticket(loaded, text)
    we = word_effects(loaded, ins, loaded.teams.index(tickets["predicted"][3]))
    best = int(torch.argsort(we.removed.double(), descending=True, stable=True)[0])
    assert tickets["top_effect_1"][3] == we.words[best].lower()
    assert tickets["top_effect_1_value"][3] == pytest.approx(float(we.removed[best]), abs=1e-6)
    first = int(torch.argsort(we.rollout.double(), descending=True, stable=True)[0])
    assert tickets["top_rollout_1"][3] == we.words[first].lower()
    tau = kendall_tau(we.rollout, we.removed)
    assert tickets["tau rollout"][3] == pytest.approx(tau, abs=1e-6)
    assert tickets["disagreement"][3] == pytest.approx((1 - tau) / 2, abs=1e-6)
    tokens = pd.read_parquet(out / "tokens.parquet")
    team = tickets["predicted"][3]
    # A word's tickets and mean effect over the tickets routed to its team, each ticket's effect averaged over
    # that word's occurrences, as the Tiny scan keys tokens.
    word = we.words[best].lower()
    seen, effects = 0, []
    for t, p in zip(tickets["text"], tickets["predicted"]):
        if p != team:
            continue
        w = word_effects(loaded, inspect_ticket(loaded, t), loaded.teams.index(team))
        hits = [float(e) for x, e in zip(w.words, w.removed) if x.lower() == word]
        if hits:
            seen += 1
            effects.append(sum(hits) / len(hits))
    row = tokens[(tokens["team"] == team) & (tokens["token"] == word)].iloc[0]
    assert row["tickets"] == seen and row["mean_effect"] == pytest.approx(sum(effects) / seen, abs=1e-6)
    assert set(summary["tau"]) == {"rollout", "last layer", "mean attention b1", "mean attention b2", "random"}
    assert summary["aopc"] == {}


def test_level_full_is_refused_in_one_line_naming_the_levels_that_work(encoder_router, tmp_path):
    from ticketnet.__main__ import main

    folder, weights, data = encoder_router
    with pytest.raises(ValueError) as info:
        sync_scan(data / "test.csv", tmp_path / "scan", weights, "full", 12)
    message = str(info.value)
    assert "\n" not in message and "route or effects" in message and "ERASER" in message
    assert not (tmp_path / "scan").exists()
    assert main(["scan", str(data / "test.csv"), "--out", str(tmp_path / "cli"), "--router", str(folder),
                 "--scheduler", "synchronous", "--level", "full"]) == 1


def test_the_command_line_scans_an_encoder_router_folder(encoder_router, tmp_path, capsys):
    from ticketnet.__main__ import main

    folder, _, data = encoder_router
    assert main(["scan", str(data / "test.csv"), "--out", str(tmp_path / "cli"), "--router", str(folder),
                 "--scheduler", "synchronous", "--level", "route"]) == 0
    said = capsys.readouterr().out
    assert f"scanned {N} tickets at level route" in said and "unlike the training tickets" in said


def test_two_dask_workers_load_the_encoder_router_and_give_the_same_tables(effects_scan, encoder_router, tmp_path):
    _, weights, data = encoder_router
    out, _ = effects_scan
    from ticketnet.corpus.engine import run_scan

    summary = run_scan(data / "test.csv", tmp_path / "scan", level="effects", workers=2, partition_size=12,
                       weights=weights)
    assert summary["run"]["workers"] == 2
    a, b = _tickets(out), _tickets(tmp_path / "scan")
    pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-6)
    ta = pd.read_parquet(out / "tokens.parquet")
    tb = pd.read_parquet(tmp_path / "scan" / "tokens.parquet")
    pd.testing.assert_frame_equal(ta, tb, check_exact=False, atol=1e-6)
    manifest = json.loads((tmp_path / "scan" / "manifest.json").read_text())
    assert manifest["state"] == "complete" and all(p["state"] == "done" for p in manifest["partitions"])


def test_the_corpus_page_shows_an_encoder_scan(effects_scan, encoder_router, tmp_path, monkeypatch):
    import shutil

    from tests.conftest import app_test

    folder, _, data = encoder_router
    out, summary = effects_scan
    monkeypatch.setenv("TICKETNET_ROUTERS", str(folder.parent))
    monkeypatch.setenv("TICKETNET_DATA", str(data))              # the splits it was fine-tuned on
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    shutil.copytree(out, tmp_path / "scans" / "routers" / folder.name / "shipped")
    at = app_test(timeout=120, router=folder.name)
    at.switch_page("../pages/corpus.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    shown = {m.label: m.value for m in at.metric}
    assert shown["tickets"] == f"{N}" and "unlike the training tickets" in shown
    assert shown["unlike the training tickets"] == f"{summary['flags']['unfamiliar']:,}"
    listed = at.dataframe[-1].value
    assert len(listed) == N and {"top_effect_1", "disagreement", "unfamiliar"} <= set(listed.columns)
    assert not [i for i in at.info if "not built" in i.value]
    assert not any(math.isnan(v) for v in listed["confidence"])


def test_with_no_scan_the_page_offers_an_encoder_router_route_first_or_effects(encoder_router, tmp_path, monkeypatch):
    from tests.conftest import app_test

    folder, _, data = encoder_router
    monkeypatch.setenv("TICKETNET_ROUTERS", str(folder.parent))
    monkeypatch.setenv("TICKETNET_DATA", str(data))
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    at = app_test(timeout=120, router=folder.name)
    at.switch_page("../pages/corpus.py").run()
    assert not at.exception, [e.message for e in at.exception]
    level = at.button_group(key="corpus_scan_level")
    assert [o.content for o in level.proto.options] == ["route", "effects"] and level.value == "route"
    said = " ".join(i.value for i in at.info)
    assert "No scan yet" in said and "at level *route*" in said and "not built" not in said
