"""A run's settings checked against the registered programs: the one check at the edge.

The page and the CLI call `validate` (or `check_sweep`) on what the user asked for. The generic work is
`config.check`, given the registry (`train.config` sits below the programs and names none of them): each
setting against its own choices and limits, the check of the program the run selects, every other
program's refusal of its settings, and what every run needs.
"""

from __future__ import annotations

from collections.abc import Sequence

from pmap_core.train import config as train_config
from pmap_core.train import programs
from pmap_core.train.config import TrainConfig, sweep_configs


def validate(config: TrainConfig, max_work: int = train_config.MAX_WORK) -> TrainConfig:
    """The config with numbers normalised (a registered program's settings completed with their defaults), or
    a LabInputError: unknown_impl, program_settings_not_pairs, unknown_program_setting, a setting's own
    (unknown_<setting>, out_of_range, not_whole_number, not_a_number, too_many_devices), its program's
    (mesh_not_divisible, tensor_needs_mlp_sgd, pipeline_needs_mlp_sgd, pipeline_devices, layers_not_divisible,
    microbatches_not_divisible, layers_need_replicated, ...), another program's setting on this run
    (strategy_needs_jit, mesh_needs_tensor, stages_need_pipeline), remat_needs_transformer,
    remat_needs_replicated, or what every run needs (block_not_divisible, batch_not_divisible,
    micro_batch_not_divisible, too_large, too_much_work over `max_work` multiply-adds, distributed_devices)."""
    return train_config.check(config, programs.REGISTRY, max_work)


def check_sweep(config: TrainConfig, device_counts: Sequence[int] | None = None,
                impls: Sequence[str] | None = None, max_work: int = train_config.MAX_WORK) -> None:
    """Check, once each, every run of a config's sweep (a weak sweep's larger D grows the batch)."""
    config = validate(config, max_work)  # the ladder below divides by its numbers
    for run in sweep_configs(config, device_counts, impls):
        if run != config:
            validate(run, max_work)


def baseline_config(config: TrainConfig) -> TrainConfig:
    """The one-device run S(D) of `config` is measured against (`config.baseline_config`)."""
    return train_config.baseline_config(config, programs.REGISTRY)
