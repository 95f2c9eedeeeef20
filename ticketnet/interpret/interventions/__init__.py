"""Interventions on the routes: attention edges cut, heads switched off, patching, phrases and their Shapley values."""
