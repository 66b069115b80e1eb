"""The experiments page compares runs across implementations, over the store of
tests/core/test_impl_comparison.py (a sweep of every implementation at D = 1, 2 and one run recorded
before `impl` was a param): the page shows the three, colours by implementation, its filter narrows
them and is kept in the link, and every value drawn is the one MLflow holds."""

import json

from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from pmap_core.tracking import experiments
from pmap_core.train.programs import IMPLEMENTATIONS
from tests.apptest_support import assert_clean, open_lab
from tests.core.test_impl_comparison import (  # noqa: F401 - impl_runs: the `store` fixture
    ALL_THREE,
    SWEPT,
    children_by_impl,
    impl_runs,
)


def charts_of(at):
    """Every Altair chart on the page: its Vega-Lite spec, with its datasets as pandas frames."""
    charts = []
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        spec["frames"] = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets]
        charts.append(spec)
    return charts


def fields(spec):
    """Every field an encoding of the chart (or of its layers) names, by channel."""
    found = {}
    for layer in [spec, *spec.get("layer", [])]:
        for channel, encoding in layer.get("encoding", {}).items():
            if isinstance(encoding, dict) and "field" in encoding:
                found.setdefault(channel, set()).add(encoding["field"])
    return found


def test_the_page_compares_and_colours_by_implementation(store):
    uri, tracked = store.uri, store.tracked
    runs = experiments.load_runs(uri)
    at = open_lab("experiments")
    assert_clean(at)
    table = at.dataframe[0].value
    assert set(table["run_id"]) == set(runs["run_id"])
    assert set(table["impl"]) == {*IMPLEMENTATIONS, ALL_THREE}
    assert any("count as pmap" in c.value for c in at.caption)
    assert at.selectbox(key="experiments.impl").value == "all"

    side_by_side = next(d.value for d in at.dataframe if "fastest" in d.value.columns)
    expected = experiments.impl_comparison(experiments.scaling_table(runs))
    assert side_by_side[list(IMPLEMENTATIONS)].equals(expected[list(IMPLEMENTATIONS)])
    assert list(side_by_side["fastest"]) == list(expected["fastest"])

    specs = charts_of(at)
    scaling = [s for s in specs if "impl" in fields(s).get("color", set())]
    assert len(scaling) == 2, [fields(s) for s in specs]  # throughput and efficiency against D
    assert {"steady_throughput", "efficiency"} <= set().union(*(fields(s)["y"] for s in scaling))
    drawn = {impl for s in scaling for frame in s["frames"] if "impl" in frame for impl in frame["impl"]}
    assert drawn == set(IMPLEMENTATIONS)
    steady = next(s for s in scaling if "steady_throughput" in fields(s)["y"])
    points = next(f for f in steady["frames"] if "run_id" in f).set_index("run_id")
    for (impl, devices), (run_id, _) in children_by_impl(tracked).items():  # each point is the run's value
        assert points.loc[run_id, "impl"] == impl and points.loc[run_id, "devices"] == devices
        assert points.loc[run_id, "steady_throughput"] == runs.set_index("run_id").loc[run_id, "steady_throughput"]
    assert any("`--impl all`" in m.value or "pmap/steady_throughput" in m.value for m in at.markdown)


def test_the_page_filter_narrows_and_is_kept_in_the_link(store):
    tracked, legacy_id = store.tracked, store.legacy_id
    at = open_lab("experiments", impl="shard_map")
    assert_clean(at)
    shown = at.dataframe[0].value
    expected = {run_id for (i, _), (run_id, _) in children_by_impl(tracked).items() if i == "shard_map"}
    assert set(shown["run_id"]) == expected | {tracked.run_id}
    assert set(shown["impl"]) == {"shard_map", ALL_THREE}
    assert any("one implementation" in i.value for i in at.info)  # nothing to put side by side

    at.selectbox(key="experiments.impl").set_value("pmap").run()
    assert_clean(at)
    assert at.query_params["impl"] == "pmap"
    assert legacy_id in set(at.dataframe[0].value["run_id"])  # a run from before `impl` counts as pmap

    at = open_lab("experiments", impl="pjit")  # not an implementation: refused, all shown
    assert not at.exception
    assert any("`impl`" in w.value for w in at.warning)
    assert at.selectbox(key="experiments.impl").value == "all"


def test_the_page_shows_end_to_end_throughput_on_request_in_chinese(store):
    uri = store.uri
    runs = experiments.load_runs(uri)
    at = open_lab("experiments", lang="zh", throughput="throughput", batch=SWEPT.global_batch)
    assert_clean(at)
    assert at.radio(key="experiments.throughput").value == "throughput"
    side_by_side = next(d.value for d in at.dataframe if "fastest" in d.value.columns)
    table = experiments.scaling_table(runs[runs["global_batch"] == SWEPT.global_batch])
    expected = experiments.impl_comparison(table, "throughput")
    assert side_by_side[list(IMPLEMENTATIONS)].equals(expected[list(IMPLEMENTATIONS)])
    assert any("throughput" in fields(s).get("y", set()) for s in charts_of(at))
    assert any("按 pmap 计" in c.value for c in at.caption)


# --- impl_advice: the verdict the training page gives ------------------------------------------
