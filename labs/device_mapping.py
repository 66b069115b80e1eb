import streamlit as st

from labs.i18n import texts

T = texts("device_mapping")

st.title(T("title"))
st.markdown(T("summary"))
