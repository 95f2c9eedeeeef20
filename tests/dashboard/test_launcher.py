"""`python -m dashboard`: streamlit run on the app, with the heavy libraries importing in a thread from the start."""

import os
import subprocess
import sys
import threading
from pathlib import Path

from dashboard import __main__ as launcher

ROOT = Path(__file__).resolve().parents[2]


def test_main_runs_streamlit_on_the_app_with_the_options_given(monkeypatch):
    from streamlit.web import cli

    seen = {}
    started = []
    monkeypatch.setattr(cli, "main", lambda: seen.setdefault("argv", list(sys.argv)) and 0)
    seen_args = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name),
                                                                 seen_args.append(self._args[1:])))
    monkeypatch.setattr(sys, "argv", ["python -m dashboard"])
    assert launcher.main(["--server.port", "8599"]) == 0
    assert seen["argv"] == ["streamlit", "run", str(launcher.APP), "--server.port", "8599"]
    assert launcher.APP.name == "app.py" and launcher.APP.is_file()
    assert started == ["ticketnet-preload"], "the imports start before the server does"
    assert seen_args[-1] == (False,), "the server's preload switches Altair's per-object checks off"


def test_preload_imports_the_libraries_and_builds_a_chart_without_error():
    launcher._preload(torch_first=True)
    assert {"torch", "pandas", "altair", "streamlit.emojis"} <= set(sys.modules)


def test_the_server_builds_charts_without_altair_s_per_object_checks_and_the_tests_keep_them():
    # The check at every schema object's creation (Altair's debug mode) is for building charts, where the suite
    # runs them; the server skips it. The same chart either way.
    code = ("import altair, json\nfrom dashboard.__main__ import _preload\n"
            "from dashboard.charts import interpretation as charts\n"
            "spec = lambda: json.dumps(charts.token_highlight(['a', 'b'], [0.1, -0.2], title='t').to_dict(), "
            "sort_keys=True)\n"
            "before = altair.utils.schemapi.DEBUG_MODE\nchecked = spec()\n"
            "_preload(torch_first=False, check_charts=False)\n"
            "print([before, altair.utils.schemapi.DEBUG_MODE, spec() == checked])")
    assert _fresh_python(code) == "[True, False, True]"
    launcher._preload(torch_first=False)
    import altair
    assert altair.utils.schemapi.DEBUG_MODE, "the suite's own preload keeps the checks"


def test_torch_is_preloaded_only_when_the_first_page_must_route(router, artifacts, tmp_path, monkeypatch):
    import shutil

    from dashboard.data import store
    from ticketnet import paths, predictions

    folder = tmp_path / "weights"
    folder.mkdir()
    for p in predictions.weights_files(artifacts.weights):
        shutil.copy(p, folder / p.name)
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(folder / artifacts.weights.name))
    monkeypatch.setenv("TICKETNET_DATA", str(artifacts.data))
    weights, valid = paths.weights_path(), paths.data_path() / "valid.csv"

    assert launcher._first_page_routes(), "no predictions with the weights, an empty cache: the page routes"
    path = store.table_path("routed", "valid", *predictions.key_hashes(weights, valid))
    assert store.save_table(path, __import__("pandas").DataFrame({"ticket_id": ["T-1"]}))
    assert not launcher._first_page_routes(), "stored by an earlier start: the page draws without the model"
    path.unlink()
    predictions.write_predictions(router, weights, artifacts.data, splits=("valid",))
    assert not launcher._first_page_routes(), "shipped with the weights: the page draws without the model"
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(tmp_path / "elsewhere" / "router.pt"))
    assert launcher._first_page_routes(), "other weights: neither is theirs"


def _fresh_python(code: str) -> str:
    """The last line `code` prints in a new interpreter (this one has torch loaded already)."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_without_routing_to_do_the_preload_leaves_torch_for_later():
    # torch's import holds the GIL for about a second; the first page's script run needs it more.
    code = ("import sys\nfrom dashboard.__main__ import _preload\n_preload(torch_first=False)\n"
            "print([m in sys.modules for m in ('pandas', 'altair', 'streamlit.emojis', 'torch')])")
    assert _fresh_python(code) == "[True, True, True, False]"


def test_the_first_page_s_modules_import_no_torch():
    # A restart draws the Tickets page before torch has loaded: everything that page imports must do without it.
    code = ("import sys, ticketnet, ticketnet.card, ticketnet.metrics, ticketnet.paths, ticketnet.data.tickets\n"
            "import dashboard.data.model, dashboard.data.splits, dashboard.data.ticket, dashboard.ui, dashboard.state, "
            "dashboard.filters, dashboard.charts.attention, dashboard.data.store, dashboard.text, dashboard.narrative\n"
            "from ticketnet import load_card, tokenize\n"
            "load_card().encode('where is my parcel')\n"
            "print(sorted(m for m in ('torch', 'scipy', 'captum') if m in sys.modules))\n")
    assert _fresh_python(code) == "[]"


def test_the_dashboard_launcher_sets_its_malloc_options_unless_glibc_s_variables_are_set(monkeypatch):
    import sys

    import dashboard.__main__ as launcher
    import ticketnet._runtime.allocator as allocator
    from streamlit.web import cli

    monkeypatch.setattr(sys, "argv", list(sys.argv))                # the launcher hands its arguments to Streamlit
    calls = []
    monkeypatch.setattr(allocator, "limit_arenas", lambda n: calls.append(n) or True)
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append("keep freed") or True)
    monkeypatch.setattr(allocator, "keep_small_pages", lambda: calls.append("small pages") or True)
    monkeypatch.delenv(launcher.HUGE_PAGES_ENV, raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(launcher.threading, "Thread", lambda **kw: type("T", (), {"start": lambda self: None})())
    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert launcher.main(["--server.headless", "true"]) == 0 and calls == [launcher.SERVER_ARENAS, "keep freed",
                                                                              "small pages"]
    assert os.environ["OPENBLAS_NUM_THREADS"] == str(launcher.SERVER_BLAS_THREADS)
    calls.clear()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")
    monkeypatch.setenv(launcher.HUGE_PAGES_ENV, "1")
    assert launcher.main(["--server.headless", "true"]) == 0 and calls == []
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"


def test_numpy_s_blas_takes_the_launcher_s_thread_count():
    # The variable is read when NumPy loads its OpenBLAS, so in a fresh interpreter, as the server starts.
    code = ("import numpy, threadpoolctl; print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info() "
            "if p['internal_api'] == 'openblas'}))")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["[1]"]


def test_the_server_starts_itself_again_on_jemalloc_only_where_it_is_installed_and_wanted(monkeypatch):
    from ticketnet._runtime import allocator

    monkeypatch.setattr(allocator, "jemalloc_library", lambda: "libjemalloc.so.2")
    monkeypatch.setattr(allocator, "jemalloc_active", lambda: False)
    env = launcher.jemalloc_restart({"PATH": "/bin"})
    assert env["LD_PRELOAD"] == "libjemalloc.so.2" and env["PATH"] == "/bin"
    assert env["MALLOC_CONF"] == allocator.JEMALLOC_CONF
    assert launcher.jemalloc_restart(env) is None, "the restart itself never starts again, even if the preload failed"
    assert launcher.jemalloc_restart({launcher.ALLOCATOR_ENV: "glibc"}) is None
    monkeypatch.setattr(allocator, "jemalloc_active", lambda: True)
    assert launcher.jemalloc_restart({}) is None
    monkeypatch.setattr(allocator, "jemalloc_active", lambda: False)
    monkeypatch.setattr(allocator, "jemalloc_library", lambda: None)
    assert launcher.jemalloc_restart({}) is None


def test_main_called_with_options_never_replaces_the_process(monkeypatch):
    from streamlit.web import cli

    monkeypatch.setattr(launcher, "jemalloc_restart", lambda environ: {"LD_PRELOAD": "libjemalloc.so.2"})
    monkeypatch.setattr(os, "execve", lambda *a: (_ for _ in ()).throw(AssertionError("execve called")))
    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)
    monkeypatch.setattr(sys, "argv", ["python -m dashboard"])
    assert launcher.main(["--server.port", "8599"]) == 0
