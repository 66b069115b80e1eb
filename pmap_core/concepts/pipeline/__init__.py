"""Pipeline parallelism, shown and measured — what the pipeline lab draws and says. Pure: the schedule
comes from `train.pipeline.schedule_of` (one `Schedule` per P, M and schedule, counted once and passed
along), the programs from the registry (impl "pipeline"), the peak bytes from each compiled program's
`memory_analysis()` (`train.footprint`). One module per concern, every name re-exported here:

    settings      Settings, check_settings, microbatch_ladder, the limits and sources
    schedule      the schedule as records, the bubble, the micro-batches kept, the slot counts
    step_time     step time against M and its fit
    memory        GPipe against 1F1B: each compiled program's peak bytes
    traffic       the data axis: its formula and the data × stage pipeline trained

    schedule_cells(P, M, schedule)      the schedule as records: (device, slot, micro-batch, kind)
    bubble(P, M, schedule)              the idle share of the table, beside (P − 1)/(M + P − 1) and (P − 1)/M
    measure_step_times(settings, Ms)    step time against M at fixed P, fitted to this program's lockstep
                                        model n_F·t_f + n_B·t_b (slots counted from the table)
    peak_memory(settings)               GPipe against 1F1B: each compiled program's peak bytes
    compare_memory(settings)            the same, with which one peaks lower (the Measure click's answer)
    data_axis(D, P, …)                  what a data axis adds when D ≥ 2P: the formula's figures (the prediction)
    measure_data_axis(D, settings)      the data × stage pipeline trained: its bytes per step on each mesh axis
                                        read from the compiled HLO, its loss beside data parallelism's, its S(D)

Sources, cited next to every figure they give:
- GPipe: Huang et al. 2019, "GPipe: Efficient Training of Giant Neural Networks using Pipeline
  Parallelism" (NeurIPS), §2.3: M micro-batches over K stages leave a bubble of O((K − 1)/(M + K − 1)) of
  the step; each stage keeps its input per micro-batch and recomputes the rest in the backward
  (re-materialization); the backwards run in reverse, the last micro-batch's first.
- 1F1B: Narayanan et al. 2021, "Memory-Efficient Pipeline-Parallel DNN Training" (ICML, PipeDream-Flush):
  one forward, one backward, the same bubble as GPipe, at most P micro-batches in flight; the 1F1B order
  comes from Narayanan et al. 2019, "PipeDream: Generalized Pipeline Parallelism for DNN Training" (SOSP).
- The Ultra-Scale Playbook (Tazi et al., Hugging Face, 2025), "Pipeline parallelism": the bubble as a share
  of the ideal time, (p − 1)/m; 1F1B stores the activations of p micro-batches instead of m.
These are asynchronous schedules (a device starts its next work as soon as its input arrives): one step takes
(M + P − 1)(t_f + t_b). This lab's program runs the table in lockstep (every slot ends with every device's
ppermute), so a slot lasts its slowest work: n_F·t_f + n_B·t_b, counted from the table
(`train.pipeline.slot_counts`); the two are shown apart, each labelled.
- The Scaling Book (Austin et al. 2025), Part 5 "How to Parallelize a Transformer for Training",
  "Pipelining"; the ring all-reduce of a data axis, 2(X − 1)/X of the bytes per device.
- The ring all-reduce: Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of
  workstations" (JPDC 69(2)): each of X devices sends 2(X − 1)/X of the array (a reduce-scatter, then an
  all-gather, each (X − 1) steps of 1/X of it).
"""

from pmap_core.concepts.pipeline.memory import (
    MemoryComparison,
    MemoryRow,
    compare_memory,
    memory_reason,
    memory_verdict,
    peak_memory,
)
from pmap_core.concepts.pipeline.schedule import (
    KINDS,
    Bubble,
    Cell,
    bubble,
    kept,
    schedule_cells,
    schedule_rows,
    slot_counts,
)
from pmap_core.concepts.pipeline.settings import (
    FEATURES,
    GPIPE,
    MAX_ROWS,
    MAX_WORK,
    ONE_F_ONE_B,
    PLAYBOOK,
    RING,
    SCALING_BOOK,
    STEPS,
    VALUE_BYTES,
    Settings,
    check_settings,
    microbatch_ladder,
)
from pmap_core.concepts.pipeline.step_time import (
    REPEATS,
    StepFit,
    StepPoint,
    asynchronous_s,
    fit_slot_times,
    measure_step_times,
    shows_bubble_in_time,
    time_steps,
)
from pmap_core.concepts.pipeline.traffic import (
    FLOAT32_EPS,
    LOSS_RTOL,
    DataAxis,
    DataAxisRun,
    axis_groups,
    data_axis,
    data_parallel_config,
    measure_data_axis,
    mesh_axis_of,
    ring_share,
)
from pmap_core.hlo import Collective
from pmap_core.train.pipeline import BACKWARD, FORWARD, IDLE, SCHEDULES

__all__ = [
    "BACKWARD", "FEATURES", "FLOAT32_EPS", "FORWARD", "GPIPE", "IDLE", "KINDS", "LOSS_RTOL", "MAX_ROWS",
    "MAX_WORK", "ONE_F_ONE_B", "PLAYBOOK", "REPEATS", "RING", "SCALING_BOOK", "SCHEDULES", "STEPS", "VALUE_BYTES",
    "Bubble", "Cell", "Collective", "DataAxis", "DataAxisRun", "MemoryComparison", "MemoryRow", "Settings",
    "StepFit", "StepPoint", "asynchronous_s", "axis_groups", "bubble", "check_settings", "compare_memory",
    "data_axis", "data_parallel_config", "fit_slot_times", "kept", "measure_data_axis", "measure_step_times",
    "memory_reason", "memory_verdict", "mesh_axis_of", "microbatch_ladder", "peak_memory", "ring_share",
    "schedule_cells", "schedule_rows", "shows_bubble_in_time", "slot_counts", "time_steps",
]
