"""Signal and metric names are written once, in ticketnet/interpret/signals.py: no other module spells them out."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ticketnet.interpret import signals

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("ticketnet", "dashboard", "pages")
REGISTRY = ROOT / "ticketnet" / "interpret" / "signals.py"
METRICS = (signals.TAU, signals.KENDALL_TAU, signals.SPEARMAN, signals.TOP3_OVERLAP, signals.COMPREHENSIVENESS,
           signals.SUFFICIENCY, signals.AUPRC, signals.TOKEN_F1, signals.DISAGREEMENT)
SIGNALS = signals.names((*signals.attention_signals(4, 8), *signals.EFFECTS, *signals.EFFECT_SIZES,
                         *signals.GRADIENTS, *signals.PHRASES, signals.RANDOM))
# Every name alone, and every "<metric> <signal>" a wide column would have used.
FORBIDDEN = {*SIGNALS, *METRICS, *(f"{m} {s}" for m in METRICS for s in SIGNALS)}
# f-strings that build a name: f"mean attention b{b}", f"b{b} h{h}", f"tau {name}" and the like.
FORBIDDEN_STARTS = ("mean attention b", *(f"{m} " for m in METRICS))


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _export_lists(tree: ast.AST) -> set[int]:
    # `__all__` and a package's lazy map name functions (`kendall_tau`, `spearman`), not results.
    return {id(c) for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in ("__all__", "_LAZY") for t in node.targets)
            for c in ast.walk(node.value) if isinstance(c, ast.Constant)}


def name_literals(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every string literal or f-string in `source` that spells a signal or metric name."""
    tree = ast.parse(source)
    docs = _docstrings(tree) | _export_lists(tree)
    parts_of_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and id(node) not in parts_of_fstrings and node.value in FORBIDDEN:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            texts = [v.value if isinstance(v, ast.Constant) else None for v in node.values]
            head = texts[0] or ""
            if head.startswith(FORBIDDEN_STARTS) or (texts[:1] == ["b"] and " h" in texts[1:]):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_check_finds_what_it_is_for():
    source = ('"""Module doc: "rollout" here is prose."""\nA = "rollout"\nB = f"tau {x}"\nC = f"b{b} h{h}"\n'
              'D = "tau b2 h1"\nE = f"mean attention b{b + 1}"\nF = "rollout share"\nG = "kendall_tau"\n'
              '__all__ = ["spearman"]\n')
    assert [line for line, _ in name_literals(source)] == [2, 3, 4, 5, 6, 8]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_signal_or_metric_name_outside_the_registry(folder):
    hits = [f"{path.relative_to(ROOT)}:{line}: {text!r}"
            for path in sorted((ROOT / folder).rglob("*.py")) if path != REGISTRY
            for line, text in name_literals(path.read_text(encoding="utf-8"))]
    assert not hits, "signal or metric names written outside ticketnet/interpret/signals.py:\n" + "\n".join(hits)


def position_signal(model, ids, target):
    """A made-up signal for the test below: later tokens score higher."""
    import torch

    return torch.arange(ids.numel(), dtype=torch.float64)


def test_a_signal_is_added_by_its_registry_entry_and_its_method(monkeypatch):
    from tests.conftest import make_router
    from ticketnet.interpret import interpret_ticket

    text, evidence = "w3 w5 w7 w9 w11", "w11"
    before = interpret_ticket(make_router(), text, evidence=evidence, phrases=False)
    made_up = signals.Signal("position", "test", "later tokens score higher", "rank",
                             method=f"{__name__}:position_signal")
    monkeypatch.setattr(signals, "TOKEN_SIGNALS", (*signals.TOKEN_SIGNALS, made_up))
    ti = interpret_ticket(make_router(), text, evidence=evidence, phrases=False)
    assert ti.per_token["position"].tolist() == [0, 1, 2, 3, 4]
    assert "position" in set(ti.agreement["signal"]) and "position" in set(ti.eraser["signal"])
    assert ti.evidence.set_index("signal").loc["position", "auprc"] == 1.0       # the last token is the evidence
    assert set(ti.scores.signal) - set(before.scores.signal) == {"position"}


def test_every_lazy_name_of_the_package_resolves_to_its_module():
    # `ticketnet.interpret` imports its names on first use; a name whose module moved would fail only when used.
    import importlib

    import ticketnet.interpret as interpret

    for name, module in interpret._LAZY.items():
        found = getattr(interpret, name)
        home = importlib.import_module(f"ticketnet.interpret.{module}")
        assert getattr(home, name) is found, name
    for package in ("methods", "interventions", "metrics"):
        assert importlib.import_module(f"ticketnet.interpret.{package}").__file__.endswith("__init__.py")
