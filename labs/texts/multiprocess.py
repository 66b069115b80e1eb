TEXTS = {
    "title": {"en": "From one machine to many: multi-process data parallelism", "zh": "从一台机器到多台：多进程数据并行"},
    "summary": {
        "en": "Start P real jax.distributed processes on this machine; each host loads only its own rows of the "
              "global batch. See a late or killed process stop the group.",
        "zh": "在本机启动 P 个真实的 jax.distributed 进程；每台主机只加载全局批次中属于自己的行。"
              "观察迟到或被杀死的进程如何让整组停下。",
    },
    "intro": {
        "en": "On a cluster every host runs its own Python process with its own devices; `jax.distributed` joins "
              "them into one global device list, and one program runs over all of them. Each process must feed "
              "only its own devices' blocks of the global batch: it reads just those samples and builds global "
              "arrays from them with `jax.make_array_from_process_local_data` (for `jit` and `shard_map`: rows of "
              "one (B, …) array; for `pmap`: the process-local device axis). Here P processes on 127.0.0.1 stand "
              "in for P hosts: process 0 serves the coordinator on a free port, every process has its own "
              "simulated CPU devices, and their collectives travel over TCP (gloo).",
        "zh": "在集群上，每台主机运行自己的 Python 进程，拥有自己的设备；`jax.distributed` 把它们连成一份全局设备列表，"
              "一个程序在所有设备上运行。每个进程只能为自己的设备提供全局批次中的那几块：它只读取这些样本，"
              "再用 `jax.make_array_from_process_local_data` 构造全局数组（`jit` 与 `shard_map`：一个 (B, …) "
              "数组的若干行；`pmap`：本进程的设备轴（前导维度））。这里用 127.0.0.1 上的 P 个进程代替 P 台主机："
              "进程 0 在一个空闲端口上提供协调服务，每个进程有自己的模拟 CPU 设备，集合通信（通信原语）经 TCP（gloo）传输。",
    },
    "formula": {
        "en": "B global batch, P processes, N devices per process, D = P·N devices, B/D rows per device. The devices "
              "of process p take mesh positions pN … pN+N−1 (their places in the global device list, not their "
              "ids: the table after a run shows both), and the process reads only the blocks at those positions. "
              "Each epoch visits the dataset in a new order fixed by (seed, epoch), so every process knows the "
              "order without asking the others, and over one epoch every sample is read exactly once, by exactly "
              "one process.",
        "zh": "B 为全局批次，P 为进程数，N 为每个进程的设备数，D = P·N 台设备，每台设备 B/D 行。进程 p 的设备占据网格"
              "位置 pN … pN+N−1（即它们在全局设备列表中的位置，而不是设备编号：运行后的表格两者都列出），进程只读取"
              "这些位置上的块。每个 epoch 按 (seed, epoch) 决定的新顺序遍历数据集，所以每个进程无需询问别人就知道"
              "顺序；一个 epoch 内每个样本恰好被一个进程读取一次。",
    },
    "w.processes": {"en": "Processes P", "zh": "进程数 P"},
    "w.per_process": {"en": "Devices per process N", "zh": "每个进程的设备数 N"},
    "w.impl": {"en": "Implementation", "zh": "实现方式"},
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.size": {"en": "Dataset size (samples)", "zh": "数据集大小（样本数）"},
    "w.steps": {"en": "Steps", "zh": "步数"},
    "w.fault": {"en": "Fault to inject", "zh": "注入的故障"},
    "w.fault.none": {"en": "none", "zh": "无"},
    "w.fault.late": {"en": "last process starts late", "zh": "最后一个进程迟到"},
    "w.fault.kill": {"en": "kill the last process mid-run", "zh": "训练中杀死最后一个进程"},
    "w.init_timeout": {"en": "Join timeout (s)", "zh": "加入超时（秒）"},
    "w.late_s": {"en": "Delay of the late process (s)", "zh": "迟到进程的延迟（秒）"},
    "w.kill_step": {"en": "Kill after step", "zh": "在第几步后杀死"},
    "per_process": {
        "en": "{processes} processes × {per} devices = {devices} devices; each process loads {rows} of the {batch} "
              "rows per step; {steps_per_epoch} steps per epoch.",
        "zh": "{processes} 个进程 × {per} 台设备 = {devices} 台设备；每个进程每步加载 {batch} 行中的 {rows} 行；"
              "每个 epoch {steps_per_epoch} 步。",
    },
    "fault.late.note": {
        "en": "Process {process} starts {late} s after the others; every process waits at most {timeout} s for the "
              "whole group to join. Watch the clock: if the delay exceeds the timeout, the group gives up.",
        "zh": "进程 {process} 比其他进程晚 {late} 秒启动；每个进程最多等待 {timeout} 秒让整组加入。"
              "注意计时：延迟超过超时时间时，整组会放弃。",
    },
    "fault.kill.note": {
        "en": "Process {process} is killed (SIGKILL) after step {step}. The others see their next collective fail, "
              "or miss its heartbeats for {heartbeat} s, and stop instead of waiting forever.",
        "zh": "进程 {process} 在第 {step} 步后被杀死（SIGKILL）。其他进程会发现下一次集合通信失败，"
              "或在 {heartbeat} 秒内收不到它的心跳，于是停止，而不是永远等待。",
    },
    "button.run": {"en": "Start the processes", "zh": "启动进程"},
    "nothing_yet": {"en": "Choose P and N, then start the processes.", "zh": "选择 P 和 N，然后启动进程。"},
    "status.running": {"en": "{processes} processes, coordinator {address}", "zh": "{processes} 个进程，协调地址 {address}"},
    "status.elapsed": {
        "en": "{elapsed:.1f} s since start · join timeout {timeout} s · time limit {limit} s",
        "zh": "已运行 {elapsed:.1f} 秒 · 加入超时 {timeout} 秒 · 时间上限 {limit} 秒",
    },
    "status.done": {"en": "Every process finished", "zh": "所有进程已完成"},
    "status.failed": {"en": "The group stopped; every process has ended", "zh": "进程组已停止；所有进程都已结束"},
    "progress.process": {"en": "process {process}: step {done}/{total}", "zh": "进程 {process}：第 {done}/{total} 步"},
    "fault.dead": {
        "en": "Process {process} died ({code}); the others were stopped instead of hanging.",
        "zh": "进程 {process} 已退出（{code}）；其他进程随之停止，而不是一直挂起。",
    },
    "fault.join_timeout": {
        "en": "The group did not form within the join timeout of {timeout} s. {late} JAX aborts every process still "
              "waiting at that deadline (DEADLINE_EXCEEDED; the launcher sees SIGABRT), so nothing waits forever.",
        "zh": "进程组未能在 {timeout} 秒的加入超时内组成。{late}JAX 会中止到期时仍在等待的每个进程"
              "（DEADLINE_EXCEEDED；启动器看到的是 SIGABRT），因此不会有进程永远等待。",
    },
    "fault.join_timeout.late": {
        "en": "Process {process} was to start {late} s after the others.",
        "zh": "进程 {process} 计划比其他进程晚 {late} 秒启动。",
    },
    "fault.join_timeout.none": {
        "en": "By then the processes had not all joined.",
        "zh": "到那时，并非所有进程都已加入。",
    },
    "fault.timeout": {"en": "The time limit of {limit} s was reached; every process was stopped.",
                      "zh": "达到 {limit} 秒的时间上限；所有进程都已停止。"},
    "fault.other": {"en": "The group did not finish; its last lines are below.", "zh": "进程组未能完成；最后的输出如下。"},
    "fault.left": {
        "en": "After {elapsed:.1f} s none of the {processes} processes is left running. Their last lines are below; "
              "what the JAX runtime printed itself (its logs, crash reports) is in the server log.",
        "zh": "{elapsed:.1f} 秒后，{processes} 个进程已全部结束。下面是它们最后的输出；JAX 运行时自己打印的内容"
              "（日志、崩溃报告）记在服务器日志中。",
    },
    "tail.held_back": {
        "en": "({count} line(s) of the JAX runtime's own output: in the server log)",
        "zh": "（JAX 运行时自身的输出 {count} 行：见服务器日志）",
    },
    "queued": {
        "en": "Queued behind other heavy work on this server: this job needs {need} of its {slots} heavy-job slots "
              "(one for each process it starts, or one for work in the server itself) — waiting ahead of you: "
              "{ahead}, slots in use: {running}. Yours starts by itself as soon as enough slots are free; leaving "
              "the page gives up your place.",
        "zh": "排队中，前面是本服务器上的其他繁重任务：这项任务需要本服务器 {slots} 个繁重任务名额中的 {need} 个"
              "（它启动的每个进程一个，或在服务器内部运行时一个）——你前面等待的会话：{ahead} 个，已占用的名额："
              "{running} 个。名额一够，你的任务就会自动开始；离开本页即放弃排队。",
    },
    "result.heading": {"en": "{processes} processes × {per} devices = {devices} devices ({impl})",
                       "zh": "{processes} 个进程 × {per} 台设备 = {devices} 台设备（{impl}）"},
    "col.process": {"en": "process_index", "zh": "process_index"},
    "col.devices": {"en": "local devices", "zh": "本地设备"},
    "col.blocks": {"en": "blocks of the batch", "zh": "批次中的块"},
    "col.step_ms": {"en": "step time (ms, median)", "zh": "单步时间（毫秒，中位数）"},
    "col.load_ms": {"en": "loading (ms, median)", "zh": "加载（毫秒，中位数）"},
    "axis.row": {"en": "row of the global batch", "zh": "全局批次中的行"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.process": {"en": "process", "zh": "进程"},
    "chart.note": {
        "en": "Each cell is one row of the global batch of {batch}, coloured by the process that read it (lighter: "
              "its second device, and so on); hover for the sample index. {processes} processes × {per} devices: "
              "blocks of {block} rows.",
        "zh": "每个格子是 {batch} 行全局批次中的一行，颜色表示读取它的进程（较浅：该进程的后续设备）；"
              "悬停可看样本编号。{processes} 个进程 × {per} 台设备：每块 {block} 行。",
    },
    "result.equal_processes": {
        "en": "Final parameters: the largest difference between two processes is {diff:.3g}.",
        "zh": "最终参数：任意两个进程之间的最大差异为 {diff:.3g}。",
    },
    "result.equal_single": {
        "en": "The same training in one process on {devices} devices ends with parameters within {diff:.3g} "
              "(relative) of process 0's.",
        "zh": "在一个进程中用 {devices} 台设备做同样的训练，最终参数与进程 0 的相对差异为 {diff:.3g}。",
    },
    "result.positions": {
        "en": "In this run {held}. Mesh positions, not device ids, decide which blocks a process reads: JAX numbers "
              "the CPU devices of each process from a base of its own.",
        "zh": "在这次运行中，{held}。决定进程读取哪些块的是网格位置，而不是设备编号：JAX 为每个进程的 CPU 设备"
              "从各自的基数开始编号。",
    },
    "result.positions.process": {
        "en": "process {process} held {devices} at mesh position(s) {positions}",
        "zh": "进程 {process} 持有 {devices}，位于网格位置 {positions}",
    },
    "result.positions.sep": {"en": "; ", "zh": "；"},
    "result.no_single": {
        "en": "No one-process reference: it needs {devices} devices and this server has {available}.",
        "zh": "没有单进程对照：它需要 {devices} 台设备，而本服务器只有 {available} 台。",
    },
    "tracking.where": {"en": "Process 0 recorded the run of all {processes} processes in MLflow:",
                       "zh": "进程 0 把全部 {processes} 个进程的这次训练记录到了 MLflow："},
    "tracking.refused": {"en": "No MLflow run can be stored; nothing was started.",
                         "zh": "无法保存 MLflow 运行记录；没有启动任何进程。"},
    "cluster": {
        "en": "On one machine `launch` starts the processes for you. On a real cluster, run the same `train` "
              "command on every host with the coordinator's address, the process count and each host's own id:",
        "zh": "在一台机器上，`launch` 会替你启动这些进程。在真实集群上，在每台主机上运行同一条 `train` 命令，"
              "带上协调地址、进程数和各自的编号：",
    },
    "cluster.code": {"en": "two machines: on 10.0.0.1, then on 10.0.0.2", "zh": "两台机器：先在 10.0.0.1，再在 10.0.0.2"},
    "error.group_batch_mismatch": {
        "en": "The global batch {value} does not split over {total} devices ({processes} processes × {per}): the "
              "processes would load blocks of different sizes. Nothing was started.",
        "zh": "全局批次 {value} 无法平均分到 {total} 台设备（{processes} 个进程 × {per}）：各进程加载的块大小会不同。"
              "没有启动任何进程。",
    },
    "error.dataset_not_divisible": {
        "en": "The dataset ({value} samples) must split into whole global batches of {batch}.",
        "zh": "数据集（{value} 个样本）必须能分成整数个 {batch} 的全局批次。",
    },
    "error.batch_not_divisible": {
        "en": "The global batch ({value}) must split into {devices} equal blocks, one per device.",
        "zh": "全局批次（{value}）必须能分成 {devices} 个相等的块，每台设备一块。",
    },
    "error.bad_dataset_size": {"en": "The dataset size must be between 1 and {limit}, got {value}.",
                               "zh": "数据集大小必须在 1 到 {limit} 之间，当前为 {value}。"},
    "error.kill_after_end": {"en": "The kill step ({step}) must come before the last step ({steps}).",
                             "zh": "杀死进程的步数（{step}）必须早于最后一步（{steps}）。"},
    "error.too_few_heavy_slots": {
        "en": "This run starts {need} processes, and each takes one of the server's heavy-job slots; this server "
              "has {slots} ({env}). Choose at most {slots} processes.",
        "zh": "这次运行会启动 {need} 个进程，每个进程占用服务器的一个繁重任务名额；本服务器只有 {slots} 个（{env}）。"
              "请最多选择 {slots} 个进程。",
    },
    "error.devices_not_group": {
        "en": "The group has {total} devices ({processes} processes × {per}); {value} would leave some idle.",
        "zh": "进程组共有 {total} 台设备（{processes} 个进程 × {per}）；{value} 会让部分设备闲置。",
    },
}
