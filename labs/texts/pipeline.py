TEXTS = {
    "title": {"en": "Pipeline parallelism: GPipe and 1F1B", "zh": "流水线并行：GPipe 与 1F1B"},
    "summary": {
        "en": "A deeper MLP's layers in stages, one per device, micro-batches passed along with ppermute: the "
              "schedule of GPipe and 1F1B drawn slot by slot, the bubble counted from it, step time and peak "
              "memory measured.",
        "zh": "把更深的 MLP 的各层分成若干阶段，每台设备一个阶段，微批次用 ppermute 依次传递：逐个时间槽画出 GPipe 与 1F1B "
              "的排程，从中数出气泡，并实测单步时间与峰值内存。",
    },
    "intro": {
        "en": "Tensor parallelism splits every layer; pipeline parallelism gives each device whole layers. The "
              "MLP's L layers (a tanh layer, then residual layers h + tanh(hW + b)/L, which keep SGD at η = 0.1 "
              "stable at depth, then the output layer) are cut into P stages of L/P layers, stage s on device s of "
              "a `stage` mesh axis. A "
              "stage can only start on a batch once the stage before it has finished, so the global batch is cut "
              "into M micro-batches: while stage 1 runs micro-batch 0, stage 0 already runs micro-batch 1. The "
              "activations go forward to the next stage and their gradients back to the previous one with "
              "`lax.ppermute` inside `jax.shard_map`. At the start and the end of every step some stages have "
              "nothing to do: that idle time is the bubble. GPipe (Huang et al. 2019) runs every forward, then "
              "every backward, the last micro-batch's first; 1F1B (PipeDream-Flush, Narayanan et al. 2021) "
              "alternates one forward and one backward once the pipeline is full. Both take 2(M + P − 1) time "
              "slots, so their bubble is the same; 1F1B finishes each micro-batch's backward sooner, so a stage "
              "keeps the inputs of at most P micro-batches instead of M.",
        "zh": "张量并行切分每一层；流水线并行让每台设备拿到完整的若干层。MLP 的 L 层（一个 tanh 层，然后是残差层 "
              "h + tanh(hW + b)/L，它们让 η = 0.1 的 SGD 在层数加深时保持稳定，最后是输出层）被切成 P 个阶段，每个阶段 L/P 层，"
              "阶段 s 位于 `stage` 网格轴上的设备 s。一个阶段必须等前一阶段做完才能处理一批数据，所以全局批次被切成 M 个"
              "微批次：阶段 1 处理微批次 0 的同时，阶段 0 已经在处理微批次 1。激活值用 `jax.shard_map` 中的 "
              "`lax.ppermute` 前传给下一阶段，它们的梯度回传给上一阶段。每一步的开头和结尾，总有一些阶段无事可做：这段空闲"
              "时间就是气泡。GPipe（Huang 等 2019）先做完所有前向，再做所有反向，最后一个微批次的反向最先做；1F1B"
              "（PipeDream-Flush，Narayanan 等 2021）在流水线填满后一次前向、一次反向交替进行。两者都用 2(M + P − 1) 个"
              "时间槽，所以气泡相同；1F1B 更早做完每个微批次的反向，因此一个阶段最多保存 P 个微批次的输入，而不是 M 个。",
    },
    "formulas": {
        "en": "P stages, M micro-batches, one time unit per forward and per backward of one micro-batch on one stage; "
              "t_f and t_b the time of a forward and of a backward (with the forward it recomputes). T_async is "
              "the papers' step, each device starting its next work as soon as its input arrives; T_lockstep is "
              "this program's, which runs the table slot by slot, every slot ending with every device's ppermute, "
              "so a slot lasts its slowest work: n_B slots hold a backward, n_F only forwards, counted from the "
              "table. Sources: Huang et al. 2019 (GPipe) §2.3, the bubble O((P − 1)/(M + P − 1)) of the step, the "
              "backwards in reverse and the re-materialization (a stage keeps only its input per micro-batch); "
              "Narayanan et al. 2021 (PipeDream-Flush), 1F1B (its order first in PipeDream, Narayanan et al. "
              "2019); the Ultra-Scale Playbook (Tazi et al., Hugging Face, 2025), \"Pipeline parallelism\": the "
              "bubble over the ideal time, (p − 1)/m, and 1F1B's p micro-batches of activations; the Scaling Book "
              "(Austin et al. 2025), Part 5 \"Training\", \"Pipelining\".",
        "zh": "P 个阶段，M 个微批次，一个阶段对一个微批次的一次前向或一次反向各占一个时间单位；t_f 与 t_b 分别是一次前向"
              "和一次反向（含它重算的前向）的时间。T_async 是论文中的一步：每台设备一收到输入就开始下一份工作；T_lockstep "
              "是本程序的一步：它逐个时间槽执行排程表，每个时间槽都以所有设备的 ppermute 结束，所以一个时间槽持续到其中"
              "最慢的工作做完：n_B 个时间槽含有反向，n_F 个只有前向，均数自排程表。来源：Huang 等 2019（GPipe）§2.3，"
              "气泡占一步的 O((P − 1)/(M + P − 1))、反向按逆序进行，以及重计算（一个阶段对每个微批次只保存它的输入）；"
              "Narayanan 等 2021（PipeDream-Flush），1F1B（这种顺序最早见于 PipeDream，Narayanan 等 2019）；Ultra-Scale Playbook（Tazi 等，"
              "Hugging Face，2025）“Pipeline parallelism”：气泡与理想时间之比 (p − 1)/m，以及 1F1B 保存 p 个微批次的"
              "激活值；Scaling Book（Austin 等 2025）第 5 部分“Training”中的“Pipelining”。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.stages": {"en": "Stages P (one per device)", "zh": "阶段数 P（每台设备一个）"},
    "w.layers": {"en": "Layers L", "zh": "层数 L"},
    "w.microbatches": {"en": "Micro-batches M", "zh": "微批次数 M"},
    "w.schedule": {"en": "Schedule", "zh": "排程"},
    "w.schedule.gpipe": {"en": "GPipe (all forwards, then all backwards)", "zh": "GPipe（先全部前向，再全部反向）"},
    "w.schedule.1f1b": {"en": "1F1B (one forward, one backward)", "zh": "1F1B（一次前向，一次反向）"},
    "w.rows": {"en": "Rows per micro-batch b", "zh": "每个微批次的行数 b"},
    "w.rows.help": {
        "en": "The global batch is M·b: a measurement at another M keeps b, so each slot's work stays the same.",
        "zh": "全局批次为 M·b：在另一个 M 上测量时 b 不变，所以每个时间槽的工作量保持不变。",
    },
    "w.hidden": {"en": "Hidden width H", "zh": "隐藏宽度 H"},
    "w.guess": {
        "en": "Your prediction: which schedule's compiled program peaks at fewer bytes on one device?",
        "zh": "你的预测：哪种排程编译后的程序在单台设备上的峰值字节数更少？",
    },
    "guess.gpipe": {"en": "GPipe", "zh": "GPipe"},
    "guess.1f1b": {"en": "1F1B", "zh": "1F1B"},
    "guess.same": {"en": "the same", "zh": "相同"},
    "one_device": {
        "en": "D = 1: one stage holds every layer, so there is no pipeline and no bubble (P − 1 = 0). Pipeline "
              "parallelism needs at least 2 devices, and data parallelism beside it needs 2P; start the lab with "
              "more devices (`PMAP_LAB_DEVICES=8`) or pick a larger D above if this server has them. The schedule "
              "and the measurements below still run, on one stage.",
        "zh": "D = 1：一个阶段持有全部层，因此没有流水线，也没有气泡（P − 1 = 0）。流水线并行至少需要 2 台设备，再加上数据"
              "并行则需要 2P 台；请用更多设备启动本实验（`PMAP_LAB_DEVICES=8`），或者若本服务器有更多设备，在上方选择更大"
              "的 D。下面的排程和测量仍会运行，只有一个阶段。",
    },
    "per_stage": {
        "en": "Each of the {stages} devices holds {per} of the {layers} layers; one step runs the global batch of "
              "{batch} rows as {micro} micro-batches of {rows} rows.",
        "zh": "{stages} 台设备中的每一台持有 {layers} 层中的 {per} 层；每一步把 {batch} 行的全局批次分成 {micro} 个"
              "微批次运行，每个微批次 {rows} 行。",
    },
    "schedule.heading": {"en": "The schedule, slot by slot", "zh": "排程，逐个时间槽"},
    "schedule.explain": {
        "en": "Counted from the table the compiled step follows (`schedule_table`): {slots} time slots per step, "
              "each device busy in {busy} of them (M forwards, M backwards) and idle in {idle_per_device}. F3 is "
              "the forward of micro-batch 3, B3 its backward. The compiled step runs the table in lockstep, so a "
              "slot lasts as long as its slowest work: {backward_slots} of the {slots} slots hold a backward and "
              "{forward_slots} only forwards (n_B and n_F).",
        "zh": "数自编译后的步骤所遵循的表（`schedule_table`）：每步 {slots} 个时间槽，每台设备在其中 {busy} 个时间槽忙碌"
              "（M 次前向、M 次反向），{idle_per_device} 个时间槽空闲。F3 表示微批次 3 的前向，B3 表示它的反向。编译后的"
              "步骤逐槽同步地执行排程表，所以一个时间槽持续到其中最慢的工作做完：{slots} 个时间槽中有 {backward_slots} "
              "个含有反向，{forward_slots} 个只有前向（n_B 与 n_F）。",
    },
    "metric.bubble": {"en": "Bubble (counted)", "zh": "气泡（数出）"},
    "metric.formula": {"en": "(P − 1)/(M + P − 1)", "zh": "(P − 1)/(M + P − 1)"},
    "metric.playbook": {"en": "Idle over busy, (P − 1)/M", "zh": "空闲与忙碌之比 (P − 1)/M"},
    "metric.kept": {"en": "Most micro-batches' inputs kept", "zh": "最多保存的微批次输入数"},
    "schedule.kept": {
        "en": "Micro-batches kept: the inputs (the activations the previous stage sent) a device holds at once, "
              "from their arrival to its backward, at most, by device: {counts}. Device 0 keeps none: its "
              "backward recomputes its forward from its rows of the batch. {schedule_name} keeps at most {most} of "
              "the {micro} micro-batches on one device.",
        "zh": "保存的微批次：一台设备同时持有的输入（上一个阶段发来的激活值），从到达起直到它自己的反向，按设备列出最多"
              "个数：{counts}。设备 0 不保存任何输入：它的反向从它那几行批次数据重算前向。{schedule_name} 在一台设备上最多"
              "保存 {micro} 个微批次中的 {most} 个。",
    },
    "schedule.kept_one_stage": {
        "en": "Micro-batches kept: {counts}. With one stage no device receives an input: device 0's backward "
              "recomputes its forward from its rows of the batch, so {schedule_name} keeps {most} of the {micro} "
              "micro-batches' inputs.",
        "zh": "保存的微批次：{counts}。只有一个阶段时，没有设备会收到输入：设备 0 的反向从它那几行批次数据重算前向，所以 "
              "{schedule_name} 保存 {micro} 个微批次输入中的 {most} 个。",
    },
    "chart.timeline": {"en": "Who runs what, in each time slot", "zh": "每个时间槽中谁在运行什么"},
    "axis.slot": {"en": "time slot", "zh": "时间槽"},
    "axis.device": {"en": "device (stage)", "zh": "设备（阶段）"},
    "axis.kind": {"en": "work", "zh": "工作"},
    "kind.forward": {"en": "forward", "zh": "前向"},
    "kind.backward": {"en": "backward", "zh": "反向"},
    "kind.idle": {"en": "idle (bubble)", "zh": "空闲（气泡）"},
    "col.device": {"en": "device", "zh": "设备"},
    "data.heading": {"en": "Data parallelism on a second axis", "zh": "第二个轴上的数据并行"},
    "data.explain": {
        "en": "D = {devices} holds {replicas} pipelines of {stages} stages side by side on a data × stage mesh "
              "({used} devices, {unused} left over). Each pipeline takes 1/{replicas} of the global batch; after "
              "its last backward each stage all-reduces its gradient with the same stage of the other "
              "pipelines: {stage_bytes:,} bytes of its largest stage's parameters, {allreduce:,.0f} bytes sent "
              "per device per step on a ring, 2(X − 1)/X of them (Patarasuk and Yuan 2009, the ring all-reduce; "
              "the Scaling Book, Part 5). The bubble stays (P − 1)/(M + P − 1). These figures are the formula's: "
              "the prediction. Train the {replicas} pipelines below to read what the compiled program sends.",
        "zh": "D = {devices} 可以在 data × stage 网格上并排放下 {replicas} 条 {stages} 个阶段的流水线（用 {used} 台设备，"
              "剩下 {unused} 台）。每条流水线处理全局批次的 1/{replicas}；最后一次反向之后，每个阶段与其他流水线的同一阶段"
              "对梯度做全归约：最大阶段的参数为 {stage_bytes:,} 字节，环形全归约每台设备每步发送 {allreduce:,.0f} 字节，"
              "即其中的 2(X − 1)/X（Patarasuk 与 Yuan 2009，环形全归约；Scaling Book 第 5 部分）。气泡仍为 "
              "(P − 1)/(M + P − 1)。这些数值来自公式：这是预测。在下面训练这 {replicas} 条流水线，读出编译后的程序实际发送"
              "的字节。",
    },
    "data.none": {
        "en": "Data parallelism beside the pipeline needs D ≥ 2P: a second pipeline of P = {stages} stage(s) needs "
              "{needed} devices, and D is {devices}.",
        "zh": "在流水线旁再加数据并行需要 D ≥ 2P：第二条 P = {stages} 个阶段的流水线需要 {needed} 台设备，而 D 为 {devices}。",
    },
    "data.button": {"en": "Train the data × stage pipeline", "zh": "训练 data × stage 流水线"},
    "data.button.help": {
        "en": "Trains the pipelines side by side for a few steps, then data parallelism on the same devices and "
              "batch, and reads each mesh axis's bytes from the compiled program.",
        "zh": "先把这些流水线并排训练几步，再在相同的设备和批次上训练数据并行，并从编译后的程序中读出每个网格轴的字节数。",
    },
    "data.progress.pipeline": {
        "en": "Training {replicas} pipelines of {stages} stages…", "zh": "正在训练 {replicas} 条 {stages} 个阶段的流水线……",
    },
    "data.progress.data_parallel": {
        "en": "Training data parallelism on the same {used} devices…", "zh": "正在相同的 {used} 台设备上训练数据并行……",
    },
    "data.nothing_yet": {
        "en": "Press the button: the measured figures come from the pipelines trained here, beside the formula's.",
        "zh": "请点击按钮：实测数值来自在这里训练的流水线，与公式的数值并列。",
    },
    "data.measured": {
        "en": "Measured: {replicas} pipelines of {stages} stages trained for {steps} steps on {used} devices, the "
              "global batch of {batch} rows as {replicas} × {micro} micro-batches of {rows} rows. Bytes one device "
              "sends per step, read from the compiled program's HLO (each collective times the loops around it), "
              "beside the formula's prediction:",
        "zh": "实测：{replicas} 条 {stages} 个阶段的流水线在 {used} 台设备上训练了 {steps} 步，{batch} 行的全局批次分成 "
              "{replicas} × {micro} 个微批次，每个微批次 {rows} 行。单台设备每步发送的字节数，读自编译后程序的 HLO"
              "（每个集合通信乘以包围它的循环次数），与公式的预测并列：",
    },
    "metric.data_bytes": {"en": "Data-axis all-reduce (measured)", "zh": "data 轴全归约（实测）"},
    "metric.data_formula": {"en": "2(X − 1)/X × (stage + loss)", "zh": "2(X − 1)/X ×（阶段 + 损失）"},
    "metric.permute_bytes": {"en": "Stage-axis ppermute (measured)", "zh": "stage 轴 ppermute（实测）"},
    "metric.loss_gap": {"en": "Final loss: relative gap", "zh": "最终损失：相对差"},
    "data.bytes": {
        "en": "Over the data axis the compiled step runs {reductions:g} all-reduce(s) per step, carrying {shapes}: "
              "{measured:,.0f} bytes sent per device per step. The ring's formula, 2(X − 1)/X × the stage's "
              "{stage_bytes:,} parameter bytes (the largest stage's, which every stage's buffer is padded to), "
              "gives {grad:,.0f}, and the loss the same all-reduce carries {loss:,.0f}: {formula:,.0f} "
              "(Patarasuk and Yuan 2009; the Scaling Book, Part 5).",
        "zh": "在 data 轴上，编译后的步骤每步运行 {reductions:g} 次全归约，携带 {shapes}：每台设备每步发送 {measured:,.0f} "
              "字节。环形全归约的公式 2(X − 1)/X × 阶段的 {stage_bytes:,} 参数字节（最大阶段的，每个阶段的缓冲区都填充到"
              "这个大小）给出 {grad:,.0f}，同一次全归约携带的损失再加 {loss:,.0f}：共 {formula:,.0f}（Patarasuk 与 Yuan "
              "2009；Scaling Book 第 5 部分）。",
    },
    "data.permutes": {
        "en": "Over the stage axis it runs {permutes:g} collective-permutes per step, {measured:,.0f} bytes at most "
              "per device (an end stage has no neighbour on one side): 2 per slot (an activation forward, its "
              "gradient back) × {slots} slots (2(M + P − 1), counted from the table) × {rows} rows × H = {hidden} "
              "× 4 bytes = {formula:,}.",
        "zh": "在 stage 轴上，它每步运行 {permutes:g} 次 collective-permute，每台设备最多 {measured:,.0f} 字节（首末阶段"
              "有一侧没有相邻阶段）：每个时间槽 2 次（激活值前传、它的梯度回传）× {slots} 个时间槽（2(M + P − 1)，数自"
              "排程表）× {rows} 行 × H = {hidden} × 4 字节 = {formula:,}。",
    },
    "data.no_permutes": {
        "en": "With one stage there is no neighbour to pass activations to: the stage axis carries "
              "{permutes:g} collective-permutes per step, {measured:,.0f} bytes.",
        "zh": "只有一个阶段时，没有相邻阶段可以传递激活值：stage 轴每步有 {permutes:g} 次 collective-permute，"
              "{measured:,.0f} 字节。",
    },
    "data.match": {
        "en": "Every measured figure is the formula's, to the byte.",
        "zh": "每个实测数值都与公式的数值一致，分毫不差。",
    },
    "data.mismatch": {
        "en": "The measured figures differ from the formula's: see the table ({worst:,.0f} bytes apart at most).",
        "zh": "实测数值与公式的数值不同：见表格（最多相差 {worst:,.0f} 字节）。",
    },
    "data.loss.same": {
        "en": "Final loss after {steps} steps: {pipeline:.8g} for the {replicas} pipelines, {flat:.8g} for data "
              "parallelism (pmap, every layer on each of the {used} devices, the same batch and initial "
              "parameters). Relative gap {gap:.2e}, within {rtol:.0e}: the same training, the float sums in "
              "another order (float32 rounds at {eps:.2e}).",
        "zh": "{steps} 步之后的最终损失：{replicas} 条流水线为 {pipeline:.8g}，数据并行（pmap，{used} 台设备中的每一台"
              "都持有全部层，相同的批次和初始参数）为 {flat:.8g}。相对差 {gap:.2e}，在 {rtol:.0e} 以内：是同一个训练，"
              "只是浮点求和的顺序不同（float32 的舍入为 {eps:.2e}）。",
    },
    "data.loss.differs": {
        "en": "Final loss after {steps} steps: {pipeline:.8g} for the {replicas} pipelines, {flat:.8g} for data "
              "parallelism (pmap on the same {used} devices, batch and initial parameters). Relative gap {gap:.2e}, "
              "over {rtol:.0e}: here the two trainings part (float32 rounds at {eps:.2e}).",
        "zh": "{steps} 步之后的最终损失：{replicas} 条流水线为 {pipeline:.8g}，数据并行（pmap，相同的 {used} 台设备、"
              "批次和初始参数）为 {flat:.8g}。相对差 {gap:.2e}，超过 {rtol:.0e}：这里两次训练出现了分歧（float32 的舍入"
              "为 {eps:.2e}）。",
    },
    "traffic.data_allreduce": {"en": "all-reduce: gradients and loss", "zh": "全归约：梯度与损失"},
    "traffic.stage_permute": {"en": "ppermute: activations, their gradients", "zh": "ppermute：激活值及其梯度"},
    "traffic.stage_allreduce": {"en": "all-reduce: the loss over the stages", "zh": "全归约：各阶段的损失"},
    "col.traffic": {"en": "collective", "zh": "集合通信"},
    "col.axis": {"en": "mesh axis", "zh": "网格轴"},
    "col.per_step": {"en": "per step", "zh": "每步次数"},
    "col.measured_bytes": {"en": "bytes per device per step (measured)", "zh": "每台设备每步字节（实测）"},
    "col.formula_bytes": {"en": "formula (prediction)", "zh": "公式（预测）"},
    "scaling.heading": {"en": "The scaling ratio, from what ran", "zh": "扩展比：来自实际运行"},
    "scaling.explain": {
        "en": "The pipeline's step took {step_ms:.3g} ms against {base_ms:.3g} ms for the unsplit model on one "
              "device: S = {ratio:.3g} on {used} devices. Counted from the schedule table, a step has {slots} slots "
              "(2(M + P − 1)); the compiled step runs {permutes:g} collective-permutes per step and {reductions:g} "
              "all-reduce(s): {collectives:g} collectives, {per_us:.3g} µs of the step per collective. Data "
              "parallelism on the same {used} devices runs {flat_collectives:g} collective(s) per step: its step "
              "took {flat_ms:.3g} ms, S = {flat_ratio:.3g}.",
        "zh": "流水线的单步时间为 {step_ms:.3g} ms，而未切分的模型在一台设备上为 {base_ms:.3g} ms：在 {used} 台设备上 "
              "S = {ratio:.3g}。数自排程表，一步有 {slots} 个时间槽（2(M + P − 1)）；编译后的步骤每步运行 {permutes:g} 次 "
              "collective-permute 和 {reductions:g} 次全归约：共 {collectives:g} 次集合通信，平均每次集合通信占单步时间 "
              "{per_us:.3g} µs。相同 {used} 台设备上的数据并行每步运行 {flat_collectives:g} 次集合通信：单步时间 "
              "{flat_ms:.3g} ms，S = {flat_ratio:.3g}。",
    },
    "scaling.simulated": {
        "en": "On these simulated devices every collective is a rendezvous of the {used} device threads on {cores} "
              "CPU core(s), however many bytes it carries: the pipeline waits at {collectives:g} of them per step "
              "where data parallelism waits at {flat_collectives:g}.",
        "zh": "在这些模拟设备上，每次集合通信都是 {used} 个设备线程在 {cores} 个 CPU 核心上的一次碰头，不论它携带多少"
              "字节：流水线每步要等待 {collectives:g} 次，而数据并行只等待 {flat_collectives:g} 次。",
    },
    "scaling.real": {
        "en": "On real devices ({kind}) a collective-permute is one transfer between neighbouring devices.",
        "zh": "在真实设备（{kind}）上，一次 collective-permute 是相邻设备之间的一次传输。",
    },
    "scaling.pays": {
        "en": "What the step pays beyond the unsplit model's: the bubble, (P − 1)/(M + P − 1) of the table; a "
              "forward recomputed in every backward (each stage runs 2 × {micro} forwards where the unsplit model "
              "runs {micro}); in lockstep each slot's slowest work ({backward_slots} of the {slots} slots last a "
              "backward); and its {collectives:g} collectives per step.",
        "zh": "一步比未切分的模型多付出的：气泡，占排程表的 (P − 1)/(M + P − 1)；每次反向都重算一次前向（每个阶段运行 "
              "2 × {micro} 次前向，而未切分的模型只运行 {micro} 次）；逐槽同步下每个时间槽最慢的工作（{slots} 个时间槽中有 "
              "{backward_slots} 个持续一次反向）；以及每步 {collectives:g} 次集合通信。",
    },
    "scaling.behind": {
        "en": "Here the pipeline's S is 1/{times:.3g} of data parallelism's.",
        "zh": "这里流水线的 S 只有数据并行的 1/{times:.3g}。",
    },
    "scaling.ahead": {
        "en": "Here the pipeline's S is not below data parallelism's ({ratio:.3g} against {flat_ratio:.3g}).",
        "zh": "这里流水线的 S 不低于数据并行的（{ratio:.3g} 对 {flat_ratio:.3g}）。",
    },
    "error.pipeline_no_data_axis": {
        "en": "A data axis beside {stages} stages needs D ≥ {needed}, and D is {devices}.",
        "zh": "在 {stages} 个阶段旁加一个 data 轴需要 D ≥ {needed}，而 D 为 {devices}。",
    },
    "predict.heading": {"en": "Predict, then measure", "zh": "先预测，后测量"},
    "predict.body": {
        "en": "The same P, M and sizes, compiled once with each schedule: which compiled program needs fewer bytes "
              "at its peak on one device? Then the measurement times a step at M = {ladder} micro-batches of b rows "
              "(P fixed) and fits it to this program's lockstep model, n_F·t_f + n_B·t_b.",
        "zh": "相同的 P、M 和尺寸，分别用两种排程各编译一次：哪个编译后的程序在单台设备上的峰值字节数更少？随后测量会在 "
              "M = {ladder} 个、每个 b 行的微批次上（P 不变）为一步计时，并拟合本程序的逐槽同步模型 n_F·t_f + n_B·t_b。",
    },
    "predict.first": {"en": "Make a prediction first; then Measure opens.", "zh": "请先做出预测，随后才能点击测量。"},
    "cores.short": {
        "en": "This machine cannot show the bubble in time: its {devices} simulated devices share {cores} CPU "
              "core(s), fewer than the {stages} stages, so the stages' work of one slot runs at most {cores} at a "
              "time, not all at once, and a step's time is no longer n_F·t_f + n_B·t_b. The page shows what it "
              "can: the schedule above, counted, and the peak memory of both schedules, compiled. On a real "
              "accelerator with a device for each stage, or with P ≤ {cores} here, the same page measures the "
              "step time.",
        "zh": "本机无法在时间上展示气泡：它的 {devices} 台模拟设备共享 {cores} 个 CPU 核心，少于 {stages} 个阶段，所以一个"
              "时间槽中各阶段的工作最多同时运行 {cores} 个，而不是全部同时运行，一步的时间也就不再是 n_F·t_f + n_B·t_b。"
              "本页展示它能展示的：上面数出的排程，以及两种排程编译后的峰值内存。在每个阶段都有一台设备的真实加速器上，"
              "或在这里取 P ≤ {cores}，同一页面会测量单步时间。",
    },
    "cores.enough": {
        "en": "This machine has {cores} CPU core(s) for {stages} stage(s) of simulated devices: each stage can run "
              "on a core of its own, so the step time can show the bubble.",
        "zh": "本机有 {cores} 个 CPU 核心，用于 {stages} 个阶段的模拟设备：每个阶段都能占用一个核心，所以单步时间可以"
              "体现气泡。",
    },
    "cores.real": {
        "en": "Real devices ({kind}): each stage runs on its own device, so the step time shows the bubble.",
        "zh": "真实设备（{kind}）：每个阶段在自己的设备上运行，所以单步时间会体现气泡。",
    },
    "button.measure": {"en": "Measure", "zh": "测量"},
    "button.measure.help": {
        "en": "Compiles both schedules for their peak bytes and, where this machine can show the bubble, times a "
              "step at each M.",
        "zh": "编译两种排程以读出峰值字节数；在本机能展示气泡时，再为每个 M 的一步计时。",
    },
    "progress.memory": {"en": "Compiling GPipe and 1F1B…", "zh": "正在编译 GPipe 和 1F1B……"},
    "progress.time": {"en": "Timing M = {micro} ({done} of {total})…", "zh": "正在为 M = {micro} 计时（{done}/{total}）……"},
    "time.heading": {"en": "Step time against M (P = {stages})", "zh": "单步时间与 M 的关系（P = {stages}）"},
    "time.fit": {
        "en": "Least squares through this program's lockstep model T(M) = n_F·t_f + n_B·t_b, the slots counted "
              "from the table at each M: t_f = {t_f_ms:.4g} ms, t_b = {t_b_ms:.4g} ms (a backward, with the "
              "forward it recomputes), the furthest point {error:.0%} off the model. At M = {micro} the table has "
              "{forward_slots} forward slots and {backward_slots} backward ones: {lockstep_ms:.4g} ms. With these "
              "times this program's GPipe step takes {gpipe_ms:.4g} ms and its 1F1B step {one_ms:.4g} ms, "
              "{ratio:.2f}× GPipe's: 1F1B's forwards share slots with other stages' backwards, so they last a "
              "backward.",
        "zh": "按本程序的逐槽同步模型 T(M) = n_F·t_f + n_B·t_b 做最小二乘，各个 M 的时间槽数自排程表：t_f = "
              "{t_f_ms:.4g} ms，t_b = {t_b_ms:.4g} ms（一次反向，含它重算的前向），偏离模型最远的点相差 {error:.0%}。"
              "M = {micro} 时排程表有 {forward_slots} 个前向时间槽、{backward_slots} 个反向时间槽：{lockstep_ms:.4g} ms。"
              "用这两个时间，本程序的 GPipe 一步为 {gpipe_ms:.4g} ms，1F1B 一步为 {one_ms:.4g} ms，是 GPipe 的 "
              "{ratio:.2f} 倍：1F1B 的前向与其他阶段的反向共用时间槽，所以要持续一次反向的时间。",
    },
    "time.fit_pair": {
        "en": "Least squares through this program's lockstep model T(M) = n_F·t_f + n_B·t_b, the slots counted "
              "from the table at each M: these points cannot tell t_f from t_b (every M has as many forward slots "
              "as backward ones, or only one M was timed), so only their sum is fitted: t_f + t_b = {pair_ms:.4g} "
              "ms, the furthest point {error:.0%} off the model. At M = {micro}: {forward_slots} forward slots, "
              "{backward_slots} backward ones, {lockstep_ms:.4g} ms. Timing 1F1B, whose slots are mostly "
              "backward ones, tells the two apart.",
        "zh": "按本程序的逐槽同步模型 T(M) = n_F·t_f + n_B·t_b 做最小二乘，各个 M 的时间槽数自排程表：这些点无法区分 "
              "t_f 与 t_b（每个 M 的前向时间槽与反向时间槽一样多，或者只测了一个 M），所以只拟合它们的和：t_f + t_b = "
              "{pair_ms:.4g} ms，偏离模型最远的点相差 {error:.0%}。M = {micro} 时：{forward_slots} 个前向时间槽、"
              "{backward_slots} 个反向时间槽，{lockstep_ms:.4g} ms。为 1F1B 计时（它的时间槽大多含有反向）就能把两者分开。",
    },
    "time.asynchronous": {
        "en": "The papers' figure is another model: in their asynchronous schedules a device starts its next work "
              "as soon as its input arrives, so GPipe and 1F1B alike take (M + P − 1)(t_f + t_b) (GPipe §2.3; "
              "PipeDream-Flush): {async_ms:.4g} ms at M = {micro} with the fitted times, against this program's "
              "{lockstep_ms:.4g} ms in lockstep.",
        "zh": "论文中的数字是另一个模型：在它们的异步排程中，每台设备一收到输入就开始下一份工作，所以 GPipe 与 1F1B 都是 "
              "(M + P − 1)(t_f + t_b)（GPipe §2.3；PipeDream-Flush）：用拟合出的时间，M = {micro} 时为 {async_ms:.4g} ms，"
              "而本程序逐槽同步为 {lockstep_ms:.4g} ms。",
    },
    "time.skipped": {
        "en": "Step time not measured: {cores} CPU core(s) for {stages} stages (see above).",
        "zh": "未测量单步时间：{cores} 个 CPU 核心对应 {stages} 个阶段（见上文）。",
    },
    "chart.time": {"en": "Step time: measured and fitted", "zh": "单步时间：实测与拟合"},
    "axis.microbatches": {"en": "micro-batches M", "zh": "微批次数 M"},
    "axis.step_time": {"en": "step time (ms)", "zh": "单步时间（ms）"},
    "axis.series": {"en": "series", "zh": "曲线"},
    "series.measured": {"en": "measured", "zh": "实测"},
    "series.fit": {"en": "lockstep model n_F·t_f + n_B·t_b", "zh": "逐槽同步模型 n_F·t_f + n_B·t_b"},
    "col.microbatches": {"en": "M", "zh": "M"},
    "col.global_batch": {"en": "global batch", "zh": "全局批次"},
    "col.slots": {"en": "slots per step", "zh": "每步时间槽数"},
    "col.step_time_ms": {"en": "step time (ms)", "zh": "单步时间（ms）"},
    "col.fit_ms": {"en": "fit (ms)", "zh": "拟合（ms）"},
    "col.compile_s": {"en": "compile (s)", "zh": "编译（s）"},
    "memory.heading": {"en": "Peak memory: GPipe against 1F1B", "zh": "峰值内存：GPipe 与 1F1B"},
    "memory.explain": {
        "en": "Each schedule's program at P = {stages}, M = {micro}, b = {rows}, H = {hidden}, compiled (not run): "
              "the bytes one device needs at its peak, read from `memory_analysis()` (arguments + outputs − "
              "aliased + temporaries), measured in float32 on this machine's compiler. The model beside it counts "
              "only the stage inputs a device keeps for its backwards (GPipe's re-materialization): the most "
              "micro-batches kept on one device × b × H × 4 bytes (device 0 keeps none: it recomputes from its "
              "rows of the batch).",
        "zh": "每种排程在 P = {stages}、M = {micro}、b = {rows}、H = {hidden} 下的程序，只编译不运行：一台设备在峰值时需要的"
              "字节数，读自 `memory_analysis()`（实参 + 输出 − 别名 + 临时缓冲），以 float32 在本机的编译器上测得。旁边的"
              "模型只计算一台设备为反向保存的阶段输入（GPipe 的重计算）：一台设备最多保存的微批次数 × b × H × 4 字节"
              "（设备 0 不保存：它从自己那几行批次数据重算）。",
    },
    "memory.gpipe": {
        "en": "Here GPipe's program peaks at fewer bytes: {gpipe:,} against 1F1B's {one_f_one_b:,}.",
        "zh": "这里 GPipe 的程序峰值字节数更少：{gpipe:,}，而 1F1B 为 {one_f_one_b:,}。",
    },
    "memory.1f1b": {
        "en": "Here 1F1B's program peaks at fewer bytes: {one_f_one_b:,} against GPipe's {gpipe:,}, "
              "{saved:,} bytes fewer; the model's stash differs by {model_saved:,}.",
        "zh": "这里 1F1B 的程序峰值字节数更少：{one_f_one_b:,}，而 GPipe 为 {gpipe:,}，少 {saved:,} 字节；模型中保存的"
              "激活值相差 {model_saved:,} 字节。",
    },
    "memory.same_none": {
        "en": "Here both programs peak at the same {gpipe:,} bytes ({one_f_one_b:,}): with one stage no device "
              "receives an input, device 0's backward recomputes its forward from its rows of the batch, so "
              "neither schedule keeps any ({gpipe_kept} and {one_kept}); the model's stashes differ by "
              "{model_saved:,} bytes.",
        "zh": "这里两个程序的峰值字节数相同，都是 {gpipe:,}（{one_f_one_b:,}）：只有一个阶段时没有设备会收到输入，设备 0 "
              "的反向从它那几行批次数据重算前向，所以两种排程都不保存任何输入（{gpipe_kept} 与 {one_kept}）；模型中保存"
              "的激活值相差 {model_saved:,} 字节。",
    },
    "memory.same_kept": {
        "en": "Here both programs peak at the same {gpipe:,} bytes ({one_f_one_b:,}), and both keep as many "
              "micro-batches' inputs ({gpipe_kept} and {one_kept}): with M ≤ P, 1F1B's pipeline never holds more "
              "than GPipe's; the model's stashes differ by {model_saved:,} bytes.",
        "zh": "这里两个程序的峰值字节数相同，都是 {gpipe:,}（{one_f_one_b:,}），两者保存的微批次输入也一样多（{gpipe_kept} "
              "与 {one_kept}）：M ≤ P 时，1F1B 的流水线保存的不会比 GPipe 的多；模型中保存的激活值相差 {model_saved:,} 字节。",
    },
    "memory.same_despite": {
        "en": "Here both programs peak at the same {gpipe:,} bytes ({one_f_one_b:,}), though 1F1B keeps fewer "
              "micro-batches' inputs ({one_kept} against {gpipe_kept}, {model_saved:,} bytes in the model): this "
              "compiled step does not turn 1F1B's smaller stash into a smaller peak.",
        "zh": "这里两个程序的峰值字节数相同，都是 {gpipe:,}（{one_f_one_b:,}），尽管 1F1B 保存的微批次输入更少（{one_kept} "
              "对 {gpipe_kept}，模型中相差 {model_saved:,} 字节）：这个编译后的步骤没有把 1F1B 较少的激活值变成较小的峰值。",
    },
    "memory.unknown": {
        "en": "This backend reports no memory figures for a compiled program ({gpipe}, {one_f_one_b}).",
        "zh": "此后端没有报告编译后程序的内存数值（{gpipe}，{one_f_one_b}）。",
    },
    "chart.memory": {"en": "Peak bytes on one device", "zh": "单台设备的峰值字节数"},
    "axis.schedule": {"en": "schedule", "zh": "排程"},
    "axis.bytes": {"en": "bytes", "zh": "字节"},
    "col.schedule": {"en": "schedule", "zh": "排程"},
    "col.peak_bytes": {"en": "peak bytes (measured)", "zh": "峰值字节（实测）"},
    "col.temp_bytes": {"en": "temporaries", "zh": "临时缓冲"},
    "col.argument_bytes": {"en": "arguments", "zh": "实参"},
    "col.kept": {"en": "micro-batches kept", "zh": "保存的微批次数"},
    "col.stash_model_bytes": {"en": "stash (model)", "zh": "保存的激活值（模型）"},
    "outcome": {
        "en": "You predicted {guess}; on this machine: {answer}.",
        "zh": "你的预测是 {guess}；在本机上：{answer}。",
    },
    "outcome.right": {"en": "Your prediction was right.", "zh": "你的预测是对的。"},
    "outcome.wrong": {
        "en": "Not this time: the compiled programs say {answer}.",
        "zh": "这次不对：编译后的程序给出的是 {answer}。",
    },
    "nothing_yet": {
        "en": "Predict, then press Measure: the figures come from programs compiled and run here.",
        "zh": "先预测，再点击测量：数值来自在这里编译和运行的程序。",
    },
    "error.pipeline_stages_over_devices": {
        "en": "{stages} stages need {stages} devices (one stage per device), and D is {devices}: choose P ≤ D.",
        "zh": "{stages} 个阶段需要 {stages} 台设备（每台设备一个阶段），而 D 为 {devices}：请选择 P ≤ D。",
    },
    "error.pipeline_rows_not_divisible": {
        "en": "The global batch M·b = {batch} does not split evenly over the {stages} devices (the compiled step "
              "takes it split over them); try b = {suggestion}.",
        "zh": "全局批次 M·b = {batch} 不能平均分到 {stages} 台设备上（编译后的步骤把它切分到这些设备上）；可以试试 "
              "b = {suggestion}。",
    },
    "error.too_much_work": {
        "en": "One timed call would need {work:,} multiply-adds, over this page's limit of {limit:,}. Use fewer "
              "micro-batches, fewer rows per micro-batch or a narrower model.",
        "zh": "一次计时调用需要 {work:,} 次乘加，超过本页的上限 {limit:,}。请减少微批次数、每个微批次的行数或模型宽度。",
    },
}
