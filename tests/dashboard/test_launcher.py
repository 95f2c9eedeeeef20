"""`python -m dashboard`: streamlit run on the app, with the heavy libraries importing in a thread from the start."""

import sys
import threading

from dashboard import __main__ as launcher


def test_main_runs_streamlit_on_the_app_with_the_options_given(monkeypatch):
    from streamlit.web import cli

    seen = {}
    started = []
    monkeypatch.setattr(cli, "main", lambda: seen.setdefault("argv", list(sys.argv)) and 0)
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    monkeypatch.setattr(sys, "argv", ["python -m dashboard"])
    assert launcher.main(["--server.port", "8599"]) == 0
    assert seen["argv"] == ["streamlit", "run", str(launcher.APP), "--server.port", "8599"]
    assert launcher.APP.name == "app.py" and launcher.APP.is_file()
    assert started == ["ticketnet-preload"], "the imports start before the server does"


def test_preload_imports_the_libraries_and_builds_a_chart_without_error():
    launcher._preload()
    assert {"torch", "pandas", "altair"} <= set(sys.modules)
