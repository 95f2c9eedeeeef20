"""The new message of an e-mail ticket: quoted history, forwards and signatures set aside, everything else kept."""

import pytest

from ticketnet.card import encode_text
from ticketnet.data.text import Vocab
from ticketnet.data.thread import MIN_FORWARD_NOTE_WORDS, MIN_NEW_WORDS, split_thread
from ticketnet.data.tickets import load_split
from ticketnet.paths import data_dir

NEW = "Thanks, the refund arrived. While I've got you, the tracking link for my second box doesn't work."
HEADER = "On Tue, 11 Jun 2024, Larkfield Customer Care <care@larkfield.co.uk> wrote:"
QUOTED = "> Dear Ms Shah,\n> we have refunded the double charge of £49.99 to your card."


def test_a_reply_is_cut_at_its_quoted_history():
    text = f"{NEW}\n\n{HEADER}\n{QUOTED}\n"
    s = split_thread(text)
    assert s.new == NEW
    assert s.set_aside == f"{HEADER}\n{QUOTED}"
    assert s.set_aside_chars == len(s.set_aside)
    assert s.reason.startswith("Set aside the quoted history below “On Tue, 11 Jun 2024, Larkfield")


@pytest.mark.parametrize("joined", [" / ", " "], ids=["slashes", "one-line"])
def test_flattened_line_breaks_are_put_back(joined):
    text = joined.join([NEW, "Kind regards,", "Priya Shah", HEADER, "> Dear Ms Shah,", "> we refunded the charge."])
    s = split_thread(text)
    # On one line the sign-off no longer stands on its own line, so only the quoted history can be told apart.
    assert s.new == (NEW if joined == " / " else f"{NEW} Kind regards, Priya Shah")
    assert s.set_aside.startswith("Kind regards," if joined == " / " else HEADER)
    assert text.startswith(s.new) and text.endswith(s.set_aside)


def test_an_outlook_header_block_on_one_line():
    text = ("My password reset link has expired twice now, can you send another? From: Larkfield Returns "
            "<returns@larkfield.co.uk> Sent: 10 June 2024 10:02 To: Sam Lee Subject: Your return label Dear Sam, "
            "your returns label for the mower is attached.")
    s = split_thread(text)
    assert s.new == "My password reset link has expired twice now, can you send another?"
    assert s.set_aside.startswith("From: Larkfield Returns")
    assert "From: Larkfield Returns <returns@larkfield.co.uk>" in s.reason


def test_an_outlook_header_block_on_lines_and_original_message():
    block = "From: Larkfield Care <care@larkfield.co.uk>\nSent: 10 June 2024 10:02\nTo: Sam\nSubject: Re: refund"
    s = split_thread(f"Where is my parcel LF-123456? It was due on Monday.\n\n{block}\n\nYour refund is done.")
    assert s.new == "Where is my parcel LF-123456? It was due on Monday."
    s = split_thread("The hedge trimmer blade is loose, how do I tighten it?\n-----Original Message-----\n"
                     "From: Larkfield\nSent: Monday\nYour account is unlocked.")
    assert s.new == "The hedge trimmer blade is loose, how do I tighten it?"
    assert s.set_aside.startswith("-----Original Message-----")


def test_a_forwarded_chain_is_set_aside_below_the_note():
    note = "Please look at the courier email below: it says delivered, but the parcel never came to my door."
    text = (f"{note}\n\n---------- Forwarded message ---------\n"
            "From: DPD <noreply@dpd.co.uk>\nDate: Mon, 3 Jun 2024\nSubject: Your parcel\nTo: me\n"
            "Your parcel was delivered.")
    s = split_thread(text)
    assert s.new == note
    assert s.reason == "Set aside the forwarded message below “---------- Forwarded message ---------”."


def test_a_reply_too_short_to_route_reads_the_whole_thread():
    assert len("Any news?".split()) < MIN_NEW_WORDS
    text = f"Any news?\n\n{HEADER}\n{QUOTED}"
    assert split_thread(text).new is text


def test_a_forward_under_a_short_cover_note_is_read_with_it():
    note = "See below, sent this a week ago and no reply yet."
    assert MIN_NEW_WORDS <= len(note.split()) < MIN_FORWARD_NOTE_WORDS
    text = f"{note}\n\n---------- Forwarded message ---------\nFrom: me\nDate: 1 Jun\nSubject: mower\n\n" \
           "My mower will not start after winter storage, what should I check?"
    s = split_thread(text)
    assert s.new is text and s.set_aside == "" and s.reason == ""


def test_a_signature_is_set_aside_but_a_thank_you_that_goes_on_is_read():
    s = split_thread(f"Hi,\n{NEW}\nThanks,\nTom")
    assert s.new == f"Hi,\n{NEW}"
    assert s.set_aside == "Thanks,\nTom" and s.reason == "Set aside the signature."
    # The first line, and a sign-off word that starts a sentence, are the customer's words, not a signature.
    for text in (f"Thanks,\n{NEW}", f"My order LF-100200 is late.\nThanks, the refund came though. Where is it?",
                 f"{NEW}\nBest regards,\nPriya Shah, head gardener at the Old Rectory, Little Snoring"):
        assert split_thread(text).new == text


def test_quoted_lines_without_a_header():
    s = split_thread(f"{NEW}\n> we refunded your card\n> on Monday")
    assert s.new == NEW and s.reason == "Set aside the quoted lines."


@pytest.mark.parametrize("text", [
    NEW, "", "   ", "Need the pickup / drop-off times for my return, thanks",
    "From: the garden centre I was sent the wrong hose", "The 2 > 1 offer did not apply",
    "It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
    "Can you remove the duplicate charge?",
])
def test_a_ticket_that_is_not_a_thread_is_read_unchanged(text):
    s = split_thread(text)
    assert s.new is text and s.set_aside == "" and s.reason == ""


def test_the_split_is_a_prefix_and_idempotent():
    for text in (f"{NEW}\n\n{HEADER}\n{QUOTED}", " / ".join([NEW, "Cheers,", "Al", HEADER, "> ok"]),
                 f"{NEW}\nSent from my iPhone"):
        s = split_thread(text)
        assert s.new != text and text.startswith(s.new)
        assert s.set_aside and text.endswith(s.set_aside)
        assert split_thread(s.new).new == s.new


def test_not_text_is_a_type_error():
    with pytest.raises(TypeError, match="must be text"):
        split_thread(None)


def test_encoding_reads_the_new_message_unless_the_whole_thread_is_asked_for():
    text = f"{NEW}\n\n{HEADER}\n{QUOTED}"
    vocab = Vocab([text], min_freq=1)
    enc = encode_text(text, vocab, 256)
    assert enc.text == NEW and enc.set_aside_chars == len(text) - len(NEW)
    assert enc.ids == vocab.encode(NEW)
    whole = encode_text(text, vocab, 256, whole_thread=True)
    assert whole.text is text and whole.set_aside_chars == 0 and whole.ids == vocab.encode(text)


@pytest.mark.parametrize("split", ["train", "valid", "test", "handwritten", "handwritten_dev"])
def test_every_shipped_ticket_but_the_threads_is_read_whole(split):
    """The splitting changes nothing for a ticket that is not a thread: every shipped split (T-65052 among them)
    is read exactly as before."""
    rows = load_split(data_dir() / f"{split}.csv")
    changed = [r["ticket_id"] for r in rows if r.get("style") != "thread" and split_thread(r["text"]).new != r["text"]]
    assert changed == []
    if split == "valid":
        assert any(r["ticket_id"] == "T-65052" for r in rows)
