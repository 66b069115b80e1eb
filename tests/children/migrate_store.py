"""Runs MLflow's migrations on an empty database, `python -m tests.children.migrate_store TRACKING_URI`;
prints nothing.

Run by tests/postgres_support.py on the template database, in a process of its own: no connection to the
template may stay open, or PostgreSQL refuses to copy it."""

import sys

from mlflow.tracking import MlflowClient

if __name__ == "__main__":
    MlflowClient(sys.argv[1]).search_experiments()
