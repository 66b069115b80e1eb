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
              "too, stage 3 (FSDP) the parameters as well. Under ZeRO each layer's parameters, gradients and "
              "optimizer state are one flat buffer padded with zeros to a multiple of D, so every D shards "
              "them. Stages 1 and 2 reduce-scatter the gradients, update their shard and all-gather the updated "
              "parameters; stage 3 all-gathers each layer just before its forward pass and again before its "
              "backward pass, keeping only its shard in between, then reduce-scatters the layer's gradient. Every "
              "strategy computes the same update; they differ in what each device holds and in the collectives a "
              "step runs. Below, each figure is measured on this machine's devices: bytes held read from the "
              "arrays' shards, bytes sent read from the compiled program, beside the formulas.",
        "zh": "普通数据并行在每台设备上保存一切的副本：参数、梯度和优化器状态。ZeRO 第 1 阶段把优化器状态分片到 D 台设备上，"
              "第 2 阶段连梯度也分片，第 3 阶段（FSDP）连参数也分片。在 ZeRO 下，每一层的参数、梯度和优化器状态是一个扁平缓冲区，"
              "用零补齐到 D 的倍数，因此任何 D 都能分片。第 1、2 阶段对梯度做归约散射，更新自己的分片，再全收集更新后的参数；"
              "第 3 阶段在每一层前向之前全收集该层，反向之前再全收集一次，其间只保留自己的分片，然后对该层的梯度做归约散射。"
              "每种策略计算的更新相同，区别在于每台设备持有什么、一步运行哪些集合通信。下方每个数字都在本机设备上实测："
              "持有字节数读自数组的分片，发送字节数读自编译后的程序，并与公式并列。",
    },
    "formulas": {
        "en": "Ψ parameters; p, g, k bytes per parameter of the parameters, the gradients and the optimizer state; "
              "D_x = D where the strategy shards x, else 1; K micro-batches per step. float32: p = g = 4, Adam's two "
              "moments k = 8 (SGD: 0). Mixed precision (ZeRO §3): bfloat16 p = g = 2, and k = 12, a float32 master "
              "copy (4) and Adam's moments (8): 2Ψ + 2Ψ + 12Ψ = 16Ψ. C is what one device sends per step on a ring "
              "(all-reduce 2(D−1)/D·S, all-gather and reduce-scatter (D−1)/D·S of an array of S bytes). Sources: "
              "Rajbhandari et al. 2020 (ZeRO): §3 (model states, 16Ψ), §5 (the three stages), §7.1 (data "
              "parallelism: 2Ψ), §7.2 (stages 1 and 2: reduce-scatter the gradients, all-gather the parameters, 2Ψ; "
              "stage 3: all-gather before the forward and again before the backward, then reduce-scatter, 3Ψ); "
              "Zhao et al. 2023 (PyTorch FSDP: flat parameters padded to a multiple of D, gathered per layer and "
              "freed after use); the Ultra-Scale Playbook (Hugging Face, 2025), ZeRO. The factor K is this lab's: "
              "a gradient kept as a shard is reduce-scattered once per micro-batch, and stage 3 gathers each layer "
              "again for every micro-batch.",
        "zh": "Ψ 为参数量；p、g、k 为参数、梯度、优化器状态每个参数的字节数；策略对 x 分片时 D_x = D，否则为 1；"
              "K 为每步的微批次数。float32：p = g = 4，Adam 的两个矩 k = 8（SGD 为 0）。混合精度（ZeRO §3）："
              "bfloat16 的 p = g = 2，k = 12，即 float32 主副本（4）加 Adam 的矩（8）：2Ψ + 2Ψ + 12Ψ = 16Ψ。"
              "C 是环上每台设备每步发送的字节数（S 字节的数组：全归约 2(D−1)/D·S，全收集与归约散射 (D−1)/D·S）。"
              "来源：Rajbhandari 等 2020（ZeRO）：§3（模型状态，16Ψ），§5（三个阶段），§7.1（数据并行：2Ψ），"
              "§7.2（第 1、2 阶段：对梯度归约散射、全收集参数，2Ψ；第 3 阶段：前向之前全收集，反向之前再全收集，"
              "然后归约散射，3Ψ）；Zhao 等 2023（PyTorch FSDP：扁平参数补齐到 D 的倍数，按层收集，用完即释放）；"
              "Ultra-Scale Playbook（Hugging Face，2025）ZeRO 一节。因子 K 是本实验的计法：以分片形式保存的梯度"
              "每个微批次归约散射一次，第 3 阶段每个微批次都重新收集每一层。",
    },
    "lab_vs_paper": {
        "en": "What this lab measures that the paper does not: it trains in float32 unless you choose mixed "
              "precision (the paper's figures are mixed precision's), and a backend may compile a bfloat16 "
              "collective as float32 (XLA's CPU backend does): the page then shows the bytes of the program as JAX "
              "emitted it beside the compiled ones.",
        "zh": "本实验与论文所测不同之处：除非选择混合精度，本实验用 float32 训练（论文的数字是混合精度的）；"
              "后端可能把 bfloat16 集合通信编译成 float32（XLA 的 CPU 后端就是如此）：此时页面把 JAX 生成的程序的"
              "字节数与编译后的并列显示。",
    },
    "w.strategy": {"en": "Strategy", "zh": "策略"},
    "w.strategy.dp": {"en": "dp (replicated)", "zh": "dp（全部复制）"},
    "w.strategy.zero1": {"en": "ZeRO-1", "zh": "ZeRO-1"},
    "w.strategy.zero2": {"en": "ZeRO-2", "zh": "ZeRO-2"},
    "w.strategy.zero3": {"en": "ZeRO-3 (FSDP)", "zh": "ZeRO-3（FSDP）"},
    "w.optimizer": {"en": "Optimizer", "zh": "优化器"},
    "w.optimizer.sgd": {"en": "SGD", "zh": "SGD"},
    "w.optimizer.adam": {"en": "Adam", "zh": "Adam"},
    "w.precision": {"en": "Precision", "zh": "精度"},
    "w.precision.float32": {"en": "float32", "zh": "float32"},
    "w.precision.mixed": {"en": "mixed precision (bfloat16, float32 master)",
                          "zh": "混合精度（bfloat16，float32 主副本）"},
    "w.grad_dtype": {"en": "Gradient dtype (communication)", "zh": "梯度数据类型（通信）"},
    "w.compare": {"en": "Also train a second run", "zh": "同时训练第二次运行"},
    "w.compare.help": {"en": "In float32, the other gradient dtype; in mixed precision, float32 throughout. Two runs "
                             "on the same data: their loss curves side by side.",
                       "zh": "float32 下用另一种梯度数据类型；混合精度下全程用 float32。在相同数据上运行两次："
                             "并排显示它们的损失曲线。"},
    "mixed.grad_dtype": {
        "en": "Mixed precision computes and sends bfloat16 gradients: the gradient dtype setting applies to float32 "
              "runs.",
        "zh": "混合精度计算并发送 bfloat16 梯度：梯度数据类型设置只作用于 float32 运行。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.accum": {"en": "Accumulation steps K", "zh": "累积步数 K"},
    "w.accum.help": {"en": "Micro-batches per device per step (gradient accumulation).",
                     "zh": "每台设备每步的微批次数（梯度累积）。"},
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.steps": {"en": "Steps", "zh": "步数"},
    "w.hidden": {"en": "MLP hidden width (model size)", "zh": "MLP 隐藏层宽度（模型规模）"},
    "w.features": {"en": "Input features", "zh": "输入特征数"},
    "w.lr": {"en": "Learning rate η", "zh": "学习率 η"},
    "w.measure_max": {"en": "Measure up to D", "zh": "测量到 D"},
    "w.measure_max.help": {"en": "The ladder 1, 2, 4, … up to this D, and the chosen D, that the measure button runs.",
                           "zh": "测量按钮运行的设备数：1、2、4……直到此 D，再加上所选的 D。"},
    "w.budget_gb": {"en": "Memory budget per device (GB)", "zh": "每台设备的内存预算（GB）"},
    "per_device": {
        "en": "B = {batch} samples, D = {devices}: {per} samples on each device per step.",
        "zh": "B = {batch} 个样本，D = {devices}：每台设备每步 {per} 个样本。",
    },
    "per_device.accum": {
        "en": "B = {batch} samples over D = {devices} devices in K = {k} micro-batches: {micro} samples per "
              "micro-batch on each device.",
        "zh": "B = {batch} 个样本分到 D = {devices} 台设备、K = {k} 个微批次：每台设备每个微批次 {micro} 个样本。",
    },
    "button.train": {"en": "▶️ Train", "zh": "▶️ 训练"},
    "button.measure": {"en": "📏 Measure all strategies", "zh": "📏 测量全部策略"},
    "button.measure.help": {"en": "A short run of each strategy, in float32 and in mixed precision, at D = {counts}.",
                            "zh": "每种策略在 float32 与混合精度下、在 D = {counts} 上各做一次短运行。"},
    "progress.compiling": {"en": "Compiling…", "zh": "正在编译……"},
    "progress.steps": {"en": "Step {done} of {total} ({run})", "zh": "第 {done} / {total} 步（{run}）"},
    "progress.measure": {"en": "Run {done} of {total}", "zh": "第 {done} / {total} 次运行"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss", "zh": "损失"},
    "axis.run": {"en": "run", "zh": "运行"},
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
        "en": "The run in {dtype}, recorded in MLflow (its id, then the store); compare it on the Experiments page:",
        "zh": "{dtype} 的运行已记录到 MLflow（先是运行 ID，后是存储）；可在“实验对比”页比较：",
    },
    "run.float32": {"en": "float32 with {dtype} gradients", "zh": "float32、{dtype} 梯度"},
    "run.mixed": {"en": "mixed precision (bfloat16 parameters and gradients, float32 master copy)",
                  "zh": "混合精度（bfloat16 参数与梯度，float32 主副本）"},
    "kind.params": {"en": "parameters", "zh": "参数"},
    "kind.grads": {"en": "gradients", "zh": "梯度"},
    "kind.optimizer": {"en": "optimizer state", "zh": "优化器状态"},
    "kind.comm": {"en": "sent per step", "zh": "每步发送"},
    "col.figure": {"en": "per device (bytes)", "zh": "每台设备（字节）"},
    "col.measured": {"en": "measured", "zh": "实测"},
    "col.model": {"en": "model", "zh": "模型"},
    "col.ratio": {"en": "measured / model", "zh": "实测 / 模型"},
    "col.strategy": {"en": "strategy", "zh": "策略"},
    "col.precision": {"en": "precision", "zh": "精度"},
    "col.formula": {"en": "bytes per parameter, formula", "zh": "每参数字节数（公式）"},
    "col.formula_bytes": {"en": "formula", "zh": "公式值"},
    "col.measured_bytes": {"en": "measured", "zh": "实测"},
    "col.saving_measured": {"en": "dp / this, measured", "zh": "dp / 本策略（实测）"},
    "col.saving_formula": {"en": "dp / this, formula", "zh": "dp / 本策略（公式）"},
    "col.memory_formula": {"en": "bytes held per device", "zh": "每台设备持有的字节数"},
    "col.comm_formula": {"en": "bytes sent per step", "zh": "每步发送的字节数"},
    "col.source": {"en": "source", "zh": "来源"},
    "col.hlo": {"en": "compiled HLO: sent per step, by collective", "zh": "编译后的 HLO：每步按集合通信发送的字节数"},
    "col.sent": {"en": "sent (compiled)", "zh": "发送（编译后）"},
    "col.emitted": {"en": "sent (as emitted)", "zh": "发送（JAX 生成的程序）"},
    "col.model_sent": {"en": "sent (formula)", "zh": "发送（公式）"},
    "col.padding": {"en": "padding (bytes)", "zh": "补零（字节）"},
    "col.peak": {"en": "peak (bytes)", "zh": "峰值（字节）"},
    "col.bytes_per_param": {"en": "measured bytes per parameter", "zh": "实测每参数字节数"},
    "col.model_bytes_per_param": {"en": "model bytes per parameter", "zh": "模型每参数字节数"},
    "col.largest_measured_b": {"en": "largest Ψ, measured (billions)", "zh": "最大 Ψ，实测（十亿）"},
    "col.largest_model_b": {"en": "largest Ψ, model (billions)", "zh": "最大 Ψ，模型（十亿）"},
    "result.heading": {"en": "{strategy} on D = {devices}: Ψ = {psi:,} parameters, K = {accum}, {run}",
                       "zh": "{strategy}，D = {devices}：Ψ = {psi:,} 个参数，K = {accum}，{run}"},
    "compare.losses": {
        "en": "Final loss after {steps} steps: {first:.6g} in {first_run}, {second:.6g} in {second_run} (relative "
              "difference {diff:.2e}).",
        "zh": "{steps} 步后的最终损失：{first_run} 为 {first:.6g}，{second_run} 为 {second:.6g}（相对差 {diff:.2e}）。",
    },
    "one_device": {
        "en": "D = 1: one device, so nothing is sharded and nothing is sent (every collective of this step carries "
              "0 bytes). It holds {total:,.0f} bytes for its {psi:,} parameters.",
        "zh": "D = 1：只有一台设备，因此没有任何分片，也不发送任何数据（这一步的每个集合通信都是 0 字节）。"
              "它为 {psi:,} 个参数持有 {total:,.0f} 字节。",
    },
    "held.dp": {
        "en": "dp holds every buffer whole: {padding:,} bytes of padding.",
        "zh": "dp 完整持有每个缓冲区：补零 {padding:,} 字节。",
    },
    "held.padding": {
        "en": "Padding: {padding:,} bytes of zeros among the parameters this device holds, so that each layer's flat "
              "buffer splits into D = {devices} equal shards.",
        "zh": "补零：本设备持有的参数中有 {padding:,} 字节的零，使每一层的扁平缓冲区能分成 D = {devices} 个相等的分片。",
    },
    "held.peak": {
        "en": "Peak: {peak:,} bytes on one device during a call of the compiled chunk, from "
              "`compiled.memory_analysis()`: its arguments ({args:,} bytes: the training state it holds and its rows "
              "of the batch), its outputs not written over them ({outputs:,}) and the compiler's temporaries "
              "({temps:,}: activations, gathered layers, gradients).",
        "zh": "峰值：调用一次编译后的程序块时一台设备的字节数 {peak:,}，来自 `compiled.memory_analysis()`："
              "它的输入（{args:,} 字节：它持有的训练状态和它那几行批次数据）、没有写回输入位置的输出（{outputs:,}）"
              "以及编译器的临时缓冲区（{temps:,}：激活值、收集来的层、梯度）。",
    },
    "held.no_peak": {
        "en": "This backend reports no memory figures for the compiled step, so no peak is shown.",
        "zh": "本后端没有报告编译后步骤的内存数字，因此不显示峰值。",
    },
    "sent.line": {
        "en": "What a step sent per device, read from the compiled HLO: {parts} = {total:,.0f} bytes. The formula "
              "{formula} gives {model:,.0f} bytes ({source}).",
        "zh": "从编译后的 HLO 读出的每台设备每步发送量：{parts} = {total:,.0f} 字节。公式 {formula} 给出 "
              "{model:,.0f} 字节（{source}）。",
    },
    "sent.widened": {
        "en": "This backend compiled these collectives as {compiled} where JAX emitted {emitted}: as emitted, the "
              "step sends {emitted_bytes:,.0f} bytes, beside the formula's {model:,.0f}.",
        "zh": "本后端把这些集合通信编译成 {compiled}，而 JAX 生成的是 {emitted}：按生成的程序，这一步发送 "
              "{emitted_bytes:,.0f} 字节，公式为 {model:,.0f}。",
    },
    "sent.gathers": {
        "en": "ZeRO-3 here: {instructions:g} all-gathers per step for {layers} layers and K = {k}, gathering "
              "{times:.3g}× the {padded:,.0f} padded parameters: each layer is gathered just before its forward "
              "pass and again before its backward pass, and only its shard is kept in between.",
        "zh": "这里的 ZeRO-3：{layers} 层、K = {k} 时每步 {instructions:g} 次全收集，收集量是补零后 {padded:,.0f} "
              "个参数的 {times:.3g} 倍：每一层在前向之前收集一次，反向之前再收集一次，其间只保留自己的分片。",
    },
    "sent.gathers.other": {
        "en": "ZeRO-3 here: {instructions:g} all-gathers per step for {layers} layers and K = {k}, gathering "
              "{times:.3g}× the {padded:,.0f} padded parameters.",
        "zh": "这里的 ZeRO-3：{layers} 层、K = {k} 时每步 {instructions:g} 次全收集，收集量是补零后 {padded:,.0f} "
              "个参数的 {times:.3g} 倍。",
    },
    "accum.heading": {"en": "Gradient accumulation", "zh": "梯度累积"},
    "accum.none": {
        "en": "K = 1: each device computes one gradient on its {per} samples per step, with no micro-batch loop.",
        "zh": "K = 1：每台设备每步在它的 {per} 个样本上计算一个梯度，没有微批次循环。",
    },
    "accum.measured": {
        "en": "K = {k}: each device runs {k} micro-batches of {micro} samples (instead of one batch of {per}) "
              "in a `lax.scan`, adding up their gradients.",
        "zh": "K = {k}：每台设备在 `lax.scan` 中运行 {k} 个各 {micro} 个样本的微批次（而不是一个 {per} 个样本的批次），"
              "并把它们的梯度相加。",
    },
    "accum.one_device": {
        "en": "On one device its {reductions:g} all-reduce and reduce-scatter instructions per step carry 0 bytes.",
        "zh": "只有一台设备时，它每步的 {reductions:g} 条全归约与归约散射指令都是 0 字节。",
    },
    "accum.after_loop": {
        "en": "The compiled step runs {reductions:g} all-reduce and reduce-scatter instructions per step, after the "
              "micro-batch loop: the gradient collective runs once per step.",
        "zh": "编译后的步骤每步运行 {reductions:g} 条全归约与归约散射指令，都在微批次循环之后：梯度集合通信每步一次。",
    },
    "accum.in_loop": {
        "en": "The compiled step runs {reductions:g} all-reduce and reduce-scatter instructions per step, inside the "
              "micro-batch loop: each micro-batch's gradient is reduced as it is made.",
        "zh": "编译后的步骤每步运行 {reductions:g} 条全归约与归约散射指令，位于微批次循环之内：每个微批次的梯度一算出就归约。",
    },
    "grad.holds.whole": {
        "en": "Each device holds {grad:,} bytes of gradient: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes), so the whole of it.",
        "zh": "每台设备持有 {grad:,} 字节的梯度：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍，"
              "即完整的梯度。",
    },
    "grad.holds.shard": {
        "en": "Each device holds {grad:,} bytes of gradient: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes), about 1/D of it: its own shard of the sum over devices.",
        "zh": "每台设备持有 {grad:,} 字节的梯度：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍，"
              "约为它的 1/D：各设备之和中属于自己的分片。",
    },
    "grad.holds.part": {
        "en": "Each device holds {grad:,} bytes of gradient: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes).",
        "zh": "每台设备持有 {grad:,} 字节的梯度：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍。",
    },
    "accum.holds.whole": {
        "en": "The accumulator holds {grad:,} bytes per device: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes), so each device keeps the whole sum of its micro-batches' gradients.",
        "zh": "累加器每台设备 {grad:,} 字节：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍，"
              "即每台设备保存其各微批次梯度之和的全部。",
    },
    "accum.holds.shard": {
        "en": "The accumulator holds {grad:,} bytes per device: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes), about 1/D of it: each device keeps only its shard of the sum over devices.",
        "zh": "累加器每台设备 {grad:,} 字节：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍，"
              "约为它的 1/D：每台设备只保存各设备之和中属于自己的分片。",
    },
    "accum.holds.part": {
        "en": "The accumulator holds {grad:,} bytes per device: {ratio:.3g}× a whole gradient of Ψ = {psi:,} values "
              "({whole:,.0f} bytes).",
        "zh": "累加器每台设备 {grad:,} 字节：是 Ψ = {psi:,} 个值的完整梯度（{whole:,.0f} 字节）的 {ratio:.3g} 倍。",
    },
    "accum.hint": {
        "en": "Set K above 1 to split each device's batch into micro-batches and see what the accumulator holds.",
        "zh": "把 K 设为大于 1，把每台设备的批次分成微批次，看看累加器持有什么。",
    },
    "accum.explain": {
        "en": "What it buys: activations are those of one micro-batch of {micro} samples, not of {batch}/{devices}, "
              "so a global batch that does not fit in device memory still trains. What it costs: the {k} "
              "micro-batches run one after another, so a step takes about {k}× the compute of one micro-batch. The "
              "mean over the K micro-batches is the gradient of the whole global batch B = {batch}, so the same "
              "learning rate gives the same step as without accumulation. If you use accumulation to grow B "
              "instead, the learning rate usually grows with it (SGD: the linear scaling rule with warm-up, Goyal "
              "et al. 2017).",
        "zh": "它带来的好处：激活值只是一个 {micro} 个样本的微批次的，而不是 {batch}/{devices} 个样本的，"
              "因此放不进设备内存的全局批次也能训练。它的代价：{k} 个微批次依次运行，一步大约需要一个微批次 {k} 倍的计算。"
              "K 个微批次上的平均就是整个全局批次 B = {batch} 的梯度，所以相同的学习率给出与不累积时相同的一步。"
              "若用累积来增大 B，学习率通常随之增大（SGD：带预热的线性缩放规则，Goyal 等 2017）。",
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
              "{optimizer}, global batch {batch}, K = {k}, at D = {counts} (the D that split the batch evenly), in "
              "float32 and in mixed precision. Bytes sent, the table per strategy and the largest "
              "model are for {run}.",
        "zh": "每个点是 MLP 的一次短运行（Ψ = {psi:,} 个参数：{features} 个输入、{hidden} 个隐藏单元），{optimizer}，"
              "全局批次 {batch}，K = {k}，D = {counts}（能把批次均分的 D），分别用 float32 与混合精度。"
              "发送字节数、各策略的表和最大模型对应的是 {run}。",
    },
    "chart.memory": {"en": "Bytes per device by kind (bars: measured; ◆: formula)",
                     "zh": "每台设备按类别的字节数（柱：实测；◆：公式）"},
    "chart.memory.note": {
        "en": "Bars: bytes read from each run's arrays. ◆: Ψ(p/D_p + g/D_g + k/D_k) with the row's p, g and k. A "
              "sharded part is 1/D of each layer's buffer after padding it with zeros to a multiple of D; the "
              "padding per device is in the table below.",
        "zh": "柱：从每次运行的数组读出的字节数。◆：用该行的 p、g、k 计算的 Ψ(p/D_p + g/D_g + k/D_k)。"
              "分片部分是每层缓冲区用零补齐到 D 的倍数之后的 1/D；每台设备的补零量见下表。",
    },
    "chart.comm": {"en": "Bytes sent per device per step (solid: measured; dashed: model)",
                   "zh": "每台设备每步发送的字节数（实线：实测；虚线：模型）"},
    "series.measured": {"en": "measured (compiled)", "zh": "实测（编译后）"},
    "series.emitted": {"en": "as JAX emitted it", "zh": "JAX 生成的程序"},
    "series.model": {"en": "model", "zh": "模型"},
    "all.one_device": {
        "en": "At D = 1 (one device) nothing is sharded or sent: in {precision} every strategy held the same "
              "{total:,.0f} bytes.",
        "zh": "D = 1（一台设备）时没有任何分片，也不发送数据：{precision} 下每种策略都持有相同的 {total:,.0f} 字节。",
    },
    "all.worst": {
        "en": "Largest gap between measurement and model: {strategy} at D = {devices}, {figure}, measured / model "
              "= {ratio:.3g}.",
        "zh": "实测与模型差距最大处：{strategy}，D = {devices}，{figure}，实测 / 模型 = {ratio:.3g}。",
    },
    "all.worst.widened": {
        "en": "Its collectives were compiled wider than JAX emitted them; as emitted, measured / model = {ratio:.3g}.",
        "zh": "它的集合通信编译后比 JAX 生成的更宽；按生成的程序，实测 / 模型 = {ratio:.3g}。",
    },
    "ratio.param": {"en": "parameters", "zh": "参数"},
    "ratio.grad": {"en": "gradients", "zh": "梯度"},
    "ratio.opt": {"en": "optimizer state", "zh": "优化器状态"},
    "ratio.comm": {"en": "bytes sent per step", "zh": "每步发送字节数"},
    "bpp.heading": {"en": "Bytes per parameter at D = {devices}: both precisions against ZeRO's formulas",
                    "zh": "D = {devices} 时的每参数字节数：两种精度与 ZeRO 公式对照"},
    "bpp.why": {
        "en": "Why float32 ZeRO-1 saves at most 2× where the paper's saves up to 4×: with Adam, ZeRO-1 shards only "
              "the optimizer state, and the parameters and gradients, which stay replicated, are 8 of float32's 16 "
              "bytes per parameter (16 → 8 + 8/D) but only 4 of mixed precision's 16 (16 → 4 + 12/D).",
        "zh": "为什么 float32 的 ZeRO-1 最多省 2 倍，而论文的能省到 4 倍：用 Adam 时 ZeRO-1 只对优化器状态分片，"
              "仍是副本的参数和梯度在 float32 的每参数 16 字节中占 8 字节（16 → 8 + 8/D），"
              "在混合精度的 16 字节中只占 4 字节（16 → 4 + 12/D）。",
    },
    "bpp.measured": {
        "en": "Measured at D = {devices} with {optimizer}: ZeRO-1 held {f32:.3g} bytes per parameter in float32 "
              "against dp's {f32_dp:.3g} ({f32_x:.2f}× less), and {mixed:.3g} in mixed precision against dp's "
              "{mixed_dp:.3g} ({mixed_x:.2f}× less).",
        "zh": "在 D = {devices}、{optimizer} 下实测：float32 时 ZeRO-1 每参数持有 {f32:.3g} 字节，dp 为 {f32_dp:.3g}"
              "（少 {f32_x:.2f} 倍）；混合精度时为 {mixed:.3g}，dp 为 {mixed_dp:.3g}（少 {mixed_x:.2f} 倍）。",
    },
    "bpp.one_device": {
        "en": "At D = 1 (one device) nothing is sharded: every strategy held {f32:.3g} bytes per parameter in "
              "float32 and {mixed:.3g} in mixed precision.",
        "zh": "D = 1（一台设备）时没有任何分片：每种策略在 float32 下每参数持有 {f32:.3g} 字节，"
              "在混合精度下 {mixed:.3g} 字节。",
    },
    "strategies.heading": {"en": "What each strategy holds and sends at D = {devices} ({run})",
                           "zh": "D = {devices} 时每种策略持有与发送的内容（{run}）"},
    "strategies.note": {
        "en": "Formulas and sources beside what each compiled step sent per device (bytes, by collective). Peak: "
              "one device's bytes during a call of the compiled chunk, from `compiled.memory_analysis()`: its "
              "arguments, its outputs not written over them, and the compiler's temporaries.",
        "zh": "公式与来源，旁边是每个编译后的步骤每台设备发送的字节数（按集合通信）。峰值：调用一次编译后的程序块时"
              "一台设备的字节数，来自 `compiled.memory_analysis()`：它的输入、没有写回输入位置的输出，以及编译器的临时缓冲区。",
    },
    "strategies.one_device": {
        "en": "D = 1: one device, so nothing is sharded or sent; every collective of these steps carries 0 bytes.",
        "zh": "D = 1：只有一台设备，因此没有任何分片，也不发送数据；这些步骤的每个集合通信都是 0 字节。",
    },
    "strategies.sent": {
        "en": "Against dp's {dp:,.0f} bytes per step at D = {devices}: ZeRO-1 sent {zero1:.3f}×, ZeRO-2 "
              "{zero2:.3f}× and ZeRO-3 {zero3:.3f}×.",
        "zh": "D = {devices} 时 dp 每步发送 {dp:,.0f} 字节；与之相比，ZeRO-1 为 {zero1:.3f} 倍，ZeRO-2 为 "
              "{zero2:.3f} 倍，ZeRO-3 为 {zero3:.3f} 倍。",
    },
    "strategies.peak": {
        "en": "Peak at D = {devices}: ZeRO-3 {zero3:,} bytes per device against dp's {dp:,} ({ratio:.2f}×).",
        "zh": "D = {devices} 时的峰值：ZeRO-3 每台设备 {zero3:,} 字节，dp 为 {dp:,}（{ratio:.2f} 倍）。",
    },
    "strategies.widened": {
        "en": "This backend compiled the collectives as {compiled} where JAX emitted {emitted}: dp sent "
              "{dp:,.0f} bytes per step as compiled, {dp_emitted:,.0f} as emitted, and the formula counts "
              "{dp_model:,.0f}.",
        "zh": "本后端把集合通信编译成 {compiled}，而 JAX 生成的是 {emitted}：dp 每步按编译后的程序发送 {dp:,.0f} "
              "字节，按生成的程序为 {dp_emitted:,.0f}，公式为 {dp_model:,.0f}。",
    },
    "fit.heading": {"en": "The largest model that fits {budget:g} GB per device at D = {devices} ({run})",
                    "zh": "D = {devices} 时每台设备 {budget:g} GB 能放下的最大模型（{run}）"},
    "fit.note": {
        "en": "Parameters, gradients and optimizer state only: activations, temporary buffers and the gathered "
              "layers of ZeRO-3 need room too (the peak column above counts them for this model). Measured bytes "
              "per parameter come from the runs above.",
        "zh": "只计参数、梯度和优化器状态：激活值、临时缓冲区以及 ZeRO-3 收集来的层也需要空间（上表的峰值一列计入了"
              "本模型的这些部分）。实测的每参数字节数来自上面的运行。",
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
