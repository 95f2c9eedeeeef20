"""The Streamlit dashboard: the entry script, page helpers and pure chart builders (pages live in pages/)."""
