"""The capacity chart of the docs: drawn from capacity reports, the same file for the same reports."""

from __future__ import annotations

import json

from ticketnet.bench.load import chart


def report(p95s: list[float]) -> dict:
    return {"curve": [{"sessions": 10 * (i + 1), "p50_s": p / 4, "p95_s": p,
                       "p95_s_by_page": {"Tickets": p / 2, "Interpretation": p * 1.5}, "errors": 0}
                      for i, p in enumerate(p95s)]}


def test_curve_points_take_the_worst_page_p95():
    assert chart.curve_points(report([0.4, 2.0])) == [(10, 0.1, 0.4, 0.6000000000000001), (20, 0.5, 2.0, 3.0)]


def test_the_svg_draws_every_deployment_and_is_reproducible(tmp_path):
    a, b = tmp_path / "one.json", tmp_path / "two.json"
    a.write_text(json.dumps(report([0.3, 0.8, 1.9])))
    b.write_text(json.dumps(report([0.2, 0.4, 0.7])))
    out = tmp_path / "capacity.svg"
    args = ["--out", str(out), f"1 server={a}", f"2 servers={b}"]
    assert chart.main(args) == 0
    first = out.read_text()
    assert first.startswith("<?xml") and "</svg>" in first
    for label in ("1 server: p95, worst page", "2 servers: p50, all actions", "target: p95"):
        assert label in first
    assert chart.main(args) == 0 and out.read_text() == first


def test_a_file_that_is_not_a_capacity_report_is_refused_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": []}')
    out = tmp_path / "c.svg"
    assert chart.main(["--out", str(out), f"x={bad}"]) == 2
    assert chart.main(["--out", str(out), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "not a capacity report" in err[0] and "not LABEL=REPORT.json" in err[1]
    assert not out.exists()


def test_a_label_given_twice_is_refused_rather_than_one_curve_dropped(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(report([0.3, 0.8])))
    b.write_text(json.dumps(report([0.2, 0.4])))
    out = tmp_path / "c.svg"
    assert chart.main(["--out", str(out), f"run 2={a}", f"run 2={b}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'run 2' is given twice" in err[0]
    assert not out.exists()
