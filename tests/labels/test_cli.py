"""`python -m ticketnet label-issues`: the ranked CSV, its summary and the cache; bad input is one line and exit 1."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from ticketnet.__main__ import main


@pytest.fixture(scope="module")
def helpdesk(other_routers, tmp_path_factory):
    """The 4-team router of odd names, its training split with one formula-looking ticket added."""
    folder = tmp_path_factory.mktemp("labels") / "helpdesk"
    shutil.copytree(other_routers / "helpdesk", folder)
    train = folder / "data" / "train.csv"
    rows = list(csv.DictReader(train.open(encoding="utf-8")))
    with train.open("a", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerow(
            ["=HYPERLINK(\"x\")", "=cmd printer jam again", rows[0]["team"]] + [""] * (len(rows[0]) - 3))
    return folder


def test_the_command_writes_the_ranked_csv_the_summary_and_the_cache(helpdesk, tmp_path, capsys):
    out = tmp_path / "issues.csv"
    assert main(["label-issues", "--router", str(helpdesk), "--source", "baseline", "--folds", "3",
                 "--scheduler", "synchronous", "--evidence-rows", "5", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "tickets flagged (baseline out-of-fold, 3 folds" in said
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    n = len(list(csv.DictReader((helpdesk / "data" / "train.csv").open(encoding="utf-8"))))
    assert len(rows) == n and [int(r["rank"]) for r in rows] == list(range(1, n + 1))
    assert sum(bool(r["evidence_given"]) for r in rows) == 5
    formula = next(r for r in rows if "cmd printer" in r["text"])
    assert formula["ticket_id"].startswith("'=") and formula["text"].startswith("'=")
    summary = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    teams = json.loads((helpdesk / "router.json").read_text(encoding="utf-8"))["teams"]
    assert summary["teams"] == teams and summary["settings"]["source"] == "baseline"
    assert {q["team"] for q in summary["team_quality"]} == set(teams)
    assert summary["settings"]["folds"] == 3 and summary["flagged"] == sum(r["flagged"] == "True" for r in rows)
    cached = helpdesk / "labels" / "oof-baseline-train-k3.parquet"
    assert cached.is_file()
    # a second run reads the cache (the folds are not refitted)
    assert main(["label-issues", "--router", str(helpdesk), "--source", "baseline", "--folds", "3",
                 "--scheduler", "synchronous", "--evidence-rows", "0", "--out", str(out)]) == 0
    assert "reusing the out-of-fold probabilities" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--router", "/nonexistent/router"], "not a folder"),
    (["--folds", "1"], "--folds must be at least 2"),
    (["--folds", "400"], "fewer tickets than --folds 400"),
    (["--split", "nosuch"], "--split nosuch: no such split"),
    (["--epochs", "0"], "--epochs must be at least 1"),
    (["--workers", "0"], "--workers must be at least 1"),
    (["--evidence-rows", "-1"], "--evidence-rows must be 0 or more"),
    (["--out", "issues.txt"], "name a .csv file"),
    (["--out", "/nonexistent/dir/issues.csv"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_1(helpdesk, tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    given = dict(zip(args[::2], args[1::2]))
    argv = ["label-issues", "--router", given.pop("--router", str(helpdesk)),
            "--out", given.pop("--out", str(tmp_path / "i.csv")), "--scheduler", "synchronous", "--source",
            "baseline" if "--epochs" not in given else "router"]
    for k, v in given.items():
        argv += [k, v]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ticketnet label-issues: error:") and message in err and "\n" not in err
    assert not (tmp_path / "i.csv").exists()
