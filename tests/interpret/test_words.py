"""Word-level explanations on an encoder router: IG adds up, ERASER and Shapley keep the specials, evidence by word."""

from __future__ import annotations

import itertools
import shutil

import pytest
import torch

from tests.encoder.conftest import saved_classifiers, small_base  # noqa: F401  (fixtures)
from ticketnet.encoder.inspection import inspect_ticket
from ticketnet.interpret import signals as sig
from ticketnet.interpret.interventions.phrases import keep_phrases
from ticketnet.interpret.interventions.shapley import phrase_shapley
from ticketnet.interpret.metrics.eraser import eraser, eraser_by_units
from ticketnet.interpret.metrics.evidence import evidence_mask, spans_evidence_mask
from ticketnet.interpret.words import explain_words, ticket_words, word_integrated_gradients, word_phrases

TEXT = "Hello, my card was charged twice and I want a refund. The parcel arrived late, thanks."


@pytest.fixture(scope="module")
def router(saved_classifiers, small_base, tmp_path_factory):  # noqa: F811
    from ticketnet.encoder.router import EncoderRouter

    folder = tmp_path_factory.mktemp("team-bert")
    shutil.copytree(saved_classifiers["bert"], folder, dirs_exist_ok=True)
    shutil.copy(small_base / "tokenizer.json", folder / "tokenizer.json")
    return EncoderRouter.load(folder)


def _p(router, ids: list[int], target: int) -> float:
    """p(target) of one row read whole: [PAD] ids included, as vectors rather than as padding."""
    with torch.inference_mode():
        return float(torch.softmax(router.model(torch.tensor([ids]), torch.zeros(1, len(ids), dtype=torch.bool)),
                                   -1)[0, target])


def test_the_ticket_splits_into_its_specials_and_whole_words(router):
    enc = router.encode(TEXT)
    words = ticket_words(enc)
    assert words.before == [enc.ids[0]] and words.after == [enc.ids[-1]]          # [CLS], [SEP]
    assert [*words.before, *words.inner, *words.after] == enc.ids
    assert sum(map(len, words.units)) == len(words.inner)
    assert [TEXT[a:b] for a, b in words.spans] == enc.words


def test_phrases_are_runs_of_whole_words_that_cover_the_pieces(router):
    enc = router.encode(TEXT)
    words = ticket_words(enc)
    phrases = word_phrases(enc.text, words)
    assert [p.text for p in phrases] == ["Hello,", "my card was charged twice", "and I want a refund.",
                                         "The parcel arrived late,", "thanks."]
    assert phrases[0].start == 0 and phrases[-1].end == len(words.inner)
    assert all(a.end == b.start for a, b in itertools.pairwise(phrases))
    starts = {u[0] for u in words.units}
    assert all(p.start in starts for p in phrases)                               # no word is cut in two


def test_word_integrated_gradients_add_up_to_the_change_from_padded_words(router):
    enc = router.encode(TEXT)
    words = ticket_words(enc)
    target = 1
    ig = word_integrated_gradients(router, enc, target)
    assert ig.attributions.shape == (len(words.units),)
    padded = [*words.before, *[router.config.pad_id] * len(words.inner), *words.after]
    change = _p(router, enc.ids, target) - _p(router, padded, target)
    assert ig.change == pytest.approx(change, abs=1e-5)
    assert float(ig.attributions.double().sum()) == pytest.approx(change, abs=max(0.01 * abs(change), 1e-6) + 1e-6)
    assert ig.relative_gap <= 0.01 or ig.steps == 1024


def test_eraser_by_units_of_one_token_is_eraser(tiny_router_model):
    model, ids = tiny_router_model
    signals = {"a": torch.arange(ids.numel(), dtype=torch.float64), "b": -torch.arange(ids.numel()).double()}
    plain = eraser(model, ids, signals, target=2)
    by_units = eraser_by_units(model, ids.tolist(), [[i] for i in range(ids.numel())], signals, target=2)
    assert by_units[["signal", "fraction", "k"]].equals(plain[["signal", "fraction", "k"]])
    assert by_units[list(sig.ERASER_METRICS)].to_numpy() == pytest.approx(plain[list(sig.ERASER_METRICS)].to_numpy(),
                                                                          abs=1e-6)


@pytest.fixture(scope="module")
def tiny_router_model():
    from ticketnet.paths import weights_dir
    from ticketnet.router import Router

    r = Router.load(weights_dir() / "router.pt")
    return r.model.eval(), torch.tensor(r.encode("my card was charged twice for the blower, please refund").ids)


def test_eraser_by_word_keeps_the_specials_and_takes_out_whole_words(router):
    enc = router.encode(TEXT)
    words = ticket_words(enc)
    scores = torch.zeros(len(words.units), dtype=torch.float64)
    top = next(k for k, u in enumerate(words.units) if len(u) > 1) if any(len(u) > 1 for u in words.units) else 3
    scores[top] = 1.0
    table = eraser_by_units(router.model, words.inner, words.units, {"s": scores}, 0, fractions=(0.01,),
                            around=words.around)
    row = table.iloc[0]
    assert row["k"] == 1
    out = set(words.units[top])
    without = [*words.before, *(t for i, t in enumerate(words.inner) if i not in out), *words.after]
    alone = [*words.before, *(words.inner[i] for i in words.units[top]), *words.after]
    base = _p(router, enc.ids, 0)
    assert row[sig.COMPREHENSIVENESS] == pytest.approx(base - _p(router, without, 0), abs=1e-6)
    assert row[sig.SUFFICIENCY] == pytest.approx(base - _p(router, alone, 0), abs=1e-6)


def test_phrase_shapley_on_an_encoder_keeps_the_specials_in_every_coalition(router):
    enc = router.encode(TEXT)
    words = ticket_words(enc)
    phrases = word_phrases(enc.text, words)
    inner = torch.tensor(words.inner)
    assert keep_phrases(words.inner, phrases, [False] * len(phrases), words.around) == words.before + words.after
    shap = phrase_shapley(router.model, inner, phrases, 0, unit="prob", around=words.around)
    assert shap.method == "exact" and shap.evaluations == 2 ** len(phrases)
    assert shap.full == pytest.approx(_p(router, enc.ids, 0), abs=1e-6)
    assert shap.empty == pytest.approx(_p(router, words.before + words.after, 0), abs=1e-6)
    assert abs(shap.efficiency_gap) < 1e-9


def test_evidence_by_spans_is_the_token_mask_on_token_spans():
    from ticketnet.data.text import token_spans

    text = "My card was CHARGED twice; the parcel is fine."
    spans = token_spans(text)
    assert spans_evidence_mask(text, spans, "charged twice|parcel").tolist() == \
        evidence_mask(text, len(spans), "charged twice|parcel").tolist()


def test_explain_words_scores_every_signal_by_word(router):
    ins = inspect_ticket(router, TEXT)
    ex = explain_words(router, ins, target=0, evidence="charged twice", phrases=True)
    n = len(ins.encoded.word_pieces)
    assert all(v.shape == (n,) for v in ex.signals.values())
    assert ex.gold.tolist() == [w in ("charged", "twice") for w in ex.words]
    assert set(ex.evidence[sig.SIGNAL]) == set(ex.signals) and (ex.evidence["gold_words"] == 2).all()
    assert set(ex.agreement[sig.SIGNAL]) == (set(ex.signals) - {sig.REMOVAL.name}) | {sig.RANDOM.name}
    assert set(ex.aopc[sig.SIGNAL]) == set(ex.signals) | {sig.RANDOM.name}
    assert len(ex.eraser) == len(ex.aopc) * 5
    assert torch.equal(ex.signals[sig.REMOVAL.name], ex.effects.removed.double())
    # Each word carries its phrase's Shapley value, so the words of one phrase score alike.
    shap = ex.signals[sig.PHRASE_SHAPLEY.name]
    assert sorted(set(shap.tolist())) == sorted(set(ex.shapley.values.tolist()))
