"""Text tables, one module per page; see labs/i18n.py."""
