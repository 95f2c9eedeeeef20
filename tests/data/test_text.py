"""Tokenizer and vocabulary."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticketnet.data.text import PAD, UNK, Vocab, _visible, token_spans, tokenize

T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


def test_t65052_is_thirty_tokens():
    toks = tokenize(T65052)
    assert len(toks) == 30
    assert toks[:4] == ["it", "'", "s", "not"] and toks[-1] == "?"
    assert toks.count(".") == 2


def test_numbers_punctuation_and_case():
    assert tokenize("ORDER #LF-48291 £49.99!!") == ["order", "#", "lf", "-", "48291", "£", "49", ".", "99", "!", "!"]
    assert tokenize("   ") == [] and tokenize("") == []
    assert tokenize("<script>alert(1)</script>")[:3] == ["<", "script", ">"]


def test_vocab_is_frequency_then_alphabetical_with_specials_first():
    v = Vocab(["b a a", "c b a", "d"], min_freq=1)
    assert v.itos == [PAD, UNK, "a", "b", "c", "d"]
    assert v.encode("a zzz d") == [2, 1, 5]
    assert v.decode([2, 0, 3]) == "a b"
    assert len(v) == 6 and v.stoi["c"] == 4


def test_min_freq_sends_rare_tokens_to_unk():
    v = Vocab(["a a b"], min_freq=2)
    assert v.itos == [PAD, UNK, "a"] and v.encode("b") == [1]


def test_vocab_round_trips_through_a_file(tmp_path):
    v = Vocab(["the mower is broken", "the card was charged"], min_freq=1)
    v.save(tmp_path / "vocab.json")
    assert Vocab.load(tmp_path / "vocab.json") == v


def test_vocab_load_errors_are_readable(tmp_path):
    bad = tmp_path / "vocab.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not a vocabulary file"):
        Vocab.load(bad)
    with pytest.raises(FileNotFoundError, match="not found"):
        Vocab.load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="must start with"):
        Vocab(itos=["a", "b"])


@given(st.text(max_size=300))
def test_tokenize_never_crashes_and_drops_only_whitespace(text):
    toks = tokenize(text)
    assert all(t and not t.isspace() for t in toks)
    assert "".join(toks) == "".join(_visible(text).lower().split())  # only spaces and invisible characters go


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_spans_point_at_the_tokens(text):
    try:
        spans = token_spans(text)
    except ValueError:
        return  # documented: a text whose lowercasing changes its tokenization has no offsets
    assert [text[a:b].lower() for a, b in spans] == tokenize(text)


@given(st.lists(st.sampled_from(["the", "mower", "card", "x", "?", "!"]), max_size=30))
def test_encode_decode_round_trip_for_known_tokens(words):
    v = Vocab(["the mower card x ? !"], min_freq=1)
    assert v.decode(v.encode(" ".join(words))) == " ".join(words)


def test_control_and_format_characters_are_not_tokens():
    assert tokenize("card\x00 declined\x07\x1b[31m") == ["card", "declined", "[", "31m"]
    assert tokenize("\x00\x00\u200b\u202e") == []
    text = "re\u200bfund please"
    assert [text[a:b] for a, b in token_spans(text)] == ["re", "fund", "please"]
