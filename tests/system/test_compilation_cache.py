"""A warm restart: the app server keeps JAX's persistent compilation cache in a folder beside its
store, and a restarted server reads the programs its last run wrote there instead of compiling them.
`benchmarks.bench_restart` gives the figures."""

from __future__ import annotations

from harness.app_server import JAX_CACHE_VARIABLES, cache_entries, render, start_app, stop_app
from harness.processes import last_json_line, run_python
from pmap_core.runtime import COMPILATION_CACHE_FOLDER


def _stamps(folder) -> dict[str, bytes]:
    """Each entry's last read, as JAX's bounded cache records it (`<key>-atime`, rewritten on every hit)."""
    return {name: (folder / name.replace("-cache", "-atime")).read_bytes() for name in cache_entries(folder)}


def _serve_once(folder, pages) -> None:
    server, _ = start_app(folder)
    try:
        render(server, pages)
    finally:
        stop_app(server)


def test_a_restarted_server_reads_the_programs_it_compiled_before(tmp_path):
    cache = tmp_path / COMPILATION_CACHE_FOLDER  # beside tmp_path/mlflow.db, the store
    _serve_once(tmp_path, ["collectives"])
    written = _stamps(cache)
    assert written, f"the first run wrote nothing to {cache}"

    _serve_once(tmp_path, ["collectives"])  # the same page after a restart
    read = _stamps(cache)
    assert set(read) == set(written), "a restarted server compiled the same page's programs again"
    assert all(read[name] != written[name] for name in written), "a restarted server did not read every program"


def _configured(store, env: dict[str, str], keep_jax_variables: bool = False) -> dict:
    """What configure_compilation_cache decides in a fresh process tracking into `store`/mlflow.db."""
    store.mkdir()
    done = run_python(["-m", "tests.children.compilation_cache_settings", f"sqlite:///{store / 'mlflow.db'}"],
                      cwd=store.parent, env=env, drop=() if keep_jax_variables else JAX_CACHE_VARIABLES, check=True)
    return last_json_line(done.stdout)


def test_the_cache_folder_its_setting_and_jaxs_own_variable(tmp_path):
    default = _configured(tmp_path / "default", {})
    assert default["folder"] == default["jax"] == str(tmp_path / "default" / COMPILATION_CACHE_FOLDER)
    assert default["min_compile_s"] == 0.0  # small programs are cached too

    chosen = _configured(tmp_path / "chosen", {"PMAP_LAB_COMPILATION_CACHE": str(tmp_path / "elsewhere")})
    assert chosen["folder"] == chosen["jax"] == str(tmp_path / "elsewhere") and (tmp_path / "elsewhere").is_dir()

    off = _configured(tmp_path / "off", {"PMAP_LAB_COMPILATION_CACHE": "off"})
    assert off["folder"] is None and off["jax"] is None
    assert not (tmp_path / "off" / COMPILATION_CACHE_FOLDER).exists()

    # JAX's own variable wins (the tests set it for every process they start), whatever the app's says.
    jaxs = _configured(tmp_path / "jaxs", {"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax"),
                                           "PMAP_LAB_COMPILATION_CACHE": str(tmp_path / "elsewhere")},
                       keep_jax_variables=True)
    assert jaxs["folder"] == jaxs["jax"] == str(tmp_path / "jax")
    assert not (tmp_path / "jaxs" / COMPILATION_CACHE_FOLDER).exists()


def test_without_filelock_the_cache_is_off_and_the_server_log_says_so(tmp_path):
    """JAX refuses its size-bounded cache without `filelock` (only a UserWarning per compile): the app
    turns the cache off and says why in one line of the log, rather than running with an empty folder."""
    store = tmp_path / "store"
    store.mkdir()
    done = run_python(["-m", "tests.children.compilation_cache_settings", f"sqlite:///{store / 'mlflow.db'}",
                       "--without-filelock"], cwd=tmp_path, drop=JAX_CACHE_VARIABLES, check=True)
    assert last_json_line(done.stdout)["folder"] is None
    said = [line for line in done.stderr.splitlines() if "compilation cache is off" in line]
    assert len(said) == 1 and "filelock" in said[0], done.stderr[-2000:]
