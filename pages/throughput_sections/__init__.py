"""The Throughput page's sections (Streamlit lists only ``pages/*.py`` as pages)."""
