"""Models and clusters as TOML files of one schema: every preset written out and read back is the same shape and the
same hardware; a mixture with shared experts and dense first blocks counted by hand; a wrong key, kind or level size
refused with one error that names it."""

import dataclasses

import pytest

from pmap_core.concepts import planner
from pmap_core.concepts.planner import files
from pmap_core.validation import LabInputError


@pytest.mark.parametrize("key", list(planner.MODELS))
def test_every_preset_model_reads_back_from_its_file(key, tmp_path):
    model = planner.MODELS[key]
    path = tmp_path / f"{key}.toml"
    path.write_text(files.model_toml(model))
    read = files.load_model(path)
    assert files.same_model(read, model) and read.params == model.params


@pytest.mark.parametrize("key", list(planner.HARDWARE))
def test_every_preset_cluster_reads_back_from_its_file(key, tmp_path):
    hardware = planner.HARDWARE[key]
    path = tmp_path / f"{key}.toml"
    path.write_text(files.hardware_toml(hardware))
    read = files.load_hardware(path)
    for name in ("peak_flops", "memory_bytes", "hbm_bytes_s", "fp8_flops", "units", "matmul_share",
                 "attention_share", "node", "intra_bytes_s", "inter_bytes_s"):
        assert getattr(read, name) == getattr(hardware, name), name
    assert read.link_levels == hardware.link_levels


def test_shared_experts_dense_blocks_and_a_head_width_are_counted_by_hand():
    d, f, v, heads, kv, dh, layers, dense = 512, 1024, 1000, 8, 2, 128, 6, 2
    model = files.model_from({"name": "m", "layers": layers, "d_model": d, "d_ff": f, "heads": heads,
                              "kv_heads": kv, "vocab": v, "d_head": dh, "experts": 8, "top_k": 2,
                              "shared_experts": 1}, "m")
    model = dataclasses.replace(model, dense_layers=dense)
    attention = d * heads * dh + 2 * d * kv * dh + heads * dh * d + 2 * d   # Q, K, V, output, two RMSNorm gains
    mlp = 3 * d * f                                                          # SwiGLU
    moe = layers - dense
    expected = (layers * attention + dense * mlp + moe * (d * 8 + mlp + 8 * mlp)  # router, shared, routed experts
                + v * d + d + d * v)                                            # embedding, final norm, head
    assert model.params == expected
    assert model.active_params == expected - moe * 8 * mlp + moe * 2 * mlp
    assert model.mlp_passes == pytest.approx((moe * 3 + dense) / layers)


@pytest.mark.parametrize(("table", "says"), [
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"layers": "four"}, "layers must be a whole number"),
    ({"gated_mlp": 1}, "gated_mlp must be true or false"),
    ({"heads": 6}, "heads (6) must divide d_model (256)"),
])
def test_a_bad_model_file_names_what_is_wrong(table, says):
    base = {"name": "m", "layers": 4, "d_model": 256, "d_ff": 1024, "heads": 8, "kv_heads": 8, "vocab": 1000}
    with pytest.raises(LabInputError) as raised:
        files.model_from({**base, **table}, "m.toml")
    assert says in str(raised.value)


def test_moving_the_replicas_from_the_fast_level_to_the_slow_one_changes_only_their_term():
    """replica=2 × data=8 on 16 devices: in a box of 16 the replicas' all-reduce runs on its link; in boxes of 8 it
    crosses them, while the data axis (8 devices, inside each box either way) stays on the fast link."""
    def cluster(box: int) -> planner.Hardware:
        return files.hardware_from({"name": f"boxes of {box}", "peak_flops": 1e15, "memory_bytes": 80e9,
                                    "hbm_bytes_s": 3e12, "levels": [{"name": "fast", "size": box, "bytes_s": 4e11},
                                                                    {"name": "slow", "bytes_s": 5e10}]}, "c")

    from pmap_core.concepts.planner.predict import predict

    model = planner.MODELS["llama3-8b"]
    work = planner.Workload(sequences=32, seq_len=4096)
    layout = planner.Layout(replica=2, data=8, zero=3, microbatches=2)
    inside, across = (predict(model, layout, work, cluster(box)) for box in (16, 8))
    assert inside.memory == across.memory and inside.compute_s == across.compute_s
    data_in, data_out = inside.comm_on("data"), across.comm_on("data")
    assert data_in == data_out and data_in.link == "fast"
    rep_in, rep_out = inside.comm_on("replica"), across.comm_on("replica")
    assert (rep_in.link, rep_out.link) == ("fast", "slow") and rep_in.bytes == rep_out.bytes
    # The gradient's ZeRO-3 shard (1/8 of it, bfloat16) all-reduced over 2 replicas: 2 · 1/2 of it.
    assert rep_in.bytes == pytest.approx(2 * 0.5 * model.params / 8 * 2, rel=0.01)
    assert rep_out.seconds == pytest.approx(rep_in.seconds * 8)
    assert across.step_s - inside.step_s == pytest.approx(rep_out.exposed_s - rep_in.exposed_s)
