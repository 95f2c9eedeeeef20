"""Soft labels from a teacher: the baseline out of fold, any router by its teams, unlabelled texts, stored once."""

import csv
import hashlib
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ticketnet import Router, load_split
from ticketnet.data.synth import write_splits
from ticketnet.data.tickets import DataError
from ticketnet.distill import (SOFT_LABELS_FILE, TEACHER_C, Distillation, Unlabelled, baseline_soft_labels,
                               read_soft_labels, router_soft_labels, text_copies)
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.train import train, train_seeds
from ticketnet.training import UNLABELLED, TrainConfig, ticket_loss

UNLABELLED_TEXTS = ["my parcel never came, where is it", "please refund the unheardofword charge on my card",
                    "zzqx unheardofword"]


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    write_splits(data, sizes=(300, 80, 80))
    return data


@pytest.fixture(scope="module")
def distilled(splits, tmp_path_factory):
    out = tmp_path_factory.mktemp("weights")
    card = train(splits, out, TrainConfig(epochs=2, batch_size=32, recipe="large", distill=0.5),
                 log=lambda *_: None, distillation=Distillation.of_baseline(0),
                 unlabelled=Unlabelled(UNLABELLED_TEXTS, {"file": "unrouted.csv", "texts": 3}))
    return out, card


def test_the_baselines_soft_label_of_a_ticket_comes_from_the_folds_that_did_not_see_it(splits):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from ticketnet.baseline import make_features, texts_read

    rows = load_split(splits / "train.csv")
    teams = tuple(sorted({r["team"] for r in rows}))
    soft = baseline_soft_labels(rows, teams, UNLABELLED_TEXTS, folds=3, seed=4, copies=3)
    n = len(rows) + 3 + 3 * len(rows)
    assert soft.probs.shape == (n, len(teams)) and len(soft.copies) == 3 * len(rows) == len(soft.ids) - len(rows) - 3
    assert torch.allclose(soft.probs.sum(1), torch.ones(n), atol=1e-5)
    assert soft.ids[: len(rows)] == [r["ticket_id"] for r in rows] and soft.ids[len(rows) + 2] == "U-000003"
    # The same folds, refitted here: each fold's tickets get the model fitted on the other two, and an unlabelled
    # text the mean of the three models; a ticket's copies are scored by its fold's model, and a spliced copy joins
    # it to a ticket of its own fold only.
    texts, y = texts_read(rows), np.array([teams.index(r["team"]) for r in rows])
    source = {i: [] for i in range(len(rows))}
    for j, tid in enumerate(soft.ids[len(rows) + 3 :]):
        source[[r["ticket_id"] for r in rows].index(tid.split("~")[0])].append(j)
    assert all(len(v) == 3 for v in source.values())
    mean = np.zeros((3, len(teams)))
    features = make_features()
    x = features.fit_transform(texts)                       # the features read no label: fitted once on all
    for fit_idx, score_idx in StratifiedKFold(3, shuffle=True, random_state=4).split(texts, y):
        model = LogisticRegression(C=TEACHER_C, max_iter=2000, random_state=4).fit(x[fit_idx], y[fit_idx])
        expected = model.predict_proba(x[score_idx])
        np.testing.assert_allclose(soft.probs[score_idx].numpy(), expected, atol=1e-6)
        fold_copies = [j for i in score_idx for j in source[i]]
        np.testing.assert_allclose(soft.probs[[len(rows) + 3 + j for j in fold_copies]].numpy(),
                                   model.predict_proba(features.transform([soft.copies[j] for j in fold_copies])),
                                   atol=1e-6)
        fold_halves = {" ".join(texts[i].split()[len(texts[i].split()) // 2 :]) for i in score_idx}
        for i in (i for i in score_idx if len(texts[i].split()) >= 4):     # shorter: a dropout copy again
            spliced = soft.copies[source[i][2]]             # the third copy of each ticket is the splice
            assert any(spliced.endswith(h) for h in fold_halves)
        mean += model.predict_proba(features.transform(UNLABELLED_TEXTS)) / 3
    np.testing.assert_allclose(soft.probs[len(rows) : len(rows) + 3].numpy(), mean, atol=1e-6)
    assert soft.record["folds"] == 3 and soft.record["labelled_texts"] == len(rows)
    assert soft.record["teacher_train_accuracy"] == pytest.approx(
        float((soft.probs[: len(rows)].argmax(1).numpy() == y).mean()), abs=1e-4)


def test_a_team_with_one_ticket_cannot_be_scored_out_of_fold(splits):
    rows = load_split(splits / "train.csv")
    alone = [r for r in rows if r["team"] != "account"] + [next(r for r in rows if r["team"] == "account")]
    with pytest.raises(DataError, match="a single training ticket"):
        baseline_soft_labels(alone, ("payments", "delivery", "returns", "product", "account"))


def test_a_routers_soft_labels_are_its_probabilities_in_the_students_team_order(distilled, splits):
    out, _ = distilled
    router = Router.load(out / "router.pt")
    rows = load_split(splits / "valid.csv")[:20]
    flipped = tuple(reversed(router.teams))
    soft = router_soft_labels(router, out / "router.pt", rows, flipped, ["", *UNLABELLED_TEXTS[:1]], copies=2)
    own = router.predict_texts([r["text"] for r in rows] + UNLABELLED_TEXTS[:1] + list(soft.copies))
    assert soft.probs.shape == (62, 5) and len(soft.copies) == 40 and soft.ids[22] == rows[0]["ticket_id"] + "~1"
    assert torch.allclose(soft.probs[[*range(20), *range(21, 62)]], own.flip(1), atol=1e-6)
    assert torch.equal(soft.probs[20], torch.full((5,), 0.2))          # no token to read: equal odds
    assert soft.record["unscored_texts"] == 1 and soft.record["kind"] == "tiny" and soft.record["copies"] == 40
    assert soft.record["sha256"] == hashlib.sha256((out / "router.pt").read_bytes()).hexdigest()
    with pytest.raises(DataError, match="not to the teams trained here"):
        router_soft_labels(router, out / "router.pt", rows, ("payments", "delivery"))


def test_an_unlabelled_ticket_counts_in_the_soft_label_term_only():
    torch.manual_seed(0)
    model = TinyTransformer(TinyConfig(40, dropout=0.0))
    ids, is_pad = pad_batch([[3, 4, 5, 6], [8, 9], [10, 11, 12]])
    soft = torch.tensor([[0.1, 0.6, 0.1, 0.1, 0.1], [0.0, 0.0, 0.0, 0.2, 0.8], [0.5, 0.5, 0.0, 0.0, 0.0]])
    cfg = TrainConfig(token_loss=0.3, distill=0.7)
    mixed = ticket_loss(model, ids, is_pad, torch.tensor([1, UNLABELLED, 0]), cfg, soft=soft)
    first_and_last = ticket_loss(model, ids[[0, 2]], is_pad[[0, 2]], torch.tensor([1, 0]), TrainConfig(token_loss=0.3))
    log_p = F.log_softmax(model(ids, is_pad), -1).detach()
    kl = sum(float((q[q > 0] * (q[q > 0].log() - lp[q > 0])).sum()) for q, lp in zip(soft, log_p)) / 3
    assert mixed.item() == pytest.approx(first_and_last.item() + 0.7 * kl, abs=1e-5)
    # A batch of unlabelled texts only, without soft labels, asks nothing (and still back-propagates).
    nothing = ticket_loss(model, ids, is_pad, torch.full((3,), UNLABELLED), TrainConfig())
    nothing.backward()
    assert nothing.item() == 0.0


def test_training_with_a_teacher_stores_its_soft_labels_and_records_them(distilled, splits):
    out, card = distilled
    record = card["train"]["distillation"]
    stored = (out / SOFT_LABELS_FILE).read_bytes()
    assert record["sha256"] == hashlib.sha256(stored).hexdigest()
    assert record["teacher"] == "baseline" and record["weight"] == 0.5 and card["train"]["distill"] == 0.5
    assert record["labelled_texts"] == 300 and record["unlabelled_texts"] == 3
    assert card["train"]["unlabelled"] == {"file": "unrouted.csv", "texts": 3} and "pretraining" not in card["train"]
    ids, probs = read_soft_labels(out / SOFT_LABELS_FILE, card["teams"])
    rows = load_split(splits / "train.csv")
    assert ids == [r["ticket_id"] for r in rows] + ["U-000001", "U-000002", "U-000003"]
    again = baseline_soft_labels(rows, card["teams"], UNLABELLED_TEXTS, seed=0)
    assert torch.allclose(probs, again.probs, atol=1e-6)                # what it learnt from, as made
    # The unlabelled texts join the vocabulary: a word that only they have (twice, as min_freq asks) is a token.
    assert "unheardofword" in Router.load(out / "router.pt").vocab.stoi
    assert json.loads((out / "router.json").read_text())["train"]["distillation"] == record


def test_distill_without_a_teacher_is_refused(splits, tmp_path):
    with pytest.raises(ValueError, match="name the teacher with --teacher"):
        train(splits, tmp_path / "w", TrainConfig(epochs=1, recipe="large", distill=1.0), log=lambda *_: None)
    assert not (tmp_path / "w").exists()


def test_a_seed_search_scores_the_teacher_once_and_keeps_one_file(splits, tmp_path):
    calls = []

    def score(rows, teams, extra, copies):
        calls.append(len(rows))
        return baseline_soft_labels(rows, teams, extra, folds=2, copies=copies)

    card = train_seeds([0, 1], splits, tmp_path / "w", TrainConfig(epochs=1, recipe="large"), log=lambda *_: None,
                       distillation=Distillation(score))
    assert calls == [300]
    assert (tmp_path / "w" / SOFT_LABELS_FILE).is_file() and card["train"]["distillation"]["folds"] == 2
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == sorted(
        ["predictions", "router.json", "router.pt", "vocab.json", SOFT_LABELS_FILE])


def write_unrouted(path, header=("subject", "body"), rows=(("Parcel", "never came"), ("", ""), ("Card", "charged")),
                   ) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def test_the_cli_trains_with_a_teacher_and_unlabelled_texts(splits, distilled, tmp_path, capsys):
    from ticketnet.cli import main

    write_unrouted(tmp_path / "unrouted.csv")
    out = tmp_path / "student"
    assert main(["train", "--data", str(splits), "--out", str(out), "--epochs", "1", "--recipe", "large",
                 "--teacher", str(distilled[0]), "--teacher-copies", "1",
                 "--unlabelled", str(tmp_path / "unrouted.csv"), "--pretrain-epochs", "2"]) == 0
    card = json.loads((out / "router.json").read_text())
    trained = card["train"]
    record = trained["distillation"]
    assert record["teacher"] == str(distilled[0] / "router.pt") and record["weight"] == 1.0
    assert record["unlabelled_texts"] == 2 and record["kind"] == "tiny" and record["copies"] == 300
    ids, probs = read_soft_labels(out / SOFT_LABELS_FILE, card["teams"])
    assert len(ids) == probs.shape[0] == 300 + 2 + 300 and ids[-1].endswith("~300")
    assert trained["unlabelled"]["texts"] == 2 and trained["unlabelled"]["text_columns"] == ["subject", "body"]
    # Pretraining read 302 texts (300 tickets and the 2 with text); the loss of each epoch is kept.
    assert trained["pretraining"]["epochs"] == 2 and trained["pretraining"]["texts"] == 302
    assert len(trained["pretraining"]["loss"]) == 2


@pytest.mark.parametrize("extra, message", [
    (["--distill", "0.5"], "give --teacher baseline|ROUTER too"),
    (["--teacher-copies", "2"], "give --teacher baseline|ROUTER too"),
    (["--teacher", "baseline", "--teacher-copies", "-1"], "--teacher-copies must be at least 0"),
    (["--unlabelled-column", "body"], "names the text column of --unlabelled FILE"),
    (["--unlabelled", "missing.csv", "--pretrain-epochs", "1"], "missing.csv: file not found"),
    (["--unlabelled", "UNROUTED"], "give one of them"),
    (["--pretrain-epochs", "-1"], "--pretrain-epochs must be at least 0"),
    (["--teacher", "nowhere"], "neither baseline nor a router folder"),
    (["--teacher", "baseline", "--distill", "0"], "--distill must be above 0"),
    (["--teacher", "baseline", "--unlabelled", "UNROUTED", "--unlabelled-column", "message"], "no column 'message'"),
    (["--teacher", "baseline", "--encoder", "minilm"], "--teacher is an option of the Tiny router's training"),
    (["--unlabelled", "UNROUTED", "--encoder", "minilm"], "--unlabelled is an option of the Tiny router's training"),
])
def test_the_cli_refuses_a_teacher_flag_it_cannot_use_in_one_line(splits, tmp_path, capsys, extra, message):
    from ticketnet.cli import main

    write_unrouted(tmp_path / "unrouted.csv")
    extra = [str(tmp_path / "unrouted.csv") if x == "UNROUTED" else x for x in extra]
    assert main(["train", "--data", str(splits), "--out", str(tmp_path / "w"), "--epochs", "1", *extra]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not (tmp_path / "w").exists()


def test_pretraining_learns_to_name_a_hidden_token_and_leaves_the_head_alone():
    import random

    from ticketnet.training import pretrain

    torch.manual_seed(0)
    model = TinyTransformer(TinyConfig(12, d=32, h=2, d_ff=64, n_classes=2, dropout=0.0))
    head = {k: v.clone() for k, v in model.head.state_dict().items()}
    seqs = [[2, 3, 4, 5], [6, 7, 8, 9], [10, 11, 2, 3]] * 40       # three fixed phrases: each token is predictable
    cfg = TrainConfig(lr=3e-3, weight_decay=0.0, batch_size=16, warmup_epochs=0, pretrain_epochs=12, mask_rate=0.25)
    losses = pretrain(model, seqs, cfg, random.Random(0))
    assert len(losses) == 12 and losses[-1] < 0.5 * losses[0]
    assert all(torch.equal(v, head[k]) for k, v in model.head.state_dict().items())


def test_text_copies_drop_crop_and_splice_in_turn():
    import random

    texts = [" ".join(f"w{i}_{k}" for k in range(20)) for i in range(4)]
    made = text_copies(texts, 3, random.Random(0))
    assert [i for i, _ in made] == [0, 1, 2, 3] * 3
    for (i, dropped), (_, cropped), (_, spliced) in zip(made[:4], made[4:8], made[8:]):
        words, own = dropped.split(), texts[i].split()
        assert 8 <= len(words) < 20 and all(w in own for w in words)                  # a quarter dropped, in order
        assert 10 <= len(cropped.split()) <= 16 and cropped in texts[i]               # one contiguous window
        assert spliced.startswith(" ".join(own[:10])) and len(spliced.split()) == 20  # own first half, another's end
        assert not spliced.endswith(" ".join(own[10:]))
    assert text_copies(["one"], 2, random.Random(0)) == [(0, "one"), (0, "one")]       # never empty


def test_stored_soft_labels_keep_any_team_name_apart_from_the_ticket_id(tmp_path):
    from ticketnet.distill import SoftLabels

    teams = ("ticket_id", "<b>bold</b>", "网络")
    soft = SoftLabels(torch.tensor([[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]), ["A-1", "U-000001"], {})
    path = tmp_path / SOFT_LABELS_FILE
    path.write_bytes(soft.to_parquet(teams))
    ids, probs = read_soft_labels(path, teams)
    assert ids == ["A-1", "U-000001"] and torch.equal(probs, soft.probs)
    with pytest.raises(DataError, match="no column for team 'other'"):
        read_soft_labels(path, ("other",))
