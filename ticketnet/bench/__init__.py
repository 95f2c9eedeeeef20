"""Benchmarks and browser tooling: `python -m ticketnet bench` and the real-server helpers the tests share.

Nothing in the library imports this package; it may import streamlit and playwright.
"""
