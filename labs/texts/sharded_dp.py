TEXTS = {
    "title": {"en": "Sharded data parallel: ZeRO / FSDP", "zh": "分片数据并行：ZeRO / FSDP"},
    "summary": {
        "en": "Shard the optimizer state, the gradients and the parameters over the devices, and measure what each "
              "device holds and sends.",
        "zh": "把优化器状态、梯度和参数分片到各台设备上，并实测每台设备持有和发送的字节数。",
    },
    "intro": {
        "en": "Plain data parallelism keeps a replica of everything on every device: parameters, gradients and "
              "optimizer state. ZeRO stage 1 shards the optimizer state over the D devices, stage 2 the gradients "
              "too, stage 3 (FSDP) the parameters as well, which are then all-gathered when a step needs them. "
              "Every strategy computes the same update; they differ in what each device holds and in the "
              "collectives a step runs. Below, each figure is measured on this machine's devices: bytes held "
              "read from the arrays' shards, bytes sent read from the compiled program, beside the formulas.",
        "zh": "普通数据并行在每台设备上保存一切的副本：参数、梯度和优化器状态。ZeRO 第 1 阶段把优化器状态分片到 D 台设备上，"
              "第 2 阶段连梯度也分片，第 3 阶段（FSDP）连参数也分片，一步需要时再全收集。每种策略计算的更新相同，"
              "区别在于每台设备持有什么、一步运行哪些集合通信。下方每个数字都在本机设备上实测：持有字节数读自数组的分片，"
              "发送字节数读自编译后的程序，并与公式并列。",
    },
    "formulas": {
        "en": "Ψ parameters; p, g, k bytes per parameter for parameters, gradients and optimizer state (this lab "
              "trains in float32: p = g = 4, Adam k = 8, SGD k = 0); D_x = D where the strategy shards x, else 1. "
              "C is what one device sends per step on a ring (all-reduce 2(D−1)/D·S, all-gather and reduce-scatter "
              "(D−1)/D·S); zero1 sends 2Ψg + Ψp. Sources: Rajbhandari et al. 2020 (ZeRO), §5 and §7.2; the "
              "Ultra-Scale Playbook (Hugging Face, 2025).",
        "zh": "Ψ 为参数量；p、g、k 为参数、梯度、优化器状态每个参数的字节数（本实验用 float32 训练：p = g = 4，Adam k = 8，"
              "SGD k = 0）；策略对 x 分片时 D_x = D，否则为 1。C 是环上每台设备每步发送的字节数（全归约 2(D−1)/D·S，"
              "全收集与归约散射 (D−1)/D·S）；zero1 发送 2Ψg + Ψp。来源：Rajbhandari 等 2020（ZeRO）§5 与 §7.2；"
              "Ultra-Scale Playbook（Hugging Face，2025）。",
    },
    "w.strategy": {"en": "Strategy", "zh": "策略"},
    "w.strategy.dp": {"en": "dp (replicated)", "zh": "dp（全部复制）"},
    "w.strategy.zero1": {"en": "ZeRO-1", "zh": "ZeRO-1"},
    "w.strategy.zero2": {"en": "ZeRO-2", "zh": "ZeRO-2"},
    "w.strategy.zero3": {"en": "ZeRO-3 (FSDP)", "zh": "ZeRO-3（FSDP）"},
    "w.optimizer": {"en": "Optimizer", "zh": "优化器"},
    "w.optimizer.sgd": {"en": "SGD", "zh": "SGD"},
    "w.optimizer.adam": {"en": "Adam", "zh": "Adam"},
    "w.grad_dtype": {"en": "Gradient dtype (communication)", "zh": "梯度数据类型（通信）"},
    "w.compare": {"en": "Also train with the other gradient dtype", "zh": "同时用另一种梯度数据类型训练"},
    "w.compare.help": {"en": "Two runs on the same data: their loss curves side by side.",
                       "zh": "在相同数据上运行两次：并排显示它们的损失曲线。"},
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.accum": {"en": "Accumulation steps K", "zh": "累积步数 K"},
    "w.accum.help": {"en": "Micro-batches per device per step, one gradient collective per K of them.",
                     "zh": "每台设备每步的微批次数，每 K 个微批次做一次梯度集合通信。"},
    "w.batch": {"en": "Global batch B", "zh": "全局批大小 B"},
    "w.steps": {"en": "Steps", "zh": "步数"},
    "w.hidden": {"en": "MLP hidden width (model size)", "zh": "MLP 隐藏层宽度（模型规模）"},
    "w.features": {"en": "Input features", "zh": "输入特征数"},
    "w.lr": {"en": "Learning rate η", "zh": "学习率 η"},
    "w.measure_max": {"en": "Measure up to D", "zh": "测量到 D"},
    "w.measure_max.help": {"en": "The ladder 1, 2, 4, … up to this D that the measure button runs.",
                           "zh": "测量按钮运行的设备数序列 1、2、4……直到此 D。"},
    "w.budget_gb": {"en": "Memory budget per device (GB)", "zh": "每台设备的显存预算（GB）"},
    "per_device": {
        "en": "B = {batch} samples over D = {devices} devices in K = {k} micro-batches: {micro} samples per "
              "micro-batch on each device.",
        "zh": "B = {batch} 个样本分到 D = {devices} 台设备、K = {k} 个微批次：每台设备每个微批次 {micro} 个样本。",
    },
    "button.train": {"en": "▶️ Train", "zh": "▶️ 训练"},
    "button.measure": {"en": "📏 Measure all strategies", "zh": "📏 测量全部策略"},
    "button.measure.help": {"en": "A short run of each strategy at D = {counts}.",
                            "zh": "每种策略在 D = {counts} 上各做一次短运行。"},
    "progress.compiling": {"en": "Compiling…", "zh": "正在编译……"},
    "progress.steps": {"en": "Step {done} of {total} ({dtype} gradients)", "zh": "第 {done} / {total} 步（{dtype} 梯度）"},
    "progress.measure": {"en": "Run {done} of {total}", "zh": "第 {done} / {total} 次运行"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss", "zh": "损失"},
    "axis.devices": {"en": "devices D", "zh": "设备数 D"},
    "axis.bytes_device": {"en": "bytes per device", "zh": "每台设备的字节数"},
    "axis.bytes_step": {"en": "bytes sent per device per step", "zh": "每台设备每步发送的字节数"},
    "tracking.refused": {
        "en": "Training was not started: the tracking store set by `MLFLOW_TRACKING_URI` cannot be used.",
        "zh": "未开始训练：`MLFLOW_TRACKING_URI` 指定的跟踪存储无法使用。",
    },
    "tracking.failed": {
        "en": "This run could not be recorded in MLflow, not even in the fallback store; the result below is "
              "complete. What failed:",
        "zh": "本次运行无法记录到 MLflow，连备用存储也失败了；下方结果是完整的。失败原因：",
    },
    "tracking.fell_back": {
        "en": "The tracking store could not be used, so this run went to the local fallback store {store}.",
        "zh": "跟踪存储无法使用，本次运行已写入本地备用存储 {store}。",
    },
    "tracking.where": {
        "en": "The {dtype} run, recorded in MLflow (its id, then the store); compare it on the Experiments page:",
        "zh": "{dtype} 运行已记录到 MLflow（先是运行 ID，后是存储）；可在“实验对比”页比较：",
    },
    "kind.params": {"en": "parameters", "zh": "参数"},
    "kind.grads": {"en": "gradients", "zh": "梯度"},
    "kind.optimizer": {"en": "optimizer state", "zh": "优化器状态"},
    "kind.comm": {"en": "sent per step", "zh": "每步发送"},
    "col.figure": {"en": "per device (bytes)", "zh": "每台设备（字节）"},
    "col.measured": {"en": "measured", "zh": "实测"},
    "col.model": {"en": "model", "zh": "模型"},
    "col.ratio": {"en": "measured / model", "zh": "实测 / 模型"},
    "col.collective": {"en": "collective", "zh": "集合通信"},
    "col.bytes": {"en": "bytes sent per device per step", "zh": "每台设备每步发送的字节数"},
    "col.strategy": {"en": "strategy", "zh": "策略"},
    "col.bytes_per_param": {"en": "measured bytes per parameter", "zh": "实测每参数字节数"},
    "col.model_bytes_per_param": {"en": "model bytes per parameter", "zh": "模型每参数字节数"},
    "col.largest_measured_b": {"en": "largest Ψ, measured (billions)", "zh": "最大 Ψ，实测（十亿）"},
    "col.largest_model_b": {"en": "largest Ψ, model (billions)", "zh": "最大 Ψ，模型（十亿）"},
    "result.heading": {"en": "{strategy} on D = {devices}: Ψ = {psi:,} parameters, K = {accum}, {dtype} gradients",
                       "zh": "{strategy}，D = {devices}：Ψ = {psi:,} 个参数，K = {accum}，{dtype} 梯度"},
    "compare.losses": {
        "en": "Final loss after {steps} steps: {f32:.6g} with float32 gradients, {bf16:.6g} with bfloat16 ones "
              "(relative difference {diff:.2e}).",
        "zh": "{steps} 步后的最终损失：float32 梯度 {f32:.6g}，bfloat16 梯度 {bf16:.6g}（相对差 {diff:.2e}）。",
    },
    "one_device": {
        "en": "With D = 1 there is nothing to shard over: this run holds {total:,.0f} bytes for its {psi:,} "
              "parameters, what dp holds, and sends nothing.",
        "zh": "D = 1 时没有可以分片的对象：本次运行为 {psi:,} 个参数持有 {total:,.0f} 字节，与 dp 相同，且不发送任何数据。",
    },
    "zero3.gathers": {
        "en": "The model counts the parameters all-gathered twice per step (forward and backward pass). This "
              "compiled step all-gathers {gathers:.2g}× the parameters' bytes per step and sends {ratio:.2f}× the "
              "model's bytes.",
        "zh": "模型按每步全收集参数两次（前向与反向）计算。这个编译后的步骤每步全收集 {gathers:.2g} 倍参数字节，"
              "发送量是模型的 {ratio:.2f} 倍。",
    },
    "zero3.kept": {
        "en": "It gathers once: the compiler keeps the gathered parameters from the forward pass for the backward "
              "pass instead of gathering them again, which saves bytes sent and costs memory held between the two.",
        "zh": "它只收集一次：编译器把前向时全收集到的参数留给反向使用，而不再收集一次；这节省了发送的字节，"
              "代价是两者之间要持有这些参数。",
    },
    "accum.heading": {"en": "Gradient accumulation", "zh": "梯度累积"},
    "accum.outside": {"en": "none of them inside the micro-batch loop", "zh": "其中没有一个位于微批次循环内"},
    "accum.inside": {"en": "some of them inside the micro-batch loop", "zh": "其中有的位于微批次循环内"},
    "accum.measured": {
        "en": "K = {k}: each device runs {k} micro-batches of {micro} samples (instead of one batch of {per}) "
              "in a `lax.scan`, adding up their gradients. The compiled step runs {reductions:g} all-reduce and "
              "reduce-scatter instructions per step, {loop}. Its temporary buffers: {temp:,} bytes.",
        "zh": "K = {k}：每台设备在 `lax.scan` 中运行 {k} 个各 {micro} 个样本的微批次（而不是一个 {per} 个样本的批次），"
              "并把它们的梯度相加。编译后的步骤每步运行 {reductions:g} 条全归约与归约散射指令，{loop}。"
              "其临时缓冲区：{temp:,} 字节。",
    },
    "accum.explain": {
        "en": "What it buys: activations are those of one micro-batch of {micro} samples, not of {batch}/{devices}, "
              "so a global batch that does not fit in memory still trains. What it costs: the {k} micro-batches "
              "run one after another, so a step takes about {k}× the compute of one micro-batch, and the gradient "
              "collective runs once per step, not once per micro-batch. The mean over the K micro-batches is the "
              "gradient of the whole global batch B = {batch}, so the same learning rate gives the same step as "
              "without accumulation. If you use accumulation to grow B instead, the learning rate usually grows "
              "with it (SGD: the linear scaling rule with warm-up, Goyal et al. 2017).",
        "zh": "它带来的好处：激活值只是一个 {micro} 个样本的微批次的，而不是 {batch}/{devices} 个样本的，"
              "因此放不进显存的全局批次也能训练。它的代价：{k} 个微批次依次运行，一步大约需要一个微批次 {k} 倍的计算，"
              "而梯度集合通信每步只做一次，而不是每个微批次一次。K 个微批次上的平均就是整个全局批次 B = {batch} 的梯度，"
              "所以相同的学习率给出与不累积时相同的一步。若用累积来增大 B，学习率通常随之增大"
              "（SGD：带预热的线性缩放规则，Goyal 等 2017）。",
    },
    "bf16.heading": {"en": "bfloat16 gradient communication", "zh": "bfloat16 梯度通信"},
    "bf16.measured": {
        "en": "Gradient collectives per step and device: {emitted:,.0f} bytes in the program as JAX emitted it, "
              "{compiled:,.0f} bytes in the program this backend compiled (element types: {dtypes}).",
        "zh": "每台设备每步的梯度集合通信：JAX 生成的程序中 {emitted:,.0f} 字节，本后端编译后的程序中 {compiled:,.0f} 字节"
              "（元素类型：{dtypes}）。",
    },
    "bf16.against": {
        "en": "Against the float32 run: {emitted:.2f}× the bytes as emitted, {compiled:.2f}× as compiled.",
        "zh": "与 float32 运行相比：生成的程序为 {emitted:.2f} 倍字节，编译后为 {compiled:.2f} 倍。",
    },
    "bf16.widened": {
        "en": "Measured here: this backend widens the bfloat16 collective back to float32 when it compiles, so "
              "the bytes it runs do not halve, while the emitted program's do.",
        "zh": "此处实测：本后端在编译时把 bfloat16 集合通信加宽回 float32，因此它实际运行的字节数没有减半，"
              "而生成的程序中的字节数减半了。",
    },
    "bf16.kept": {
        "en": "Measured here: the compiled collective stays in bfloat16, so the bytes it runs are those of the "
              "emitted program.",
        "zh": "此处实测：编译后的集合通信保持 bfloat16，因此实际运行的字节数与生成的程序相同。",
    },
    "all.heading": {"en": "Every strategy against D, measured", "zh": "每种策略随 D 的变化（实测）"},
    "all.settings": {
        "en": "Each point is a short run of the MLP (Ψ = {psi:,} parameters: {features} inputs, {hidden} hidden), "
              "{optimizer}, global batch {batch}, K = {k}, {dtype} gradients, at D = {counts} (the D that split the "
              "batch into equal micro-batches).",
        "zh": "每个点是 MLP 的一次短运行（Ψ = {psi:,} 个参数：{features} 个输入、{hidden} 个隐藏单元），{optimizer}，"
              "全局批次 {batch}，K = {k}，{dtype} 梯度，D = {counts}（能把批次分成大小相同的微批次的 D）。",
    },
    "chart.memory": {"en": "Bytes per device by kind (bars: measured; ◆: model)",
                     "zh": "每台设备按类别的字节数（柱：实测；◆：模型）"},
    "chart.memory.note": {
        "en": "A leaf no dimension of which D divides (a bias of width 1, Adam's step count) is held whole, so "
              "the measured shards can be a little above Ψ/D.",
        "zh": "没有任何维度能被 D 整除的叶子（宽度为 1 的偏置、Adam 的步数计数）整体保存，因此实测分片可能略高于 Ψ/D。",
    },
    "chart.comm": {"en": "Bytes sent per device per step (solid: measured; dashed: model)",
                   "zh": "每台设备每步发送的字节数（实线：实测；虚线：模型）"},
    "series.measured": {"en": "measured", "zh": "实测"},
    "series.model": {"en": "model", "zh": "模型"},
    "all.one_device": {
        "en": "At D = 1 every strategy held the same {total:,.0f} bytes: sharding over one device changes nothing.",
        "zh": "D = 1 时每种策略都持有相同的 {total:,.0f} 字节：在一台设备上分片不改变任何东西。",
    },
    "all.worst": {
        "en": "Largest gap between measurement and model: {strategy} at D = {devices}, {figure}, measured / model "
              "= {ratio:.3g}.",
        "zh": "实测与模型差距最大处：{strategy}，D = {devices}，{figure}，实测 / 模型 = {ratio:.3g}。",
    },
    "ratio.param": {"en": "parameters", "zh": "参数"},
    "ratio.grad": {"en": "gradients", "zh": "梯度"},
    "ratio.opt": {"en": "optimizer state", "zh": "优化器状态"},
    "ratio.comm": {"en": "bytes sent per step", "zh": "每步发送字节数"},
    "fit.heading": {"en": "The largest model that fits {budget:g} GB per device at D = {devices}",
                    "zh": "D = {devices} 时每台设备 {budget:g} GB 能放下的最大模型"},
    "fit.note": {
        "en": "Parameters, gradients and optimizer state only: activations, temporary buffers and the gathered "
              "parameters of ZeRO-3 need room too. Measured bytes per parameter come from the runs above.",
        "zh": "只计参数、梯度和优化器状态：激活值、临时缓冲区以及 ZeRO-3 全收集到的参数也需要空间。"
              "实测的每参数字节数来自上面的运行。",
    },
    "nothing_yet": {"en": "Press Train, or Measure all strategies, to see the figures of this machine.",
                    "zh": "按“训练”或“测量全部策略”，查看本机的数字。"},
    "error.batch_not_divisible": {
        "en": "The global batch {batch} does not split evenly over {devices} devices; try {suggestion}.",
        "zh": "全局批次 {batch} 不能被 {devices} 台设备整除；可试 {suggestion}。",
    },
    "error.micro_batch_not_divisible": {
        "en": "The global batch {batch} does not split into {devices} devices × {accum} micro-batches of equal "
              "size; try {suggestion}.",
        "zh": "全局批次 {batch} 无法分成 {devices} 台设备 × {accum} 个大小相同的微批次；可试 {suggestion}。",
    },
    "error.too_much_work": {
        "en": "This run would need {work:,} multiply-adds, over this server's limit of {limit:,}. Use fewer steps, "
              "a smaller batch or a narrower model.",
        "zh": "本次运行需要 {work:,} 次乘加，超过本服务器的上限 {limit:,}。请减少步数、批次或模型宽度。",
    },
    "error.distributed_devices": {
        "en": "A multi-process run trains on all {available} devices of its processes (asked for {devices}).",
        "zh": "多进程运行会使用其所有进程的全部 {available} 台设备（请求了 {devices} 台）。",
    },
    "error.not_positive": {"en": "`{name}` must be greater than zero (got {value}).",
                           "zh": "`{name}` 必须大于零（收到 {value}）。"},
    "error.strategy_needs_jit": {
        "en": "Optimizer {optimizer}, strategy {strategy}, {accum} accumulation step(s), {dtype} gradients and "
              "{precision} precision run in the jit implementation (sharded training state), not in {impl}.",
        "zh": "优化器 {optimizer}、策略 {strategy}、{accum} 个累积步、{dtype} 梯度和 {precision} 精度只能在 jit 实现"
              "（分片的训练状态）中运行，不能在 {impl} 中运行。",
    },
    "error.unknown_precision": {"en": "Unknown precision `{value}`; choose one of {options}.",
                                "zh": "未知精度 `{value}`；请从 {options} 中选择。"},
    "error.unknown_strategy": {"en": "Unknown strategy `{value}`; choose one of {options}.",
                               "zh": "未知策略 `{value}`；请从 {options} 中选择。"},
    "error.unknown_optimizer": {"en": "Unknown optimizer `{value}`; choose one of {options}.",
                                "zh": "未知优化器 `{value}`；请从 {options} 中选择。"},
    "error.unknown_grad_dtype": {"en": "Unknown gradient dtype `{value}`; choose one of {options}.",
                                 "zh": "未知梯度数据类型 `{value}`；请从 {options} 中选择。"},
    "error.unknown_impl": {"en": "Unknown implementation `{value}`; choose one of {options}.",
                           "zh": "未知实现 `{value}`；请从 {options} 中选择。"},
}
