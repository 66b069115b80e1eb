import streamlit as st

from labs.i18n import texts

T = texts("comm_benchmark")

st.title(T("title"))
st.markdown(T("summary"))
