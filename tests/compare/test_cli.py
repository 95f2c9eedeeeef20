"""`python -m ticketnet compare`: the shipped router against a weaker retrain, checked against its own computation."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score, f1_score

from ticketnet import predictions
from ticketnet.__main__ import main
from ticketnet.data.tickets import load_split


def _table(folder, csv):
    """The router's predictions on `csv`, routed here with the library (independently of ticketnet.compare)."""
    from ticketnet import Router

    return predictions.routed_table(Router.load(folder / "router.pt"), load_split(csv))


def test_shipped_router_against_a_retrain_on_test(artifacts, larkfield_retrain, tmp_path, capsys):
    out = tmp_path / "compare.json"
    assert main(["compare", str(artifacts.weights.parent), str(larkfield_retrain), "--split", "test",
                 "--out", str(out), "--resamples", "400", "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))
    csv = artifacts.data / "test.csv"
    a = _table(artifacts.weights.parent, csv)
    b = _table(larkfield_retrain, csv).set_index("ticket_id").loc[a["ticket_id"]].reset_index()
    ra, rb = a["correct"].to_numpy(), b["correct"].to_numpy()
    broken, fixed = int((ra & ~rb).sum()), int((~ra & rb).sum())
    both = int((~ra & ~rb & (a["predicted"].to_numpy() != b["predicted"].to_numpy())).sum())

    assert result["n"] == len(a) == 1500 and result["resamples"] == 400 and result["seed"] == 3
    assert result["routers"]["a"]["accuracy"]["value"] == round(ra.mean(), 4)
    assert result["routers"]["b"]["accuracy"]["value"] == round(rb.mean(), 4)
    teams = list(result["teams"]["shared"])
    assert result["routers"]["b"]["macro_f1"]["value"] == round(
        f1_score(b["team"], b["predicted"], labels=teams, average="macro", zero_division=0), 4)
    p = binomtest(min(broken, fixed), broken + fixed, 0.5).pvalue
    assert result["mcnemar"]["p_unrounded"] == pytest.approx(p, rel=1e-9)
    assert result["mcnemar"] == {"a_right_b_wrong": broken, "b_right_a_wrong": fixed, "p": round(p, 4),
                                 "p_unrounded": result["mcnemar"]["p_unrounded"]}
    assert (result["flips"]["fixed"], result["flips"]["broken"], result["flips"]["both_wrong"]) == (fixed, broken,
                                                                                                   both)
    assert result["agreement"]["same_team"] == round(float(np.mean(a["predicted"] == b["predicted"])), 4)
    assert result["agreement"]["kappa"] == round(cohen_kappa_score(a["predicted"], b["predicted"]), 4)
    by_pattern = result["flips"]["by_pattern"]
    assert sum(v["broken"] for v in by_pattern.values()) == broken
    assert set(by_pattern) == set(a["pattern"])
    for key in ("accuracy", "macro_f1"):
        iv = result["difference"][key]
        assert iv["low"] <= iv["value"] <= iv["high"]
    # the retrain is much weaker (about 0.60 against 0.94): the verdict and the printout say so
    assert result["verdict"].startswith("B routes significantly worse than A")
    assert f"A right and B wrong on {broken:,}" in printed and result["verdict"] in printed
    assert "by pattern:" in printed


def _disjoint_router(artifacts, tmp_path):
    """The shipped router's files with its teams renamed: the same model, no team in common."""
    folder = tmp_path / "renamed"
    folder.mkdir()
    for p in predictions.weights_files(artifacts.weights):
        shutil.copy(p, folder / p.name)
    card = json.loads((folder / "router.json").read_text(encoding="utf-8"))
    card["teams"] = [f"other {t}" for t in card["teams"]]
    (folder / "router.json").write_text(json.dumps(card), encoding="utf-8")
    return folder


@pytest.mark.parametrize("case", ["missing router", "unknown split", "no labels", "disjoint teams", "resamples"])
def test_bad_input_is_one_readable_line(case, artifacts, tmp_path, capsys):
    shipped = str(artifacts.weights.parent)
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("ticket_id,text\nA,my card was charged twice\n", encoding="utf-8")
    argv, message = {
        "missing router": (["compare", shipped, str(tmp_path / "absent")], "not a folder"),
        "unknown split": (["compare", shipped, shipped, "--split", "tset"], "unknown split 'tset'"),
        "no labels": (["compare", shipped, shipped, "--split", str(unlabelled)], "missing column(s) team"),
        "disjoint teams": (["compare", shipped, str(_disjoint_router(artifacts, tmp_path))], "share no team"),
        "resamples": (["compare", shipped, shipped, "--resamples", "0"], "--resamples 0"),
    }[case]
    out = tmp_path / "compare.json"
    assert main([*argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ticketnet compare: error: ") and message in err and "\n" not in err
    assert not out.exists()
