"""The checks docs/DEPLOY.md runs before class and for readiness, each failing in one line that names what is
wrong: `python -m pmap_core store check` (the class store takes a run; the teacher key's length, also from the
app processes' environment file) and the before-class benchmarks (`benchmarks.memory_after_all_labs`), which
refuse to measure a deployment whose browser, teacher key or class store would fail a class.

PostgreSQL down behind `mlflow server` is in tests/system/test_postgres_store.py (it needs the real server)."""

from __future__ import annotations

import json

import pytest

from harness.processes import ROOT, free_port, new_tracking_store, run_python

CHECK = ["-m", "pmap_core", "store", "check"]
BEFORE_CLASS = ["-m", "benchmarks.memory_after_all_labs"]
KEY, SHORT_KEY, GOOD_KEY = "PMAP_LAB_TEACHER_KEY", "12345", "a-long-enough-teacher-key"


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text[-3000:]
    return lines[0]


def test_the_store_check_writes_and_reads_a_run_once_made(tmp_path):
    store = new_tracking_store(tmp_path / "mlflow.db")
    env = {"MLFLOW_TRACKING_URI": store, "PMAP_LAB_TEACHER_KEY": GOOD_KEY}
    first, again = (json.loads(run_python([*CHECK, "--json"], cwd=tmp_path, env=env, check=True).stdout)
                    for _ in range(2))
    assert first["store"] == store and first["teacher_key"] == "set"
    assert again["check_run_id"] == first["check_run_id"]  # one run of its own, tagged again: no run per check
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("pmap-lab-checks").experiment_id
    (run,) = client.search_runs([experiment])
    assert run.info.status == "FINISHED" and len(run.data.tags["pmap_lab.checked"]) == 32
    assert client.get_experiment_by_name("pmap-lab") is None  # the lab's own runs are left alone


@pytest.mark.parametrize("key", [SHORT_KEY, "k" * 201])
def test_a_teacher_key_of_the_wrong_length_fails_the_checks_in_one_line(key, tmp_path):
    """`streamlit run` serves with such a key and every page shows only the refusal: the checks say so, from this
    environment or from the app's environment file, before anything else."""
    store = new_tracking_store(tmp_path / "mlflow.db")
    done = run_python(CHECK, cwd=tmp_path, env={"MLFLOW_TRACKING_URI": store, "PMAP_LAB_TEACHER_KEY": key})
    line = one_line(done.stderr)
    assert done.returncode == 1 and line.startswith("error: PMAP_LAB_TEACHER_KEY has") and key not in line
    assert done.stdout == ""

    app_env = tmp_path / "app.env"
    app_env.write_text(f'# as /srv/pmap-lab/app.env\n{KEY}="{key}"\nSTREAMLIT_SERVER_COOKIE_SECRET=x\n')
    from_file = run_python([*CHECK, "--env-file", str(app_env), "--store", store], cwd=tmp_path,
                           env={"PMAP_LAB_TEACHER_KEY": GOOD_KEY})
    assert from_file.returncode == 1 and one_line(from_file.stderr) == line

    before_class = run_python(BEFORE_CLASS, cwd=ROOT, env={"PMAP_LAB_TEACHER_KEY": key}, timeout=300)
    assert before_class.returncode != 0
    assert "PMAP_LAB_TEACHER_KEY has" in one_line(before_class.stderr)


def test_a_store_that_does_not_answer_fails_the_checks_in_one_line(tmp_path):
    gone = f"http://student:s3cret@127.0.0.1:{free_port()}"
    for command, cwd in ((CHECK, tmp_path), (BEFORE_CLASS, ROOT)):
        done = run_python(command, cwd=cwd, env={"MLFLOW_TRACKING_URI": gone}, drop=[KEY], timeout=300)
        line = one_line(done.stderr)
        assert done.returncode != 0 and "does not answer" in line and "s3cret" not in line, line


def test_a_missing_browser_is_named_with_what_to_install(tmp_path):
    """Chromium missing, or playwright missing (a `scripts/setup.sh` host has only requirements.txt): here a
    `playwright` package without its sync API on the path first, as a half-removed install leaves it."""
    no_chromium = run_python(BEFORE_CLASS, cwd=ROOT, env={"PMAP_LAB_CHROMIUM": str(tmp_path / "chromium")}, drop=[KEY])
    line = one_line(no_chromium.stderr)
    assert no_chromium.returncode == 2 and "not found (apt-get install chromium)" in line, line

    (tmp_path / "playwright").mkdir()
    (tmp_path / "playwright" / "__init__.py").write_text("")
    no_playwright = run_python(BEFORE_CLASS, cwd=ROOT, path=(tmp_path, ROOT), drop=[KEY])
    line = one_line(no_playwright.stderr)
    assert no_playwright.returncode == 2 and "playwright is not installed" in line, line
    assert "scripts/setup.sh requirements-dev.txt" in line
