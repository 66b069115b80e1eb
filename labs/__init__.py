"""Streamlit pages of pmap-lab: one script per page (`labs/<page>.py`, listed in `registry`), the
Streamlit helpers they share in `labs/ui/`, and every text in both languages in `labs/texts/`."""
