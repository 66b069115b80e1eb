import streamlit as st

from labs.i18n import texts

T = texts("collectives")

st.title(T("title"))
st.markdown(T("summary"))
