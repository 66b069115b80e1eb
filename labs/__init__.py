"""Streamlit pages of pmap-lab and the UI helpers they share."""
