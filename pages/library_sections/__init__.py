"""The Library page's section modules (Streamlit lists only ``pages/*.py`` as pages)."""
