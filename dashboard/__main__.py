"""`python -m dashboard [--secrets FILE | --no-login] [streamlit options]`: the Streamlit server, with the heavy
libraries importing as it starts, and sign-in in front of it where it is served beyond this machine."""

# Importing torch, pandas and altair takes most of a cold start's first script run if it waits for the browser to
# connect. So the first page (Tickets) draws without torch when the valid split's predictions are at hand (shipped
# with the weights, or stored by an earlier start), and this launcher imports pandas and altair in a thread from the
# process's start, overlapping the server's own start-up and the browser fetching the frontend; torch comes first
# only when that page must route the split. Measured side by side by `python -m ticketnet bench` (cold start, both
# launchers alternated; docs/performance.md, "Cold start").

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"
# The same app behind the sign-in gate (dashboard/signed_in.py), served when a sign-in file is given.
SIGNED_IN_APP = APP.with_name("signed_in.py")
# Streamlit's own place for secrets, read as the sign-in file when --secrets names none and it has an [auth] section.
DEFAULT_SECRETS = APP.parent.parent / ".streamlit" / "secrets.toml"
# glibc gives contending threads malloc arenas of their own (up to 8 per core), each keeping its own freed memory;
# the server's sessions run in threads that come and go. docs/performance.md ("Memory") measures it both ways.
SERVER_ARENAS = 2
# Freed blocks stay in the heap for reuse, so the per-ticket tensor work does not page-fault (mapping blocks of 1 MiB
# and more apart instead cost Heads and Interpretation more CPU per action; docs/performance.md, "Memory"); the idle
# watch hands the heap's free pages back every 30 s while analysts work, and once they have left
# (dashboard/server/idle.py).
# NumPy's OpenBLAS keeps a thread per core that spins after each call waiting for the next: on the server that spin
# adds to the CPU of a ticket's first Interpretation (docs/performance.md, "The server's cost per action"). The
# sessions share out the cores instead, as with torch's threads (dashboard/data/model.py). OPENBLAS_NUM_THREADS,
# when set, wins.
SERVER_BLAS_THREADS = 1
# Set to 1 to leave transparent huge pages as the kernel configures them (for measuring the two side by side).
HUGE_PAGES_ENV = "TICKETNET_HUGE_PAGES"
# The server runs on jemalloc where the system has it (Debian's libjemalloc2; `make run` installs it): under load
# glibc's heap kept the freed pages of one page run between the live objects of others, and did not give them all
# back once the analysts had left (the two side by side: docs/performance.md, "Memory"). The launcher starts itself
# again with jemalloc preloaded, before anything else runs. Set to "glibc" to keep glibc's malloc.
ALLOCATOR_ENV = "TICKETNET_ALLOCATOR"
_RESTARTED_ENV = "_TICKETNET_PRELOADED"      # set on the restart, so a preload that did not take never loops


def _first_page_routes() -> bool:
    """Whether the Tickets page will have to route the valid split (its predictions neither shipped with these weights
    for this data nor stored by an earlier start): only then does it need torch before it can draw."""
    from dashboard.data import store  # hashlib, json and paths only: no pandas, no torch
    from ticketnet import paths, predictions

    weights, valid = paths.weights_path(), paths.data_path() / "valid.csv"
    try:
        hashes = predictions.key_hashes(weights, valid)
        return not (predictions.has_predictions(weights, "valid", valid, hashes)
                    or store.table_path("routed", "valid", *hashes).is_file())
    except OSError:
        return True


def _preload(torch_first: bool, check_charts: bool = True) -> None:
    # Third-party libraries only: they never import the dashboard's modules, so the script thread, which may be
    # importing those at the same moment, can wait on these imports' locks but never form a cycle with them.
    if torch_first:
        import torch  # noqa: F401
    import altair
    if not check_charts:
        # Altair's debug mode checks every schema object against the Vega-Lite schema as it is made (an axis, a
        # title, a step), a large part of building the Interpretation page's charts (docs/research-log.md, "Cutting
        # the server's cost per action"). The test suite, which runs the pages without this launcher, keeps it on,
        # so every chart a page builds is still checked there.
        altair.utils.schemapi.disable_debug_mode()
    import pandas  # noqa: F401
    import streamlit.emojis  # noqa: F401  (compiled on the first st.set_page_config with an emoji icon)

    # The first validated chart loads and compiles the Vega-Lite schema; every later one reuses it. What these
    # preloads save: docs/performance.md, "Cold start".
    # Inline values, not a DataFrame: a data transformer that Streamlit may have switched on for a page's chart at
    # this moment (Altair's transformers are global) never sees this one.
    altair.Chart(altair.Data(values=[{"x": 0}])).mark_point().encode(x="x:Q").to_dict()
    # With the valid split's routing stored, the Tickets page draws without the model, and torch (imports that hold
    # the GIL the first script run needs) is left to `model.warm_model`, which the app calls once that run is over:
    # importing it here instead makes a restart's first page slower (docs/research-log.md, "The cold start, taken
    # apart").


def jemalloc_restart(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The environment to start this server again in with jemalloc preloaded; None where it should run as it is
    (jemalloc already in use or not installed, glibc asked for, or this is the restart)."""
    from ticketnet._runtime import allocator

    if environ.get(ALLOCATOR_ENV, "").lower() == "glibc" or _RESTARTED_ENV in environ or allocator.jemalloc_active():
        return None
    library = allocator.jemalloc_library()
    if library is None:
        return None
    return {**allocator.preload_environment(dict(environ), library), _RESTARTED_ENV: "1"}


def bound_address(streamlit_args: list[str], environ: Mapping[str, str]) -> str:
    """The address the server will listen on: --server.address, else STREAMLIT_SERVER_ADDRESS, else the project's
    .streamlit/config.toml (localhost)."""
    for i, arg in enumerate(streamlit_args):
        if arg == "--server.address" and i + 1 < len(streamlit_args):
            return streamlit_args[i + 1]
        if arg.startswith("--server.address="):
            return arg.split("=", 1)[1]
    return environ.get("STREAMLIT_SERVER_ADDRESS", "localhost")


class LaunchError(Exception):
    """Why the server must not start, in one line."""


def sign_in_launch(args: list[str], environ: Mapping[str, str],
                   default_secrets: Path = DEFAULT_SECRETS) -> tuple[Path | None, list[str], str | None]:
    """Read the launcher's own options out of `args`: (the checked sign-in file or None, the options left for
    Streamlit, a warning to print). LaunchError where the server would serve tickets beyond this machine to anyone:
    bound beyond localhost with neither a sign-in file nor --no-login."""
    from dashboard import access

    rest, secrets, no_login = [], None, False
    it = iter(args)
    for arg in it:
        if arg == "--no-login":
            no_login = True
        elif arg == "--secrets" or arg.startswith("--secrets="):
            secrets = arg.split("=", 1)[1] if "=" in arg else next(it, None)
            if not secrets:
                raise LaunchError("--secrets needs the sign-in file's path")
        else:
            rest.append(arg)
    if secrets and no_login:
        raise LaunchError("--secrets and --no-login contradict each other: choose one")
    if secrets is None and not no_login and default_secrets.is_file():
        try:
            import tomllib

            if "auth" in tomllib.loads(default_secrets.read_text(encoding="utf-8")):
                secrets = str(default_secrets)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise LaunchError(f"{default_secrets} cannot be read ({e})") from None
    address = bound_address(rest, environ)
    if secrets is None:
        if access.is_local(address) or no_login:
            warning = None if access.is_local(address) else (
                f"warning: --no-login: the dashboard on {address} serves every ticket to anyone who can reach it; "
                "keep it behind a proxy that signs people in")
            return None, rest, warning
        raise LaunchError(f"the dashboard would serve every ticket on {address} to anyone who can reach it: give a "
                          "sign-in file (--secrets FILE; README, 'Serving it to your team'), or --no-login behind "
                          "a proxy that signs people in")
    try:
        sign_in = access.read_sign_in(secrets)
    except access.SignInError as e:
        raise LaunchError(str(e)) from None
    from ticketnet.catalog import DEFAULT_ROUTER

    if DEFAULT_ROUTER in sign_in.access.routers:
        raise LaunchError(f"{sign_in.path}: [ticketnet.routers] names the default router {DEFAULT_ROUTER!r}, which "
                          "every allowed user opens; limit who may enter with allowed_domains and allowed_emails")
    return sign_in.path, [*rest, "--secrets.files", str(sign_in.path)], None


def main(argv: list[str] | None = None) -> int:
    import os

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        sign_in_file, streamlit_args, warning = sign_in_launch(args, os.environ)
    except LaunchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if argv is None and (restart := jemalloc_restart(os.environ)) is not None:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], restart)     # the same process id
    if warning:                                          # said once, by the process that serves
        print(warning, file=sys.stderr)
    if sign_in_file is not None:
        from dashboard import access

        os.environ[access.SIGN_IN_ENV] = str(sign_in_file)      # for the gate and the script, in this process
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(SERVER_BLAS_THREADS))   # read when NumPy is first imported

    from streamlit.web import cli

    from ticketnet._runtime.allocator import jemalloc_active, keep_freed_memory, keep_small_pages, limit_arenas

    if not jemalloc_active():                            # glibc's settings would not reach jemalloc
        if "MALLOC_ARENA_MAX" not in os.environ:         # glibc's own variables, when set, win
            limit_arenas(SERVER_ARENAS)                  # before any thread starts
        if not {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"} & set(os.environ):
            keep_freed_memory()                          # freed blocks kept for reuse; the idle watch trims the heap
    if os.environ.get(HUGE_PAGES_ENV) != "1":
        keep_small_pages()                               # and what goes back stays back
    threading.Thread(target=_preload, args=(_first_page_routes(), False), name="ticketnet-preload", daemon=True).start()
    script = APP if sign_in_file is None else SIGNED_IN_APP
    sys.argv = ["streamlit", "run", str(script), *streamlit_args]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
