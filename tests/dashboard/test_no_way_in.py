"""No way in, checked without a browser: the server settings in .streamlit/config.toml, weights loaded with
`weights_only=True` everywhere, and no raw HTML anywhere in the dashboard. (The live checks, a real server and
chromium, are in test_e2e_security.py and test_offline.py.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for folder in ("ticketnet", "dashboard", "pages") for p in (ROOT / folder).rglob("*.py"))
UI_SOURCES = [p for p in SOURCES if p.parent.name in ("dashboard", "pages")]


def test_the_config_file_keeps_the_server_closed():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server, browser, client = config["server"], config["browser"], config["client"]
    assert server["address"] in ("localhost", "127.0.0.1"), "listen on loopback unless told otherwise"
    assert server["enableXsrfProtection"] is True
    assert 0 < server["maxUploadSize"] <= 50                      # MB
    assert browser["gatherUsageStats"] is False
    assert client["showErrorDetails"] in ("none", False)
    assert "--server.address 0.0.0.0" in (ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"), \
        "the file says how to expose the server"


def test_every_torch_load_is_weights_only():
    calls = [(p, m) for p in SOURCES for m in re.finditer(r"torch\.load\(([^)]*)\)", p.read_text(encoding="utf-8"))]
    assert calls, "the router is loaded somewhere"
    for path, m in calls:
        assert "weights_only=True" in m.group(1), f"{path.relative_to(ROOT)}: {m.group(0)}"


def test_the_dashboard_never_renders_raw_html():
    for path in UI_SOURCES:
        text = path.read_text(encoding="utf-8")
        for forbidden in ("unsafe_allow_html", "st.html(", "components.html(", "components.v1", "st.write("):
            assert forbidden not in text, f"{path.relative_to(ROOT)} uses {forbidden}"
