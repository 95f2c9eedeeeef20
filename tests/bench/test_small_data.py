"""The small-data side by side on a slice of the Brightwave set: the table's shape, and a baseline above chance."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from ticketnet.bench import small_data
from ticketnet.bench.small_data import RECIPES, TABLE_COLUMNS, cross_validate, format_table, read_labelled

ROOT = Path(__file__).resolve().parents[2]
BRIGHTWAVE = ROOT / "data" / "brightwave" / "tickets.csv"


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread, as the script's main sets: on a busy machine two threads spin against each other."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def slice_of_brightwave(n_per_team: int) -> tuple[list[str], list[str]]:
    texts, teams = read_labelled(BRIGHTWAVE, ("subject", "body"), "team")
    keep, seen = [], {}
    for i, team in enumerate(teams):
        if seen.get(team, 0) < n_per_team:
            seen[team] = seen.get(team, 0) + 1
            keep.append(i)
    return [texts[i] for i in keep], [teams[i] for i in keep]


def test_brightwave_is_the_documented_set():
    texts, teams = read_labelled(BRIGHTWAVE, ("subject", "body"), "team")
    counts = {t: teams.count(t) for t in set(teams)}
    assert sorted(counts) == ["account-access", "billing", "equipment", "moving-home", "network-outage"]
    assert len(texts) >= 500 and all(80 <= c <= 130 for c in counts.values())
    readme = (BRIGHTWAVE.parent / "README.md").read_text(encoding="utf-8")
    for team, count in counts.items():
        assert f"| `{team}` | {count} |" in readme


def test_cross_validation_table_and_baseline_above_chance():
    texts, teams = slice_of_brightwave(16)                      # 80 tickets, 5 teams: chance is 0.2
    tiny = {"issue": replace(RECIPES["issue"], epochs=2, batch_size=16)}
    rows = cross_validate(texts, teams, tiny, folds=3, log=lambda *_: None)
    assert [(r["experiment"], r["method"]) for r in rows] == [("tfidf", "tfidf_logreg"), ("issue", "transformer")]
    for r in rows:
        assert tuple(r) == TABLE_COLUMNS
        assert r["folds"] == 3 and r["n_train"] + r["n_eval"] in (79, 80, 81)
        assert 0.0 <= r["accuracy_mean"] <= 1.0 and r["accuracy_std"] >= 0.0 and r["seconds_per_fold"] >= 0.0
    assert rows[0]["accuracy_mean"] > 0.4                        # twice chance: the baseline reads the tickets
    table = format_table(rows).splitlines()
    assert len(table) == 2 + len(rows) and table[2].startswith("| tfidf | tfidf_logreg | ")


def test_main_writes_the_rows_and_recipes(tmp_path, capsys):
    texts, teams = slice_of_brightwave(12)
    csv_path = tmp_path / "slice.csv"
    import csv

    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "team"])
        w.writerows(zip(texts, teams))
    out = tmp_path / "rows.json"
    assert small_data.main(["--data", str(csv_path), "--text-columns", "text", "--folds", "2", "--recipes", "issue",
                            "--epochs", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [r["experiment"] for r in report["rows"]] == ["tfidf", "issue"]
    assert report["recipes"]["issue"]["epochs"] == 1 and report["recipes"]["issue"]["lr"] == RECIPES["issue"].lr
    assert "| tfidf | tfidf_logreg |" in capsys.readouterr().out


def test_missing_column_is_named(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("body,team\nhello,billing\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing column\(s\) subject \(found: body, team\)"):
        read_labelled(path, ("subject", "body"), "team")


def test_unknown_recipe_is_refused(capsys):
    with pytest.raises(SystemExit):
        small_data.main(["--data", str(BRIGHTWAVE), "--recipes", "nope"])
    assert "unknown recipe(s) nope" in capsys.readouterr().err


def test_recipe_for_size_switches_at_the_measured_boundary():
    small, large = small_data.recipe_for_size(420), small_data.recipe_for_size(60_000)
    assert (small.lr, small.embed_scale, small.dropout, small.weight_decay, small.min_freq) == (1e-2, 0.1, 0.3, 0.1, 1)
    assert small.average_last == 10 and (large.lr, large.epochs, large.embed_scale) == (2e-3, 12, 1.0)
    assert small_data.recipe_for_size(small_data.SMALL_DATA_MAX) == small
    with pytest.raises(ValueError, match="positive"):
        small_data.recipe_for_size(0)


def test_the_tfidf_teacher_is_the_products_out_of_fold_baseline_with_unlabelled_texts_after():
    from ticketnet.distill import baseline_soft_labels

    texts, teams = slice_of_brightwave(12)
    names = sorted(set(teams))
    labels = [names.index(t) for t in teams]
    extra = ["my invoice shows a charge twice", "the app crashes at login"]
    probs, made = small_data.teacher_probs(texts, labels, len(names), "tfidf", extra, seed=3)
    assert made == []                                             # no copies asked for
    assert probs.shape == (62, 5)
    torch.testing.assert_close(probs.sum(1), torch.ones(62))
    rows = [{"text": t, "team": str(y)} for t, y in zip(texts, labels)]
    torch.testing.assert_close(probs, baseline_soft_labels(rows, [str(k) for k in range(5)], extra, seed=3).probs)
    assert float(probs[:60].max(1).values.mean()) < 0.9           # not its memory of the text: no near-one-hot rows
    with pytest.raises(ValueError, match="unknown teacher 'nope'"):
        small_data.teacher_probs(texts, labels, len(names), "nope")


def test_a_recipe_with_unlabelled_texts_needs_a_learning_curves_pool():
    texts, teams = slice_of_brightwave(6)
    with pytest.raises(ValueError, match="a k-fold run has none"):
        small_data.cross_validate(texts, teams, {"u": RECIPES["distill_u5k"]}, folds=2, baseline=False,
                                  log=lambda *_: None)


def test_the_ngram_recipe_reads_a_word_it_never_trained_on_by_its_spelling():
    texts = ["refund my payment", "card payment refund", "parcel delivery late", "courier parcel missing"] * 6
    labels = [0, 0, 1, 1] * 6
    recipe = replace(RECIPES["ngrams_spell_distill"], epochs=25, average_last=0, batch_size=8, distill=0.0)
    predict = small_data.fit_transformer(texts, labels, 2, recipe, seed=0)
    assert predict(["refunded payments", "parcels couriered"]) == [0, 1]   # two words unseen in training each
    plain = small_data.fit_transformer(texts, labels, 2, replace(RECIPES["issue_mf1_avg10"], epochs=25,
                                                                 average_last=0, batch_size=8), seed=0)
    assert plain(["refunded payments", "parcels couriered"]) == plain(["zzz", "zzz"])  # <unk> only: no difference


def test_minilm_word_vectors_put_words_of_one_meaning_side_by_side():
    words = ["refund", "reimbursement", "parcel", "delivery", "password", "login", "broadband", "router"]
    vectors = small_data.minilm_word_vectors(words, 6, 0.1)
    assert vectors.shape == (8, 6) and float(vectors.std()) == pytest.approx(0.1, rel=1e-4)
    unit = torch.nn.functional.normalize(vectors, dim=1)
    nearest = (unit @ unit.T).fill_diagonal_(-2).argmax(1).tolist()
    assert [words[i] for i in nearest] == ["reimbursement", "refund", "delivery", "parcel", "login", "password",
                                           "router", "broadband"]
