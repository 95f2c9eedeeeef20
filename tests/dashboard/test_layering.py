"""Pages keep only layout and widgets: they import the data layer, the chart builders, the page helpers and the
library's public names, nothing below them (the dashboard's own floor plan is checked in tests/test_layering.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py"))

# Dashboard modules a page may import: the data layer and the chart builders (whole packages), and the page helpers.
DASHBOARD_PACKAGES = ("dashboard.data", "dashboard.charts", "dashboard.narrative")
PAGE_HELPERS = {"dashboard.state", "dashboard.filters", "dashboard.ui", "dashboard.text", "dashboard.view",
                "dashboard.views", "dashboard.encoder_ui", "dashboard.render"}


def imported(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) of every import in `path`, at the top or inside a function; name is None for `import m`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.extend((node.module, a.name) for a in node.names)
    return out


def refused(module: str, name: str | None) -> bool:
    """Whether a page may not import `name` from `module`."""
    full = module if name is None else f"{module}.{name}"
    top = module.split(".")[0]
    if top == "dashboard":
        if module == "dashboard" and name is not None:               # from dashboard import ui
            return full not in PAGE_HELPERS and not any(full == p or full.startswith(p + ".")
                                                        for p in DASHBOARD_PACKAGES)
        return module not in PAGE_HELPERS and not any(module == p or module.startswith(p + ".")
                                                      for p in DASHBOARD_PACKAGES)
    if top == "ticketnet":
        # Public names: what `ticketnet` or one of its subpackages exports (`from ticketnet.lens import parity`),
        # never a module deeper down (`ticketnet.corpus.query`, `ticketnet.interpret.interventions.knockout`).
        depth = len(module.split("."))
        return name is None or depth > 2 or module.split(".")[-1].startswith("_") or name.startswith("_")
    return False


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_import_only_the_data_layer_the_charts_and_public_names(page):
    bad = [f"{m}.{n}" if n else m for m, n in imported(page) if refused(m, n)]
    assert not bad, f"{page.name} imports {bad}: use dashboard.data, dashboard.charts or ticketnet's public names"


def test_every_page_is_checked():
    assert {p.stem for p in PAGES} >= {"tickets", "heads", "interpretation", "corpus", "compare", "policy", "map",
                                       "label_issues", "formula", "verification", "cost"}


def test_the_rule_refuses_what_lies_below_the_pages(tmp_path):
    fake = tmp_path / "page.py"
    fake.write_text("import streamlit as st\nfrom dashboard import ui, store\nfrom dashboard.data import splits\n"
                    "from ticketnet.interpret import aopc\nfrom ticketnet import tokenize\n"
                    "def f():\n    from ticketnet.corpus.query import SORTS\n    import ticketnet.router\n"
                    "    from dashboard.charts.attention import heads_row\n    from ticketnet._runtime import atomic\n")
    bad = [f"{m}.{n}" if n else m for m, n in imported(fake) if refused(m, n)]
    assert bad == ["dashboard.store", "ticketnet.corpus.query.SORTS", "ticketnet.router", "ticketnet._runtime.atomic"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_commands_shown_on_pages_work_from_a_fresh_clone(page):
    # `python -m ticketnet …` fails outside the virtual environment make created; the pages show its python.
    source = page.read_text(encoding="utf-8")
    assert "`python -m ticketnet" not in source, f"{page.name} shows a command that needs .venv/bin/python"
