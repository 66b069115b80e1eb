"""One module per concept page, named as the page."""
