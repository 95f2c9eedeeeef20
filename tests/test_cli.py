"""The command line as a user meets it: routes tickets, and bad input gets one readable line and a non-zero exit."""

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from ticketnet.data.synth import TEAMS
from ticketnet.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "ticketnet", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_predict_one_text():
    r = run_cli("predict", "--text", T65052)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("payments")


def test_predict_csv_from_stdin_and_file(tmp_path):
    src = "ticket_id,text\nA1,my card was charged twice\nA2,\"where is my parcel, it is late\"\n"
    r = run_cli("predict", stdin=src)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["ticket_id"] for row in rows] == ["A1", "A2"]
    # The shipped router stores a routing policy: its auto and team_set columns follow.
    assert list(rows[0]) == ["ticket_id", "team", "confidence", *(f"p_{t}" for t in TEAMS), "truncated",
                             "set_aside_chars", "auto", "team_set"]
    assert rows[0]["team"] == "payments" and rows[1]["team"] == "delivery"
    assert rows[0]["set_aside_chars"] == rows[1]["set_aside_chars"] == "0"
    assert abs(sum(float(rows[0][f"p_{t}"]) for t in TEAMS) - 1) < 1e-3
    (tmp_path / "in.csv").write_text(src)
    out = tmp_path / "out.csv"
    assert main(["predict", str(tmp_path / "in.csv"), "--out", str(out)]) == 0
    assert out.read_text() == r.stdout


def test_predict_routes_an_e_mail_reply_on_its_new_message(tmp_path):
    reply = ("Where is my parcel LF-123456? It was due on Monday and the tracking has not moved. / On Tue, 11 Jun 2024, "
             "Larkfield Customer Care <care@larkfield.co.uk> wrote: / > Dear Ms Shah, we refunded the double charge "
             "to your card, the refund of the payment is on its way.")
    src = f'ticket_id,text\nA1,"{reply}"\n'
    r = run_cli("predict", stdin=src)
    assert r.returncode == 0, r.stderr
    row = next(csv.DictReader(io.StringIO(r.stdout)))
    new = "Where is my parcel LF-123456? It was due on Monday and the tracking has not moved."
    assert int(row["set_aside_chars"]) == len(reply) - len(new)
    assert row["team"] == "delivery"
    assert "1 of 1 tickets are e-mail replies or forwards" in r.stderr
    one = run_cli("predict", "--text", reply)
    assert one.returncode == 0 and one.stdout.startswith("delivery")
    assert "set aside the quoted history below" in one.stderr


def test_long_ticket_is_flagged(tmp_path):
    r = run_cli("predict", "--text", "the mower will not start " * 100)
    assert r.returncode == 0 and "only the first 256 were read" in r.stderr


@pytest.mark.parametrize("args,stdin,message", [
    (["predict", "--text", "   "], None, "no words"),
    (["predict", "missing.csv"], None, "file not found"),
    (["predict"], "id,body\n1,hello\n", "missing column(s) ticket_id, text"),
    (["predict"], "", "empty input"),
    (["predict"], "ticket_id,text\nA1,\n", "line 2: ticket 'A1': the ticket has no words"),
    (["predict"], "ticket_id,text\nA1,hi,extra\n", "line 2: wrong number of fields"),
    (["predict", "--weights", "nowhere/router.pt", "--text", "hi"], None, "not found"),
])
def test_bad_input_is_one_readable_line(args, stdin, message, tmp_path, monkeypatch, capsys):
    # In-process (each subprocess costs 3 s of torch import); the real process is the next test's.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8"))))
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message in err


def test_a_failing_command_exits_1_with_one_line_from_a_real_process():
    r = run_cli("predict", "--weights", "nowhere/router.pt", "--text", "hi")
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and "not found" in r.stderr


def test_non_utf8_csv(tmp_path):
    p = tmp_path / "latin.csv"
    p.write_bytes("ticket_id,text\nA1,caf\xe9 card declined\n".encode("latin-1"))
    r = run_cli("predict", str(p))
    assert r.returncode == 1 and "not UTF-8" in r.stderr and "Traceback" not in r.stderr


def test_failed_run_leaves_no_output_file(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("ticket_id,text\nA1,card declined\nA2,   \n")
    out = tmp_path / "out.csv"
    assert main(["predict", str(src), "--out", str(out)]) == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_train_takes_one_seed_or_a_seed_search():
    import argparse

    from ticketnet.__main__ import build_parser, seed_list
    from ticketnet.paths import TRAIN_SEED

    assert TRAIN_SEED == 1                          # the shipped weights' seed, chosen by `train --seeds 0-4`
    assert seed_list("0-4") == [0, 1, 2, 3, 4] and seed_list("3,0,7") == [3, 0, 7] and seed_list("5") == [5]
    for bad in ("a-b", "4-0", "1,1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            seed_list(bad)
    parse = build_parser().parse_args
    assert (parse(["train"]).seed, parse(["train"]).seeds) == (None, None)      # None: TrainConfig's seed
    assert parse(["train", "--seeds", "0-2"]).seeds == [0, 1, 2]
    for seed in ("0", str(TRAIN_SEED)):            # the default value given explicitly is refused as well
        with pytest.raises(SystemExit) as stop:
            parse(["train", "--seed", seed, "--seeds", "0-4"])
        assert stop.value.code == 2


def test_train_from_a_router_keeps_its_shape_and_refuses_a_new_one(tmp_path, capsys):
    from ticketnet.__main__ import build_parser

    args = build_parser().parse_args(["train", "--init-from", "weights", "--lr", "5e-4"])
    assert args.init_from == "weights" and args.lr == 5e-4
    r = run_cli("train", "--init-from", "weights", "--d", "128", "--out", str(tmp_path / "r"))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "--init-from keeps the starting router's shape; leave out --d" in r.stderr
    r = run_cli("train", "--init-from", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r"))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "nowhere: not found" in r.stderr
    r = run_cli("train", "--lr", "0", "--out", str(tmp_path / "r"))
    assert r.returncode != 0 and "--lr must be positive, got 0.0" in r.stderr
    for args, said in ((["--keep", "1"], "--keep needs --keep-from or --init-from"),
                       (["--new-vocabulary"], "--new-vocabulary needs --init-from")):
        assert main(["train", *args, "--out", str(tmp_path / "r")]) == 1
        assert capsys.readouterr().err.strip() == f"ticketnet train: error: {said}" + (
            ": the router whose right answers it keeps" if args[0] == "--keep" else
            ": a training from scratch always builds its own")
    for args, said in ((["--evaluate-on", "data", "--seeds", "0-1"], "--evaluate-on scores one run on a folder"),
                       (["--evaluate-on", str(tmp_path)], f"--evaluate-on {tmp_path}: no train.csv there")):
        assert main(["train", *args, "--out", str(tmp_path / "r")]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, err
    assert not (tmp_path / "r").exists()
