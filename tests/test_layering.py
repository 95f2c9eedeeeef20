"""The package's floor plan, checked from the source: no import cycles, each layer reads only the layers below it,
and the library never imports the dashboard, the benchmarks, streamlit or playwright."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ticketnet"

# Which subpackages (or top-level modules) of ticketnet each part may import; anything not listed is refused.
# Read bottom-up: _runtime and paths know nothing of tickets; data knows the files; nn the model; encoder sits
# beside router; interpret and lesson sit on the models (interpret on either kind); labels reads both (it retrains
# either kind per fold); interface, the Protocol both router kinds meet, needs nothing; bench and the command line
# (cli) may use everything.
MAY_IMPORT: dict[str, set[str]] = {
    "_runtime": set(),
    "paths": set(),
    "data": {"_runtime", "paths", "data"},
    "card": {"paths", "data"},
    "nn": {"_runtime", "paths", "data", "nn"},
    "router": {"paths", "data", "nn", "card"},
    "lens": {"data", "nn", "router", "lens"},
    "metrics": set(),
    "predictions": {"_runtime", "paths", "data", "card", "router"},
    "predict": {"data", "card", "router", "policy"},
    "baseline": {"metrics", "data"},
    "distill": {"_runtime", "data", "baseline", "interface"},
    "training": {"paths", "data", "nn", "metrics", "router"},
    "train": {"_runtime", "paths", "data", "nn", "metrics", "baseline", "card", "router", "predictions", "catalog",
              "training", "distill"},
    "interpret": {"_runtime", "data", "nn", "card", "router", "lens", "interpret", "encoder"},
    "policy": {"_runtime", "paths", "data", "card", "router", "metrics", "predictions", "policy", "loading"},
    "lesson": {"_runtime", "paths", "nn", "lesson"},
    "corpus": {"_runtime", "paths", "data", "nn", "card", "router", "lens", "interpret", "predict", "corpus",
               "policy", "catalog", "loading", "encoder"},
    "compare": {"_runtime", "paths", "data", "card", "router", "metrics", "predictions", "lens", "interpret",
                "corpus", "compare", "loading", "catalog"},
    "ticketmap": {"_runtime", "paths", "data", "nn", "card", "router", "lens", "predictions", "ticketmap"},
    "labels": {"_runtime", "paths", "data", "nn", "card", "router", "metrics", "baseline", "train", "predictions", "distill",
               "interpret", "corpus", "labels", "training", "catalog", "loading", "encoder"},
    "bench": {"_runtime", "paths", "data", "nn", "card", "router", "lens", "predictions", "interpret", "lesson",
              "predict", "corpus", "train", "bench", "policy", "compare", "ticketmap", "labels", "encoder", "catalog", "loading", "training",
              "distill"},
    "encoder": {"_runtime", "paths", "data", "nn", "card", "catalog", "lens", "metrics", "baseline", "train", "predictions",
                "encoder", "training"},
    "catalog": {"paths"},
    "interface": set(),
    "loading": {"card", "catalog", "router", "encoder", "interface"},
    "cli": {"_runtime", "paths", "data", "card", "router", "predictions", "predict", "train", "interpret", "catalog",
            "corpus", "bench", "policy", "compare", "ticketmap", "labels", "encoder", "loading", "cli", "training", "distill"},
    "__main__": {"cli"},
    "__init__": {"paths", "data", "nn", "lens", "router", "interpret"},
}
TOOLING = ("streamlit", "playwright", "dashboard", "ticketnet.bench")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(package.rglob("*.py"))}


def imports(path: Path, known: set[str]) -> set[str]:
    """Every module `path` imports, at the top or inside a function; `from pkg import mod` counts as pkg.mod."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.add(full if full in known else node.module)
    return out


def part(module: str) -> str:
    """The layer a module of a package belongs to: its subpackage, or the top-level module's own name."""
    rest = module.split(".")[1:] or ["__init__"]
    return rest[0]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: imports(p, set(mods)) for m, p in mods.items()}


def test_the_library_never_imports_tooling(graph):
    for module, deps in graph.items():
        if part(module) in ("bench", "cli"):                            # the benchmarks, and the CLI that runs them
            continue
        bad = sorted(d for d in deps if d.split(".")[0] in ("streamlit", "playwright", "dashboard")
                     or d.startswith("ticketnet.bench"))
        assert not bad, f"{module} imports {bad}: the library stays free of {', '.join(TOOLING)}"


def test_each_layer_reads_only_the_layers_below(graph):
    for module, deps in graph.items():
        allowed = MAY_IMPORT[part(module)]
        for dep in (d for d in deps if d == "ticketnet" or d.startswith("ticketnet.")):
            if dep == "ticketnet":
                pytest.fail(f"{module} imports the ticketnet package itself; import the module it needs")
            assert part(dep) in allowed | {part(module)}, f"{module} may not import {dep}"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """An import cycle among the graph's own modules (function-level imports included), or None. A package's
    __init__ re-exports its modules: that edge is the package's API, not a dependency of theirs."""
    inside = {m: {d for d in deps if d in graph and d != m and not m.startswith(d + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(inside[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(inside):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycles(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checker_sees_a_cycle_and_a_forbidden_import(tmp_path):
    # The checks above must be able to fail: a module that imports streamlit, seen through the same parser.
    fake = tmp_path / "fake.py"
    fake.write_text("def f():\n    import streamlit as st\n    from ticketnet.bench import cases\n")
    assert {"streamlit", "ticketnet.bench.cases"} <= imports(fake, {"ticketnet.bench.cases"})


# -- the dashboard: the same floor plan, one storey up -----------------------------------------------------------------
DASHBOARD = ROOT / "dashboard"
# Read bottom-up. `text` (safe Markdown, numbers) and `view` (choices in the session and the URL) know nothing of
# tickets; `data/` holds cached computations on the library and never reads a session; `charts/` builds charts from
# plain tables and reads no data; `render` draws them from cached specs;
# `narrative`, `filters`, `state`, `router_choice`, `views` and `ui` sit above both;
# `access` (who may enter, from the sign-in file) knows nothing of the rest; `sign_in` checks it on every page;
# `server/` watches sessions and the heap and holds the sign-in gate; the entry points (`app`, `signed_in`,
# `__main__`, `team`) and the pages may use everything. The library (ticketnet) may be read from every part but `view`.
DASHBOARD_MAY_IMPORT: dict[str, set[str]] = {
    "__init__": set(),
    "text": set(),
    "view": set(),
    "data": {"data", "text"},
    "charts": {"charts", "text"},
    "narrative": {"narrative", "data", "charts", "text"},
    "filters": {"view", "text"},
    "state": {"view", "data", "text"},
    "router_choice": {"view", "data", "text"},
    "views": {"view", "filters", "narrative", "data", "text"},
    "render": {"data", "charts", "text"},
    "ui": {"view", "views", "filters", "state", "router_choice", "narrative", "data", "charts", "text", "render"},
    "encoder_ui": {"view", "views", "narrative", "data", "charts", "text", "ui", "render"},
    "access": set(),
    "sign_in": {"access", "data", "text"},
    "server": {"server", "data", "access"},
    "app": {"text", "view", "data", "charts", "narrative", "filters", "state", "router_choice", "views", "ui",
            "encoder_ui", "server", "render", "sign_in"},
    "signed_in": {"server"},
    "__main__": {"data", "access"},
    "team": {"access"},
}
STDLIB_ONLY_BUT_STREAMLIT = ("view",)


@pytest.fixture(scope="module")
def dashboard_graph() -> dict[str, set[str]]:
    mods = modules(DASHBOARD)
    return {m: imports(p, set(mods)) for m, p in mods.items()}


def test_each_dashboard_layer_reads_only_the_layers_below(dashboard_graph):
    assert {part(m) for m in dashboard_graph} <= set(DASHBOARD_MAY_IMPORT), "a new part needs its rule"
    for module, deps in dashboard_graph.items():
        allowed = DASHBOARD_MAY_IMPORT[part(module)]
        for dep in (d for d in deps if d == "dashboard" or d.startswith("dashboard.")):
            assert dep != "dashboard", f"{module} imports the dashboard package itself"
            assert part(dep) in allowed | {part(module)}, f"{module} may not import {dep}"


def test_the_view_layer_imports_streamlit_and_the_standard_library_only(dashboard_graph):
    import sys

    for module, deps in dashboard_graph.items():
        if part(module) not in STDLIB_ONLY_BUT_STREAMLIT:
            continue
        outside = sorted(d for d in deps if d.split(".")[0] not in sys.stdlib_module_names
                         and d.split(".")[0] not in ("streamlit", "__future__"))
        assert not outside, f"{module} imports {outside}: it holds the view mechanism only"


def test_the_data_layer_never_reads_a_session():
    for path in sorted((DASHBOARD / "data").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "session_state" not in source and "query_params" not in source, \
            f"{path.name} reads the session or the URL: data/ holds cached computations only"


def test_no_import_cycles_in_the_dashboard(dashboard_graph):
    cycle = find_cycle(dashboard_graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]        # the check can fail


def test_the_dashboard_checker_sees_a_forbidden_import_inside_a_function(tmp_path):
    fake = tmp_path / "corpus.py"
    fake.write_text("def f():\n    from dashboard import state\n    from dashboard.charts import policy\n")
    deps = imports(fake, {"dashboard.state", "dashboard.charts.policy"})
    bad = [d for d in deps if part(d) not in DASHBOARD_MAY_IMPORT["data"] | {"data"}]
    assert sorted(bad) == ["dashboard.charts.policy", "dashboard.state"]
