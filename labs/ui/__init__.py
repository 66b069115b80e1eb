"""The Streamlit helpers the pages share; the pages themselves are the scripts in `labs/`.

- `i18n`: every text in the reader's language (the tables are in `labs/texts/`).
- `links`: widgets whose value lives in the link, so a link reproduces what a person sees.
- `visitor`: what a visitor sees: a value from outside as literal text, an error as a short message.
- `hardware`: the device runtime in the sidebar and beside every scaling figure.
- `blocks`: a table with translated headers, the code a lab ran, the export button.
- `tracking`: where a training's MLflow run went, or why none was started.
- `heavy_jobs`: the process-wide queue for heavy work.
- `charts`, `classroom`, `share`, `shared_cache`, `first_imports`, `server_exit`.
"""
