"""`python -m dashboard [streamlit options]`: the Streamlit server, with the heavy libraries loading as it starts."""

# A cold start spent most of its time in the first script run importing torch, pandas and altair (about 2.5 s on
# this machine) after the browser had connected. Importing them in a thread once the server is up overlaps that
# with the browser fetching and starting the frontend; the script run then finds them in sys.modules. The thread
# waits for the server to listen first: importing during its start-up held the GIL and only delayed the health
# check.

from __future__ import annotations

import sys
import threading
from pathlib import Path

# Not ticketnet.paths: importing the ticketnet package imports torch, which is what the server must not wait for.
APP = Path(__file__).resolve().parent / "app.py"


def _preload(poll: float = 0.02, patience: float = 30.0) -> None:
    import socket
    import time

    from streamlit import config

    # Wait until the server accepts connections (the health check answers then), so the imports below overlap the
    # browser loading the frontend rather than the server's own start.
    port, deadline = int(config.get_option("server.port")), time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("localhost", port), timeout=poll):
                break
        except OSError:
            time.sleep(poll)
    import altair  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401  (how Streamlit ships every chart's and table's data)
    import torch  # noqa: F401

    import dashboard.charts  # noqa: F401
    import dashboard.intervention_charts  # noqa: F401
    import dashboard.interventions  # noqa: F401
    import dashboard.state  # noqa: F401
    import dashboard.ui  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    from streamlit.web import cli

    threading.Thread(target=_preload, name="ticketnet-preload", daemon=True).start()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
