TEXTS = {
    "title": {"en": "Training", "zh": "训练实战"},
    "summary": {
        "en": "Train on many devices, watch the loss, measure throughput and scaling.",
        "zh": "多设备训练，观察损失，测量吞吐量与扩展比。",
    },
    "intro": {
        "en": "Everything so far, in one training loop. The global batch B is split into D shards of b = B/D "
              "samples (leading axis = device axis); every device holds a replica of the parameters, computes "
              "the gradient on its shard, `lax.pmean` averages the gradients, and every device applies the same "
              "update — so the replicas stay identical. Each run is tracked in MLflow.",
        "zh": "把前面的内容串成一个完整的训练循环。全局批次 B 被切成 D 个分片，每片 b = B/D 个样本（前导维度即设备轴）；"
              "每台设备持有一份参数副本，在自己的分片上计算梯度，`lax.pmean` 对梯度求平均，每台设备执行相同的更新——"
              "因此各参数副本始终一致。每次运行都记录在 MLflow 中。",
    },
    "w.model": {"en": "Model", "zh": "模型"},
    "w.model.linear": {"en": "linear regression y = 3x + 1", "zh": "线性回归 y = 3x + 1"},
    "w.model.mlp": {"en": "small MLP (one hidden layer)", "zh": "小型 MLP（一个隐藏层）"},
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.scaling": {"en": "Scaling", "zh": "扩展方式"},
    "w.scaling.strong": {"en": "strong (same global batch)", "zh": "强扩展（全局批次不变）"},
    "w.scaling.weak": {"en": "weak (same per-device batch)", "zh": "弱扩展（每台设备批次不变）"},
    "w.impl": {"en": "Implementation", "zh": "实现方式"},
    "w.impl.pmap": {"en": "pmap (legacy)", "zh": "pmap（旧式）"},
    "w.impl.shard_map": {"en": "shard_map", "zh": "shard_map"},
    "w.impl.jit": {"en": "jit with shardings", "zh": "jit 加分片"},
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.lr": {"en": "Learning rate η", "zh": "学习率 η"},
    "w.steps": {"en": "Steps", "zh": "训练步数"},
    "lr_default": {
        "en": "The default η for width {hidden} is {default:g}: past width {base} it falls as 1/width, because with "
              "this MLP's standard initialization the largest η that trains without diverging falls that way.",
        "zh": "宽度 {hidden} 的默认 η 为 {default:g}：宽度超过 {base} 后它按 1/宽度 缩小，因为在这个 MLP 的标准初始化下，"
              "不发散的最大 η 正是这样随宽度下降的。",
    },
    "w.hidden": {"en": "Hidden width (model size)", "zh": "隐藏层宽度（模型规模）"},
    "w.seed": {"en": "Seed", "zh": "随机种子"},
    "per_device": {
        "en": "Per-device batch b = {batch} / {devices} = {per} samples.",
        "zh": "每台设备批次 b = {batch} / {devices} = {per} 个样本。",
    },
    "button.train": {"en": "🏋️ Train", "zh": "🏋️ 开始训练"},
    "button.sweep": {"en": "📈 Scaling sweep", "zh": "📈 扩展扫描"},
    "button.sweep.help": {
        "en": "Train the same settings on D = {counts} and compare throughput.",
        "zh": "用相同设置分别在 D = {counts} 上训练，并比较吞吐量。",
    },
    "button.sweep.left_out": {
        "en": "Strong scaling keeps the global batch {batch}, which does not split evenly over D = {counts}: "
              "those are left out.",
        "zh": "强扩展保持全局批次 {batch} 不变，而它不能被 D = {counts} 整除：这些设备数不参与扫描。",
    },
    "nothing_yet": {
        "en": "Choose settings and press Train. Training runs only when you press a button.",
        "zh": "选好设置后点击“开始训练”。只有点击按钮时才会训练。",
    },
    "progress.compiling": {"en": "Compiling the training step…", "zh": "正在编译训练步……"},
    "progress.steps": {"en": "Step {done} of {total}", "zh": "第 {done} / {total} 步"},
    "progress.sweep": {"en": "Sweep: {done} of {total} runs done", "zh": "扫描：已完成 {done} / {total} 次运行"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss (mean squared error)", "zh": "损失（均方误差）"},
    "axis.throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "axis.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "result.heading": {
        "en": "Last run: {model}, {impl}, D = {devices}, B = {batch}",
        "zh": "最近一次运行：{model}，{impl}，D = {devices}，B = {batch}",
    },
    "tracking.where": {
        "en": "Recorded as an MLflow run (its id, then the store) — compare it on the Experiments page:",
        "zh": "已记录为一个 MLflow 运行（先是运行 ID，后是存储）——可在“实验对比”页比较：",
    },
    "tracking.fell_back": {
        "en": "The tracking store could not be used (it did not answer, stayed locked, or a write failed), so "
              "this run was written to the local fallback store {store} instead. Nothing was lost; open that "
              "store to see it.",
        "zh": "跟踪存储无法使用（没有响应、一直被锁定或写入失败），因此本次运行改为写入本地备用存储 {store}。"
              "没有任何数据丢失，打开该存储即可查看。",
    },
    "tracking.failed": {
        "en": "This training could not be recorded in MLflow, not even in the fallback store; the result "
              "below is complete. What failed:",
        "zh": "本次训练无法记录到 MLflow，连备用存储也失败了；下方的结果是完整的。失败原因：",
    },
    "tracking.refused": {
        "en": "Training was not started: the tracking store set by `MLFLOW_TRACKING_URI` cannot be used.",
        "zh": "未开始训练：`MLFLOW_TRACKING_URI` 指定的跟踪存储无法使用。",
    },
    "replicas.same": {
        "en": "The {devices} per-device copies of the parameters are identical, bit for bit: every device applied the same averaged gradient.",
        "zh": "{devices} 台设备上的参数副本逐位完全相同：每台设备都应用了同一个平均梯度。",
    },
    "replicas.one_device": {
        "en": "One device holds the only copy of the parameters: there are no replicas to compare, and the "
              "gradient average is over one device's gradient.",
        "zh": "只有一台设备持有唯一一份参数：没有参数副本可比较，梯度平均也只是对这一台设备的梯度求平均。",
    },
    "replicas.differ": {
        "en": "The per-device copies of the parameters differ (max difference {diff:.3g}): the gradients were not averaged identically.",
        "zh": "各设备上的参数副本不一致（最大差 {diff:.3g}）：梯度没有被一致地平均。",
    },
    "param.w": {"en": "learned w", "zh": "学到的 w"},
    "param.b": {"en": "learned b", "zh": "学到的 b"},
    "param.true": {"en": "The data was generated with {value}.", "zh": "生成数据时的真实值为 {value}。"},
    "param.name": {"en": "parameter", "zh": "参数"},
    "param.shape": {"en": "shape", "zh": "形状"},
    "param.norm": {"en": "L2 norm", "zh": "L2 范数"},
    "metric.throughput": {"en": "Throughput, end to end (samples/s)", "zh": "吞吐量，端到端（样本/秒）"},
    "metric.throughput.help": {
        "en": "Global samples of all steps / wall time of every training call: compile excluded; the first call "
              "after compiling and every call's dispatch included. MLflow: `throughput`.",
        "zh": "所有步的全局样本数 / 每次训练调用的实际耗时之和：不含编译；含编译后的第一次调用和每次调用的派发开销。"
              "MLflow 中为 `throughput`。",
    },
    "metric.steady_throughput": {"en": "Steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "metric.steady_throughput.help": {
        "en": "Samples of one compiled call of {steps} steps / the median time of repeated warm calls of it "
              "(each call's dispatch included). S(D) compares this figure. MLflow: `steady_throughput`.",
        "zh": "一次编译好的 {steps} 步调用的样本数 / 多次预热后重复调用的耗时中位数（含每次调用的派发开销）。"
              "S(D) 比较的就是这个数。MLflow 中为 `steady_throughput`。",
    },
    "metric.step_time": {"en": "Step time", "zh": "单步时间"},
    "metric.compile_time": {"en": "Compile time", "zh": "编译时间"},
    "metric.cached": {
        "en": "The compiled program came from the cache: same shapes, no recompilation.",
        "zh": "编译好的程序来自缓存：形状相同，无需重新编译。",
    },
    "metric.final_loss": {"en": "Final loss", "zh": "最终损失"},
    "scaling.heading": {"en": "Scaling against one device ({mode})", "zh": "相对单设备的扩展（{mode}）"},
    "scaling.explain.strong": {
        "en": "Strong scaling: the same global batch B = {batch} on {devices} devices and on one device, timed just now "
              "in this process (median of repeated calls of one compiled chunk of steps, for each).",
        "zh": "强扩展：{devices} 台设备与单台设备使用相同的全局批次 B = {batch}，刚刚在本进程中计时"
              "（两者都取同一段编译好的训练步重复调用的中位数）。",
    },
    "scaling.explain.weak": {
        "en": "Weak scaling: the same per-device batch; B = {batch} on {devices} devices against B = {base_batch} on one "
              "device, timed just now in this process (median of repeated calls of one compiled chunk of steps, for each).",
        "zh": "弱扩展：每台设备批次相同；{devices} 台设备用 B = {batch}，单台设备用 B = {base_batch}，刚刚在本进程中计时"
              "（两者都取同一段编译好的训练步重复调用的中位数）。",
    },
    "scaling.one_device": {
        "en": "With D = 1 the run is its own one-device baseline: S(1) = 1 and E(1) = 100 % by definition, and "
              "nothing was timed apart. Scaling is measured from two devices on.",
        "zh": "D = 1 时，这次运行本身就是单设备基准：按定义 S(1) = 1、E(1) = 100 %，没有另外计时。"
              "扩展要从两台设备起才能测量。",
    },
    "scaling.throughput": {"en": "Steady throughput, D = {devices}", "zh": "稳态吞吐量，D = {devices}"},
    "scaling.baseline": {"en": "Steady throughput, D = 1", "zh": "稳态吞吐量，D = 1"},
    "scaling.ratio": {"en": "Scaling ratio S(D)", "zh": "扩展比 S(D)"},
    "scaling.efficiency": {"en": "Efficiency E(D)", "zh": "扩展效率 E(D)"},
    "scaling.ceiling": {
        "en": "Hardware ceiling for D = {devices} on this runtime: S ≤ {ceiling:g}.",
        "zh": "本运行时在 D = {devices} 时的硬件上限：S ≤ {ceiling:g}。",
    },
    "scaling.slower": {
        "en": "Here one device is faster than {devices}: S = {ratio:.2g}. One step takes {base_step:,.1f} µs on one "
              "device and {step:,.1f} µs on {devices}.",
        "zh": "这里单台设备比 {devices} 台更快：S = {ratio:.2g}。单台设备每步 {base_step:,.1f} 微秒，"
              "{devices} 台设备每步 {step:,.1f} 微秒。",
    },
    "scaling.above_ceiling": {
        "en": "S = {ratio:.2f} is above the hardware ceiling of {ceiling:g}. The ceiling bounds compute-bound work; "
              "when fixed costs per step (dispatch, synchronisation) dominate, a larger batch costs almost nothing "
              "extra, so weak scaling — and timing noise on a shared machine — can push S past it.",
        "zh": "S = {ratio:.2f} 超过了硬件上限 {ceiling:g}。这个上限针对计算受限的工作；当每步的固定开销（派发、同步）"
              "占主导时，批次变大几乎不增加耗时，因此弱扩展——以及共享机器上的计时噪声——可能让 S 超过它。",
    },
    "scaling.bounds": {
        "en": "**What bounds the speedup here.** A step of this model is a few thousand multiply-adds — "
              "microseconds of compute. Splitting it over D devices saves little, while every step still pays "
              "for launching work on D devices and for the all-reduce that averages the gradients, a "
              "synchronisation barrier where every device waits for the slowest. When T_comm + T_dispatch is "
              "larger than the T_compute saved, more devices make training slower. Data parallelism pays off "
              "when each device has much more work per step: bigger models, bigger batches, real accelerators.",
        "zh": "**这里限制加速比的是什么。** 这个模型的一步只有几千次乘加——计算只需几微秒。把它分到 D 台设备上省不了多少，"
              "但每一步仍要付出在 D 台设备上启动计算的开销，以及对梯度求平均的全归约——这是一道同步屏障，每台设备都要"
              "等最慢的那台。当 T_comm + T_dispatch 大于节省下来的 T_compute 时，设备越多训练反而越慢。当每台设备每步的"
              "工作量大得多时（更大的模型、更大的批次、真实的加速器），数据并行才划算。",
    },
    "series.measured": {"en": "measured", "zh": "实测"},
    "series.ideal": {"en": "ideal (linear)", "zh": "理想（线性）"},
    "series.ceiling": {"en": "hardware ceiling", "zh": "硬件上限"},
    "sweep.heading": {"en": "Last scaling sweep ({mode})", "zh": "最近一次扩展扫描（{mode}）"},
    "sweep.throughput": {"en": "Steady throughput against D", "zh": "稳态吞吐量与 D"},
    "sweep.efficiency": {"en": "Efficiency against D", "zh": "扩展效率与 D"},
    "sweep.col.batch": {"en": "global batch", "zh": "全局批次"},
    "sweep.col.ceiling": {"en": "ceiling S", "zh": "上限 S"},
    "sweep.best": {
        "en": "Highest steady throughput in this sweep: D = {devices} with {impl}, {throughput:,.0f} samples/s.",
        "zh": "本次扫描稳态吞吐量最高的是 D = {devices}（{impl}），{throughput:,.0f} 样本/秒。",
    },
    "w.compare": {"en": "Sweep every implementation", "zh": "扫描全部实现方式"},
    "w.compare.help": {
        "en": "The scaling sweep trains pmap, shard_map and jit at every D, each compared with its own D = 1 run.",
        "zh": "扩展扫描在每个 D 上分别用 pmap、shard_map 和 jit 训练，各自与自己的 D = 1 运行比较。",
    },
    "advice.default_ok": {
        "en": "The default implementation, {default}, is within {share:.0f}% of the fastest at every D measured "
              "here (D = {counts}): keep it.",
        "zh": "默认实现 {default} 在此处测量的每个 D（D = {counts}）上都与最快者相差不超过 {share:.0f}%：保留它即可。",
    },
    "advice.recommend": {
        "en": "At D = {devices}, {fastest} was fastest here ({fastest_throughput:,.0f} samples/s); the default, "
              "{default}, reached {default_throughput:,.0f} samples/s, {shortfall:.0f}% less. Use {fastest} at "
              "this D: the three programs compute and communicate the same values, so the gap is in how each "
              "is compiled and dispatched on this machine (the migration lab compares their compiled programs).",
        "zh": "在 D = {devices} 时，此处最快的是 {fastest}（{fastest_throughput:,.0f} 样本/秒）；默认实现 {default} "
              "为 {default_throughput:,.0f} 样本/秒，少 {shortfall:.0f}%。在这个 D 上请使用 {fastest}："
              "三个程序计算和通信的数值相同，差距来自各自在本机上的编译与派发方式（迁移实验比较了它们的编译程序）。",
    },
    "error.batch_not_divisible": {
        "en": "The global batch {batch} does not split evenly over {devices} devices. Choose a multiple of {devices}, for example {suggestion}.",
        "zh": "全局批次 {batch} 不能被 {devices} 台设备整除。请选择 {devices} 的倍数，例如 {suggestion}。",
    },
    "error.too_much_work": {
        "en": "This run would need {work:,} multiply-adds, over this server's limit of {limit:,}. Use fewer steps, a smaller batch or a narrower model.",
        "zh": "本次运行需要 {work:,} 次乘加，超过本服务器的上限 {limit:,}。请减少步数、批次或模型宽度。",
    },
    "error.unknown_model": {"en": "Unknown model `{value}`; choose one of {options}.", "zh": "未知模型 `{value}`；请从 {options} 中选择。"},
    "error.unknown_scaling": {
        "en": "Unknown scaling mode `{value}`; choose one of {options}.",
        "zh": "未知扩展方式 `{value}`；请从 {options} 中选择。",
    },
    "error.distributed_devices": {
        "en": "A multi-process run trains on all {available} devices of its processes (asked for {devices}).",
        "zh": "多进程运行会使用其所有进程的全部 {available} 台设备（请求了 {devices} 台）。",
    },
}
