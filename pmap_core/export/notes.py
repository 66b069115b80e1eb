"""The texts of an exported notebook, in English and 中文: one markdown cell before each code cell.

A script's code cells begin at its `# %% key` lines (templates/); the notebook puts the text
`<lab>.<key>` (or the shared `<key>`) before the cell, in the page's language, with {placeholders}
filled from the settings the lab ran (`Exported.values`). `<lab>.title` and `<lab>.intro` open it.
Terms as in labs/texts/glossary.toml; tests/system/test_export_notebooks.py checks both languages.
"""
# A CJK character counts twice towards the line length: prose is wrapped where it reads well (as the worksheets do).
# ruff: noqa: E501

from __future__ import annotations

LANGUAGES = ("en", "zh")

NOTES: dict[str, dict[str, str]] = {
    # --- shared by every lab ---------------------------------------------------------------
    "setup": {
        "en": "**Devices.** This cell fixes the device count before JAX starts: on a machine with at least "
              "{devices} accelerators (a GPU or TPU runtime in Colab) it uses them as they are; otherwise it "
              "simulates {devices} CPU devices (`jax_num_cpu_devices`, which shapes only the CPU backend). It "
              "prints which it chose and `jax.devices()`. Simulated devices share this machine's cores: they "
              "show what runs where, not the speed of real devices.",
        "zh": "**设备。** 这个单元在 JAX 启动之前固定设备数：机器上若有至少 {devices} 个加速器（Colab 的 GPU 或 TPU "
              "运行时），就直接使用它们；否则模拟 {devices} 个 CPU 设备（`jax_num_cpu_devices`，它只影响 CPU 后端）。"
              "它会打印选用了哪一种，以及 `jax.devices()`。模拟设备共享本机的物理核心：它们展示的是什么在哪里运行，"
              "而不是真实设备的速度。",
    },
    "rerun": {
        "en": "Run the cells in order, from the top (*Run all*). To change the device count, change `DEVICES` "
              "and restart the kernel: JAX fixes its devices once per process.",
        "zh": "请从上到下按顺序运行各单元（*Run all*）。要改变设备数，请修改 `DEVICES` 并重启内核："
              "JAX 在每个进程中只固定一次设备。",
    },
    "model.mlp": {
        "en": "**Model and data.** A one-hidden-layer tanh network ({features} inputs, {hidden} hidden units) "
              "fitted to a smooth random teacher function. The data comes from a seeded NumPy generator, so "
              "every device count sees the same samples.",
        "zh": "**模型与数据。** 一个单隐藏层 tanh 网络（{features} 个输入，{hidden} 个隐藏单元），拟合一个平滑的随机"
              "教师函数。数据由带种子的 NumPy 生成器产生，因此任何设备数看到的样本都相同。",
    },
    # --- the training lab ------------------------------------------------------------------
    "training.title": {
        "en": "Training lab: {model} trained data-parallel with {impl} on {devices} device(s)",
        "zh": "训练实验：用 {impl} 在 {devices} 个设备上数据并行训练 {model}",
    },
    "training.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). The code uses only jax and "
              "numpy and prints the final loss and every parameter: the numbers the lab shows, and so does "
              "`{command}`.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。代码只用 jax 和 numpy，最后打印最终损失和每个参数："
              "与实验页面显示的数值一致，也与 `{command}` 打印的一致。",
    },
    "training.settings": {
        "en": "**Settings.** The global batch of {batch} samples is cut into {devices} blocks of {per_device} rows, "
              "one per device; `CHUNK` steps run inside one compiled call (`lax.scan`), so the host dispatches "
              "once per chunk, not once per step.",
        "zh": "**设置。** {batch} 个样本的全局批次被切成 {devices} 块，每块 {per_device} 行，每个设备一块；"
              "`CHUNK` 步在一次编译好的调用（`lax.scan`）中运行，因此主机每个分块派发一次，而不是每步一次。",
    },
    "training.model.linear": {
        "en": "**Model and data.** Linear regression fitted to y = 3x + 1 plus a little noise. The data comes "
              "from a seeded NumPy generator, so every device count sees the same samples.",
        "zh": "**模型与数据。** 线性回归，拟合 y = 3x + 1 加少量噪声。数据由带种子的 NumPy 生成器产生，"
              "因此任何设备数看到的样本都相同。",
    },
    "training.step.pmap": {
        "en": "**The step, with `jax.pmap`.** Every device computes the gradient on its own rows, `lax.pmean` "
              "averages it over the devices (an all-reduce), and every device applies the same mean gradient to "
              "its copy of the parameters, so the replicated parameters stay identical. pmap wants a leading "
              "device axis on its inputs.",
        "zh": "**训练步：`jax.pmap`。** 每个设备在自己的行上计算梯度，`lax.pmean` 在设备间求平均（全归约），"
              "每个设备把同一个平均梯度应用到自己的参数副本上，因此各参数副本保持一致。pmap 要求输入带有设备轴（前导维度）。",
    },
    "training.step.shard_map": {
        "en": "**The step, with `jax.shard_map`.** The batch keeps its global shape and is split by rows over "
              "the mesh (`P('data')`); the parameters are `P()`, one value on every device. `lax.pcast` makes "
              "them per-device before `grad`, so that `lax.pmean` averages per-device gradients instead of "
              "their sum.",
        "zh": "**训练步：`jax.shard_map`。** 批次保持全局形状，按行在网格（mesh）上切分（`P('data')`）；参数是 `P()`，"
              "每个设备上同一个值。`lax.pcast` 在 `grad` 之前把参数变为逐设备的值，使 `lax.pmean` 对逐设备梯度求平均，"
              "而不是对它们的和求平均。",
    },
    "training.step.jit": {
        "en": "**The step, with `jax.jit`.** The step is written over the global batch, as on one device; the "
              "inputs' shardings (rows split over the mesh, parameters replicated) tell the compiler where the "
              "data lives, and it adds the all-reduce of the gradient itself.",
        "zh": "**训练步：`jax.jit`。** 训练步按全局批次编写，就像在单个设备上一样；输入的分片方式（行在网格（mesh）上切分，"
              "参数复制到每个设备）告诉编译器数据在哪里，梯度的全归约由编译器自己加上。",
    },
    "training.train": {
        "en": "**Training.** {steps} steps, in compiled calls of at most {chunk} steps; the loss printed after "
              "each call is the loss over the global batch.",
        "zh": "**训练。** 共 {steps} 步，每次编译好的调用最多 {chunk} 步；每次调用后打印的是全局批次上的损失。",
    },
    "training.result": {
        "en": "**Result.** The final loss and every parameter, read from device 0's copy. Compare them with the "
              "lab or with what `{command}` prints.",
        "zh": "**结果。** 最终损失和每个参数，读自设备 0 上的副本。可与实验页面或 "
              "`{command}` 打印的结果比较。",
    },
    # --- the collectives lab ---------------------------------------------------------------
    "collectives.title": {
        "en": "Collectives lab: {op} over {devices} device(s)",
        "zh": "集合通信实验：在 {devices} 个设备上运行 {op}",
    },
    "collectives.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). Every device holds a vector of "
              "{size} values; the notebook runs one collective over the devices with `jax.pmap` and prints every "
              "device's vector before and after.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。每个设备持有一个 {size} 个值的向量；本 notebook 用 "
              "`jax.pmap` 在各设备间运行一个集合通信，并打印每个设备在运行前后的向量。",
    },
    "collectives.settings": {
        "en": "**Data.** One row of random values per device, from a seeded NumPy generator (seed {seed}), so "
              "the notebook shows the values the lab showed.",
        "zh": "**数据。** 每个设备一行随机值，由带种子的 NumPy 生成器产生（种子 {seed}），因此本 notebook 显示的数值与实验页面相同。",
    },
    "collectives.op": {
        "en": "**What every device runs.** Inside `pmap`, `x` is one device's own vector; the collective named "
              "by the axis `'data'` combines the vectors of all the devices.",
        "zh": "**每个设备运行什么。** 在 `pmap` 内部，`x` 是一个设备自己的向量；以轴名 `'data'` 指定的集合通信"
              "把所有设备的向量组合起来。",
    },
    "collectives.run": {
        "en": "**Run.** pmap maps over the leading axis: {devices} rows, one per device. The output keeps a "
              "leading device axis: row d is what device d holds after the collective.",
        "zh": "**运行。** pmap 沿前导维度映射：{devices} 行，每个设备一行。输出保留设备轴（前导维度）："
              "第 d 行是设备 d 在集合通信之后持有的值。",
    },
    # --- the migration lab -----------------------------------------------------------------
    "migration.title": {
        "en": "Migration lab: one data-parallel step as pmap, shard_map and jit on {devices} device(s)",
        "zh": "迁移实验：在 {devices} 个设备上用 pmap、shard_map 和 jit 写同一个数据并行训练步",
    },
    "migration.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). The same SGD step is written "
              "three ways and checked against NumPy: the loss and the new parameters agree.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。同一个 SGD 训练步用三种方式编写，并与 NumPy "
              "对照：损失和新参数一致。",
    },
    "migration.settings": {
        "en": "**Settings.** {per_device} rows per device, so a global batch of {batch} rows; one mesh axis "
              "`'data'` over the {devices} device(s).",
        "zh": "**设置。** 每个设备 {per_device} 行，因此全局批次为 {batch} 行；在 {devices} 个设备上建一个网格轴 `'data'`。",
    },
    "migration.problem": {
        "en": "**Problem.** A small linear regression, its data and starting parameters from a seeded generator.",
        "zh": "**问题。** 一个小型线性回归，其数据和初始参数来自带种子的生成器。",
    },
    "migration.pmap": {
        "en": "**1. pmap.** The batch carries a leading device axis; `lax.pmean` averages the gradient.",
        "zh": "**1. pmap。** 批次带有设备轴（前导维度）；`lax.pmean` 对梯度求平均。",
    },
    "migration.shard_map": {
        "en": "**2. shard_map.** The batch keeps its global shape, split by `P('data')`; `lax.pcast` makes the "
              "parameters per-device before `grad`, then `lax.pmean` averages the gradients.",
        "zh": "**2. shard_map。** 批次保持全局形状，按 `P('data')` 切分；`lax.pcast` 在 `grad` 之前把参数变为逐设备的值，"
              "然后 `lax.pmean` 对梯度求平均。",
    },
    "migration.jit": {
        "en": "**3. jit.** The loss over the global batch; the inputs' shardings decide what runs where, and "
              "the compiler adds the all-reduce.",
        "zh": "**3. jit。** 全局批次上的损失；输入的分片方式决定什么在哪里运行，全归约由编译器加上。",
    },
    "migration.place": {
        "en": "**Placing the data.** Parameters replicated (`P()`), the batch split by rows (`P('data')`); "
              "NumPy's step on the whole batch in float64 is the reference.",
        "zh": "**放置数据。** 参数复制到每个设备（`P()`），批次按行切分（`P('data')`）；NumPy 在整个批次上以 float64 "
              "计算的训练步作为参照。",
    },
    "migration.run": {
        "en": "**Run.** One step each way: the three lines and NumPy's agree.",
        "zh": "**运行。** 每种方式一步：三行结果与 NumPy 的结果一致。",
    },
    # --- the sharded data parallel (ZeRO) lab -----------------------------------------------
    "sharded_dp.title": {
        "en": "Sharded data parallel lab: the MLP with {strategy}, {optimizer} and {precision} precision on {devices} device(s)",
        "zh": "分片数据并行实验：在 {devices} 个设备上以 {strategy}、{optimizer} 和 {precision} 精度训练 MLP",
    },
    "sharded_dp.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). ZeRO / FSDP written with only jax "
              "and numpy under `jax.shard_map`; it prints the final loss and every parameter, the numbers "
              "`{command}` prints.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。只用 jax 和 numpy 在 `jax.shard_map` 下实现 ZeRO / FSDP；"
              "它打印最终损失和每个参数，与 `{command}` 打印的数值一致。",
    },
    "sharded_dp.settings": {
        "en": "**Settings.** The global batch of {batch} samples gives each device {per_device} rows, in {accum} "
              "micro-batch(es) of {micro} rows (gradient accumulation). `SHARDED` says which of the parameters, the "
              "gradient and the optimizer state each device holds only as a 1/D shard under {strategy}.",
        "zh": "**设置。** {batch} 个样本的全局批次给每个设备 {per_device} 行，分为 {accum} 个 {micro} 行的微批次（梯度累积）。"
              "`SHARDED` 表示在 {strategy} 下，参数、梯度和优化器状态中哪些在每个设备上只保存 1/D 的分片。",
    },
    "sharded_dp.layout": {
        "en": "**Flat layout (FSDP).** Each layer's parameters are one flat buffer, padded with zeros to a multiple "
              "of the device count and cut into equal shards: row d holds device d's shard of every layer. A "
              "reduce-scatter of the whole buffer leaves each device its row; an all-gather gives the buffer back.",
        "zh": "**扁平布局（FSDP）。** 每一层的参数是一个扁平缓冲区，用零填充到设备数的倍数，再切成相等的分片：第 d 行是设备 d "
              "持有的每一层的分片。对整个缓冲区做归约散射，每个设备得到自己的那一行；做全收集则得回整个缓冲区。",
    },
    "sharded_dp.step.dp": {
        "en": "**The step, dp.** Every device holds everything whole: the gradient is all-reduced (`lax.psum`) and "
              "every device applies the same update.",
        "zh": "**训练步：dp。** 每个设备完整地保存所有内容：梯度经全归约（`lax.psum`），每个设备执行相同的更新。",
    },
    "sharded_dp.step.zero1": {
        "en": "**The step, ZeRO-1.** The optimizer state is sharded: the gradient is reduce-scattered "
              "(`lax.psum_scatter`), each device updates its shard, and the updated parameters are all-gathered.",
        "zh": "**训练步：ZeRO-1。** 优化器状态被分片：梯度经归约散射（`lax.psum_scatter`），每个设备更新自己的分片，"
              "更新后的参数再经全收集。",
    },
    "sharded_dp.step.zero2": {
        "en": "**The step, ZeRO-2.** The gradient is sharded too: it is reduce-scattered after every micro-batch, "
              "so each device accumulates only its shard; the updated parameters are all-gathered.",
        "zh": "**训练步：ZeRO-2。** 梯度也被分片：每个微批次之后就做归约散射，因此每个设备只累积自己的分片；"
              "更新后的参数经全收集。",
    },
    "sharded_dp.step.zero3": {
        "en": "**The step, ZeRO-3 / FSDP.** The parameters are sharded too: `gathered_layer` all-gathers each layer "
              "just before its forward and again before its backward, and reduce-scatters its gradient.",
        "zh": "**训练步：ZeRO-3 / FSDP。** 参数也被分片：`gathered_layer` 在每一层前向之前全收集该层，反向之前再全收集一次，"
              "并对其梯度做归约散射。",
    },
    "sharded_dp.train": {
        "en": "**Training.** {steps} steps in compiled calls of at most {chunk} steps; each device's loss is on its "
              "own rows, and their mean is the loss over the global batch.",
        "zh": "**训练。** 共 {steps} 步，每次编译好的调用最多 {chunk} 步；每个设备的损失基于自己的行，它们的平均值就是全局批次上的损失。",
    },
    "sharded_dp.result": {
        "en": "**Result.** The final loss and every parameter (the fp32 master copy under mixed precision), "
              "gathered whole. Compare them with what `{command}` prints.",
        "zh": "**结果。** 最终损失和每个参数（混合精度下为 fp32 主副本），已收集为完整数组。可与相同设置下的 "
              "`{command}` 打印的结果比较。",
    },
    # --- the 2-D mesh lab ------------------------------------------------------------------
    "mesh_2d.title": {
        "en": "2-D mesh lab: the MLP on a {mesh} (data × model) mesh",
        "zh": "二维网格实验：在 {mesh}（data × model）网格上训练 MLP",
    },
    "mesh_2d.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). Tensor parallelism with data "
              "parallelism, written in JAX's explicit sharding mode; it prints the final loss and every parameter, "
              "the numbers `{command}` prints.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。张量并行与数据并行，以 JAX 的显式分片模式编写；"
              "它打印最终损失和每个参数，与 `{command}` 打印的数值一致。",
    },
    "mesh_2d.rerun": {
        "en": "Run the cells in order, from the top (*Run all*). To try another mesh, set `MESH_DATA` and `MESH_MODEL` "
              "(the model axis must divide the hidden width), `DEVICES` to their product, and restart the kernel: "
              "JAX fixes its devices once per process.",
        "zh": "请从上到下按顺序运行各单元（*Run all*）。要尝试其他网格，请设置 `MESH_DATA` 和 `MESH_MODEL`"
              "（model 轴的设备数必须整除隐藏层宽度），把 `DEVICES` 设为二者之积，然后重启内核：JAX 在每个进程中只固定一次设备。",
    },
    "mesh_2d.settings": {
        "en": "**Settings.** {devices} device(s) as a mesh of {data} on the data axis × {model} on the model axis. "
              "Each device gets {rows} rows of the global batch of {batch} and {cols} of the {hidden} hidden units.",
        "zh": "**设置。** {devices} 个设备组成网格：data 轴 {data} 个 × model 轴 {model} 个。每个设备得到 {batch} 个样本的"
              "全局批次中的 {rows} 行，以及 {hidden} 个隐藏单元中的 {cols} 个。",
    },
    "mesh_2d.mesh": {
        "en": "**The split (Megatron).** The first weight by columns and the second by rows over the `model` mesh "
              "axis, the batch by rows over `data`. The second product sums over the split hidden units: one "
              "all-reduce of activations over `model` per step. `jax.typeof` prints each array's sharding.",
        "zh": "**切分方式（Megatron）。** 第一个权重按列、第二个权重按行在网格轴 `model` 上切分，批次按行在 `data` 上切分。"
              "第二个乘积对被切分的隐藏单元求和：每步在 `model` 上做一次激活值的全归约。`jax.typeof` 打印每个数组的分片方式。",
    },
    "mesh_2d.step": {
        "en": "**The step.** Plain SGD over the global arrays; each weight's gradient is a sum over the batch's "
              "rows, so the compiler all-reduces it over `data`, as in data parallelism.",
        "zh": "**训练步。** 在全局数组上执行普通 SGD；每个权重的梯度是对批次各行的求和，因此编译器在 `data` 上对它做全归约，"
              "与数据并行相同。",
    },
    "mesh_2d.train": {
        "en": "**Training.** {steps} steps in compiled calls of at most {chunk} steps; the loss is over the global batch.",
        "zh": "**训练。** 共 {steps} 步，每次编译好的调用最多 {chunk} 步；损失基于全局批次。",
    },
    "mesh_2d.result": {
        "en": "**Result.** The final loss and every parameter, gathered whole.",
        "zh": "**结果。** 最终损失和每个参数，已收集为完整数组。",
    },
    # --- the multi-process lab -------------------------------------------------------------
    "multiprocess.title": {
        "en": "Multi-process lab: {processes} process(es) × {per_process} device(s) train as one with jax.distributed",
        "zh": "多进程实验：{processes} 个进程 × 每个 {per_process} 个设备，用 jax.distributed 作为一个整体训练",
    },
    "multiprocess.intro": {
        "en": "Exported from pmap-lab with the settings the lab ran ({settings}). The notebook starts {processes} "
              "Python processes on this machine; each simulates {per_process} CPU device(s), they join one group "
              "with `jax.distributed` and train on all {devices} devices as one. Process 0 prints what "
              "`{command}` prints for the same run: the rows it read, the loss per step, the parameters.",
        "zh": "从 pmap-lab 导出，设置与实验运行时相同（{settings}）。本 notebook 在本机启动 {processes} 个 Python 进程；"
              "每个进程模拟 {per_process} 个 CPU 设备，它们用 `jax.distributed` 组成一个组，在全部 {devices} 个设备上作为一个整体训练。"
              "进程 0 打印的内容与同一次运行中 `{command}` 打印的一致：它读取的行、每步的损失和参数。",
    },
    "multiprocess.rerun": {
        "en": "Run the cells in order, from the top (*Run all*). The processes run on the CPU, whatever "
              "accelerators this machine has; each is a new Python with JAX of its own.",
        "zh": "请从上到下按顺序运行各单元（*Run all*）。无论本机有什么加速器，这些进程都在 CPU 上运行；"
              "每个进程都是一个新的 Python，拥有自己的 JAX。",
    },
    "multiprocess.setup": {
        "en": "**The group.** {processes} process(es), {per_process} simulated CPU device(s) each: {devices} "
              "devices in all. This notebook's own kernel only starts them and prints their lines.",
        "zh": "**进程组。** {processes} 个进程，每个 {per_process} 个模拟 CPU 设备：共 {devices} 个设备。"
              "本 notebook 自己的内核只负责启动它们并打印它们输出的行。",
    },
    "multiprocess.settings": {
        "en": "**Settings.** A dataset of {size} samples, read in global batches of {batch}: {steps_per_epoch} "
              "step(s) per epoch, each epoch in a new shuffled order. Each process reads only its own devices' "
              "blocks, {rows} rows per step, so over one epoch every sample is read exactly once, by one process.",
        "zh": "**设置。** 数据集有 {size} 个样本，按 {batch} 个样本的全局批次读取：每个 epoch {steps_per_epoch} 步，"
              "每个 epoch 使用新的打乱顺序。每个进程只读取自己设备的块，每步 {rows} 行，因此在一个 epoch 中"
              "每个样本恰好被一个进程读取一次。",
    },
    "multiprocess.worker": {
        "en": "**What each process runs.** It joins the group with `jax.distributed.initialize` before its first JAX "
              "operation (process 0 serves the coordinator), then `jax.devices()` lists every process's devices. "
              "Each step it reads its own samples and builds global arrays from them with "
              "`jax.make_array_from_process_local_data` ({impl}); the gradient's all-reduce crosses the processes.",
        "zh": "**每个进程运行什么。** 它在第一次 JAX 运算之前用 `jax.distributed.initialize` 加入进程组（进程 0 提供协调服务），"
              "之后 `jax.devices()` 列出所有进程的设备。每一步它读取自己的样本，并用 "
              "`jax.make_array_from_process_local_data` 由它们构建全局数组（{impl}）；梯度的全归约跨越各进程。",
    },
    "multiprocess.launch": {
        "en": "**Launching.** Each process is `python -c WORKER`, given the coordinator's address, its rank and the "
              "settings; their lines come back prefixed by the process. If one fails, the others are stopped.",
        "zh": "**启动。** 每个进程是 `python -c WORKER`，参数为协调服务的地址、它的编号和设置；它们输出的行带上进程编号前缀"
              "打印出来。若有一个进程失败，其余进程会被停止。",
    },
    "multiprocess.run": {
        "en": "**Run.** Compare process 0's `losses` and `params` with "
              "`{command}`, or with one process of {devices} devices: they are the same.",
        "zh": "**运行。** 把进程 0 的 `losses` 和 `params` 与相同设置下的 "
              "`{command}` 的输出比较，或与单个进程、{devices} 个设备的运行比较：结果相同。",
    },
}
