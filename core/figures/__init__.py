"""Plotly figure builders, one module per area; pure functions returning ``go.Figure``."""
