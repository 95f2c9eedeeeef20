"""`python -m ticketnet policy` on a router that is not Larkfield's, and what predict and scan then write."""

from __future__ import annotations

import csv
import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from tests.conftest import without_policy
from ticketnet.__main__ import main
from ticketnet.card import card_json_bytes
from ticketnet.policy import load_policy

HELPDESK_ALPHA = "0.2"            # its valid split holds 12 tickets: α = 0.05 needs 19 (refused, tested below)


@pytest.fixture
def helpdesk(other_routers, tmp_path):
    """A copy of the `helpdesk` router (4 odd team names, its own data/), never the fixture's folder itself."""
    folder = tmp_path / "helpdesk"
    shutil.copytree(other_routers / "helpdesk", folder)
    return folder


@pytest.fixture
def tickets_csv(helpdesk, tmp_path):
    rows = list(csv.DictReader(open(helpdesk / "data" / "test.csv", encoding="utf-8")))
    path = tmp_path / "in.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["ticket_id", "text"])
        w.writerows([r["ticket_id"], r["text"]] for r in rows)
    return path


def _predict(router, source, out) -> str:
    assert main(["predict", "--router", str(router), str(source), "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_a_router_without_a_policy_predicts_exactly_as_before(helpdesk, tickets_csv, tmp_path):
    from ticketnet.router import Router

    got = _predict(helpdesk, tickets_csv, tmp_path / "plain.csv")
    # The CSV as predict wrote it before policies existed, rebuilt from the router's probabilities.
    router = Router.load(helpdesk / "router.pt")
    rows = list(csv.DictReader(open(tickets_csv, encoding="utf-8")))
    encoded = [router.encode(r["text"]) for r in rows]
    lines = [",".join(["ticket_id", "team", "confidence", *(f"p_{t}" for t in router.teams), "truncated",
                       "set_aside_chars"])]
    for r, enc, p in zip(rows, encoded, router.predict_encoded(encoded)):
        k = int(p.argmax())
        lines.append(",".join([r["ticket_id"], router.teams[k], f"{p[k]:.4f}", *(f"{v:.4f}" for v in p.tolist()),
                               str(int(enc.truncated)), str(enc.set_aside_chars)]))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(csv.reader(io.StringIO("\n".join(lines))))
    assert got == buffer.getvalue()


def test_policy_fits_on_valid_reports_on_test_stores_and_predict_adds_auto_and_team_set(
        helpdesk, tickets_csv, tmp_path, capsys):
    before = _predict(helpdesk, tickets_csv, tmp_path / "before.csv")
    card_before = (helpdesk / "router.json").read_bytes()
    capsys.readouterr()
    assert main(["policy", "--router", str(helpdesk), "--precision", "0.9", "--alpha", HELPDESK_ALPHA,
                 "--method", "aps"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fitted on valid (12 tickets, stored predictions, ")
    assert "\ntest (12 tickets, stored predictions):" in out
    assert "\nvalid (" not in out and "handwritten" not in out      # never a result on the fitted split
    assert "sets (APS, alpha 0.2): coverage" in out
    assert f'stored in {helpdesk / "router.json"} under "policy"' in out

    policy = load_policy(helpdesk)
    teams = json.loads(card_before)["teams"]
    assert policy.thresholds.target == {"precision": 0.9} and set(policy.thresholds.thresholds) == set(teams)
    assert policy.conformal.method == "aps" and policy.conformal.alpha == 0.2
    assert policy.conformal.n_calibration == 12 and policy.fitted["split"] == "valid"
    assert policy.fitted["source"] == "stored predictions" and len(policy.fitted["data_sha256"]) == 64
    meta = json.loads((helpdesk / "router.json").read_text(encoding="utf-8"))
    assert card_json_bytes({k: v for k, v in meta.items() if k != "policy"}) == card_before

    after = _predict(helpdesk, tickets_csv, tmp_path / "after.csv")
    old, new = pd.read_csv(io.StringIO(before)), pd.read_csv(io.StringIO(after), keep_default_na=False)
    assert list(new.columns) == [*old.columns, "auto", "team_set"]
    pd.testing.assert_frame_equal(new[old.columns], old)
    probs = old[[f"p_{t}" for t in teams]].to_numpy()
    auto, labels = policy.columns(probs, teams)
    assert new["auto"].tolist() == auto.astype(int).tolist()
    assert new["team_set"].tolist() == labels
    assert all(label.split(" or ")[0].split(", ")[0] in teams for label in labels)   # APS: never empty

    meta.pop("policy")                                                  # the policy gone: the old output again
    (helpdesk / "router.json").write_bytes(card_json_bytes(meta))
    assert _predict(helpdesk, tickets_csv, tmp_path / "again.csv") == before


def test_show_reports_the_stored_policy_without_writing(helpdesk, capsys):
    assert main(["policy", "--router", str(helpdesk), "--coverage", "0.5", "--alpha", HELPDESK_ALPHA,
                 "--show"]) == 0
    assert "stored in" not in capsys.readouterr().out
    assert load_policy(helpdesk) is None
    assert main(["policy", "--router", str(helpdesk), "--coverage", "0.5", "--alpha", HELPDESK_ALPHA]) == 0
    stamp = (helpdesk / "router.json").stat().st_mtime_ns
    capsys.readouterr()
    assert main(["policy", "--router", str(helpdesk), "--show"]) == 0
    out = capsys.readouterr().out
    assert "target coverage 0.5" in out and "\ntest (" in out and "stored in" not in out
    assert (helpdesk / "router.json").stat().st_mtime_ns == stamp


def test_a_guaranteed_policy_sends_what_valid_cannot_vouch_for_to_a_person(helpdesk, capsys):
    # 12 valid tickets over 4 teams cannot show precision 0.9 with probability 0.9 for any team (0.9 ** 12 > 0.1 / 4).
    assert main(["policy", "--router", str(helpdesk), "--precision", "0.9", "--alpha", HELPDESK_ALPHA,
                 "--guarantee", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "target precision 0.9, guarantee 0.1" in out
    assert "cannot show precision 0.9 with probability 0.9" in out
    policy = load_policy(helpdesk)
    assert policy.thresholds.target == {"precision": 0.9, "guarantee": 0.1}
    assert all(t == float("inf") for t in policy.thresholds.thresholds.values())


def test_predict_one_text_says_what_the_policy_decides(helpdesk, capsys):
    assert main(["policy", "--router", str(helpdesk), "--precision", "0.5", "--alpha", HELPDESK_ALPHA]) == 0
    capsys.readouterr()
    assert main(["predict", "--router", str(helpdesk), "--text", "my invoice was charged twice"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("policy: ") and ("auto-routed" in line or "to a person" in line)
    assert "set at alpha 0.2: " in line


@pytest.mark.parametrize("args, words", [
    (["--precision", "0.9", "--alpha", "0"], "alpha must be strictly between 0 and 1"),
    (["--precision", "0.9", "--alpha", "1"], "alpha must be strictly between 0 and 1"),
    (["--precision", "0.9", "--alpha", "-0.5"], "alpha must be strictly between 0 and 1"),
    (["--precision", "1.5", "--alpha", "0.2"], "the target precision must be in (0, 1]"),
    (["--coverage", "0", "--alpha", "0.2"], "the target coverage must be in (0, 1]"),
    (["--precision", "0.9"], "give --alpha"),
    (["--alpha", "0.2"], "--alpha, --method and --guarantee fit a policy"),
    (["--guarantee", "0.1"], "--alpha, --method and --guarantee fit a policy"),
    (["--coverage", "0.5", "--alpha", "0.2", "--guarantee", "0.1"], "applies to a precision target"),
    (["--precision", "0.9", "--alpha", "0.2", "--guarantee", "1"], "strictly between 0 and 1"),
    ([], "give --precision or --coverage"),
    (["--show"], "no stored policy"),
    (["--precision", "0.9", "--alpha", "0.05"], "valid has 12 tickets; sets at alpha 0.05 need at least 19"),
])
def test_bad_policy_input_is_one_readable_line(helpdesk, capsys, args, words):
    card = (helpdesk / "router.json").read_bytes()
    assert main(["policy", "--router", str(helpdesk), *args]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ticketnet policy: error: ") and words in err and "\n" not in err
    assert (helpdesk / "router.json").read_bytes() == card             # nothing stored


# -- scan --------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def shipped_policy(artifacts):
    from ticketnet.policy import fit_policy, split_scores

    fit = split_scores(artifacts.weights, "valid", artifacts.data)
    from ticketnet.card import load_card

    return fit_policy(fit, load_card(artifacts.weights).teams, precision=0.98, alpha=0.1, method="lac")


@pytest.mark.parametrize("level", ["route", "effects"])
def test_a_scan_adds_the_policy_s_columns_and_only_with_a_policy(router, valid_rows, shipped_policy, level):
    from ticketnet.corpus.scan import scan_rows
    from ticketnet.router import Router

    rows = valid_rows[:30]
    router = Router(router.model, router.vocab, router.teams, {k: v for k, v in router.meta.items() if k != "policy"})
    plain = scan_rows(router, rows, 0, level).tickets
    assert not {"auto", "team_set", "set_size"} & set(plain.columns)
    with_policy = Router(router.model, router.vocab, router.teams, {**router.meta, "policy": shipped_policy.to_json()})
    tickets = scan_rows(with_policy, rows, 0, level).tickets
    assert list(tickets.columns) == [*plain.columns, "auto", "team_set", "set_size"]
    pd.testing.assert_frame_equal(tickets[plain.columns], plain)
    probs = router.predict_texts([r["text"] for r in rows]).double().numpy()
    auto, sets = shipped_policy.apply(probs, router.teams)
    assert tickets["auto"].tolist() == auto.tolist()
    assert tickets["set_size"].tolist() == sets.sum(axis=1).tolist()
    assert tickets["team_set"].tolist() == shipped_policy.columns(probs, router.teams)[1]


def test_the_corpus_query_reads_the_automation_rate_and_set_sizes(artifacts, valid_rows, shipped_policy, tmp_path):
    from tests.corpus.conftest import sync_scan, write_csv
    from ticketnet.corpus import query
    from ticketnet.policy import store_policy

    folder = tmp_path / "router"
    shutil.copytree(artifacts.weights.parent, folder, ignore=shutil.ignore_patterns(".*"))
    without_policy(folder)
    source = write_csv(tmp_path / "in.csv", valid_rows[:60])
    sync_scan(source, tmp_path / "plain", folder / "router.pt", "route", 25)
    assert query.policy_summary(query.open_scan(tmp_path / "plain")) is None   # a scan without the columns
    store_policy(folder, shipped_policy)
    sync_scan(source, tmp_path / "scan", folder / "router.pt", "route", 25)
    summary = query.policy_summary(query.open_scan(tmp_path / "scan"))
    frame = pd.read_parquet(tmp_path / "scan" / "tickets")
    assert summary["tickets"] == 60 and summary["auto_routed"] == int(frame["auto"].sum())
    assert summary["coverage"] == pytest.approx(frame["auto"].mean())
    assert summary["precision"] == pytest.approx(frame.loc[frame["auto"], "correct"].astype(bool).mean())
    assert summary["set_sizes"] == {int(k): int(v) for k, v in frame["set_size"].value_counts().sort_index().items()}
    assert summary["mean_set_size"] == pytest.approx(frame["set_size"].mean())
    assert sum(t["auto_routed"] for t in summary["per_team"].values()) == summary["auto_routed"]
    assert np.isin(list(summary["per_team"]), list(artifacts_teams(folder))).all()


def artifacts_teams(folder):
    return json.loads((folder / "router.json").read_text(encoding="utf-8"))["teams"]
