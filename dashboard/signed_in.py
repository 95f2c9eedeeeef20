"""The dashboard behind sign-in: `python -m dashboard --secrets FILE` serves this app instead of app.py alone."""

# `streamlit run` finds the `app = st.App(...)` below and serves app.py through it, with the sign-in gate in front of
# every route Streamlit has (dashboard/server/gate.py). The file it reads is named in TICKETNET_SIGN_IN.

from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

from dashboard.server.gate import SignInGate

app = st.App("app.py", middleware=[Middleware(SignInGate)])
