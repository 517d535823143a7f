"""A reference Streamlit page for ``bench/pages.py``: what a plain page of the same kind costs (a title,
a slider, a selectbox, a 12-row table and a Plotly chart of 12 curves × 150 points, nothing fitted),
so that each real page's first run is printed as a multiple of it measured in the same run."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.title("Reference page")
target = st.slider("Target", 0.5, 0.99, 0.92, key="ref_target")
view = st.selectbox("Show", ["all", *[f"run {i}" for i in range(12)]], key="ref_view")
steps = np.arange(1, 151)
curves = {f"run {i}": 1 / (0.01 * (i + 1) * steps + 0.5) + 0.05 for i in range(12)}
table = pd.DataFrame({"file": list(curves), "final loss": [c[-1] for c in curves.values()],
                      "min loss": [c.min() for c in curves.values()]})
st.metric("Runs below 0.1", int((table["final loss"] < 0.1).sum()))
fig = go.Figure([go.Scatter(x=steps, y=c, name=n, mode="lines") for n, c in curves.items()
                 if view in ("all", n)])
fig.update_layout(title="Loss against step", height=420)
st.plotly_chart(fig, key="ref_chart")
st.dataframe(table, key="ref_table", hide_index=True)
