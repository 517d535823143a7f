"""The Plan page's sections, one module each (Streamlit lists only ``pages/*.py`` as pages)."""
