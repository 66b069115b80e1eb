TEXTS = {
    "title": {"en": "2-D mesh: data × model", "zh": "二维网格：data × model"},
    "summary": {
        "en": "Tensor parallelism beside data parallelism on a data × model mesh, in explicit sharding: every "
              "array's type, the collectives of each mesh axis, every mesh shape measured on this machine.",
        "zh": "在 data × model 网格上把张量并行与数据并行结合，使用显式分片：每个数组的类型、每个网格轴的集合通信，"
              "并在本机实测每种网格形状。",
    },
    "intro": {
        "en": "Data parallelism splits the batch; it stops helping once a model no longer fits one device or the "
              "batch per device gets small. Large models are trained on at least two mesh axes: `data` splits "
              "the batch's rows, `model` splits the weights. This lab splits the MLP Megatron's way (Shoeybi et "
              "al. 2019, §3): the first weight by columns and the second by rows over `model`, so each device "
              "holds 1/Y of the weights and computes its own columns of the hidden layer; the second product is a "
              "sum over the split hidden width, so its partial sums are all-reduced over `model`, one all-reduce "
              "of activations per pair of layers. The gradient of each device's weights is then all-reduced over "
              "`data`, as in data parallelism. It is written in explicit sharding (\"sharding in types\", "
              "`jax.make_mesh` axes are Explicit since JAX 0.9): every array's type names its sharding, and where "
              "a result's sharding is ambiguous the compiler asks for `out_sharding=` instead of guessing.",
        "zh": "数据并行切分批次；一旦模型在单台设备上放不下，或者每台设备分到的批次变小，它就不再有帮助。大模型至少在两个"
              "网格轴上训练：`data` 切分批次的行，`model` 切分权重。本实验按 Megatron 的方式切分 MLP（Shoeybi 等 "
              "2019，§3）：第一个权重沿 `model` 按列切分，第二个按行切分，于是每台设备持有 1/Y 的权重，并计算隐藏层中属于"
              "自己的那几列；第二个乘积是对被切分的隐藏宽度求和，所以它的部分和沿 `model` 做全归约，每对层一次激活值的"
              "全归约。随后每台设备上权重的梯度沿 `data` 做全归约，与数据并行相同。代码用显式分片（“sharding in types”，"
              "JAX 0.9 起 `jax.make_mesh` 的轴是 Explicit）写成：每个数组的类型写明它的分片方式；结果的分片方式有歧义时，"
              "编译器会要求给出 `out_sharding=`，而不是替你猜。",
    },
    "formulas": {
        "en": "B global batch, I inputs, H hidden width, X devices on `data`, Y on `model` (D = X·Y); a ring "
              "all-reduce of S bytes among g devices sends 2(g−1)/g·S per device. Sources: Shoeybi et al. 2019 "
              "(Megatron-LM) §3 for the split; the JAX Scaling Book (Austin et al. 2025, Part 5 \"Training\") for "
              "the per-layer costs of DP, FSDP, TP and FSDP+TP and for C/W, in the book's letters (D its model width, F "
              "its hidden width: F appears on this page only in the book's formulas).",
        "zh": "B 为全局批次，I 为输入数，H 为隐藏宽度，X 为 `data` 上的设备数，Y 为 `model` 上的设备数（D = X·Y）；"
              "g 台设备对 S 字节做环形全归约，每台设备发送 2(g−1)/g·S。来源：切分方式见 Shoeybi 等 2019（Megatron-LM）"
              "§3；DP、FSDP、TP 和 FSDP+TP 每层的通信量以及 C/W 见 JAX Scaling Book（Austin 等 2025，第 5 部分"
              "“Training”），用书中的字母（D 为书中的模型宽度，F 为书中的隐藏宽度：本页只在书的公式中用 F）。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.mesh": {"en": "Mesh shape (data × model)", "zh": "网格形状（data × model）"},
    "w.hidden": {"en": "Hidden width H", "zh": "隐藏宽度 H"},
    "w.features": {"en": "Inputs I", "zh": "输入数 I"},
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.steps": {"en": "Steps", "zh": "步数"},
    "w.lr": {"en": "Learning rate", "zh": "学习率"},
    "w.accum": {"en": "Micro-batches K (the accumulation example)", "zh": "微批次数 K（梯度累积示例）"},
    "w.guess": {"en": "Your prediction: the fastest shape on this machine", "zh": "你的预测：本机上最快的形状"},
    "one_device": {
        "en": "D = 1: the only mesh is 1 × 1. It runs the same program with no collective, so there is nothing "
              "to compare. A mesh with more than one device on both axes needs a D with a factor pair, 4 (2 × 2) "
              "at least; start the lab with more devices (`PMAP_LAB_DEVICES=8`) or pick a larger D above if this "
              "server has them.",
        "zh": "D = 1：唯一的网格是 1 × 1。它运行同一个程序，没有任何集合通信，因此没有可比较的东西。两个轴上都多于一台设备的"
              "网格需要 D 有一对因子，至少为 4（2 × 2）；请用更多设备启动本实验（`PMAP_LAB_DEVICES=8`），或者若本服务器"
              "有更多设备，在上方选择更大的 D。",
    },
    "one_axis": {
        "en": "D = {devices} has only the shapes {shapes}: one axis at a time (all data or all model). Both axes "
              "with more than one device need a D with a factor pair, such as 4, 6 or 8.",
        "zh": "D = {devices} 只有形状 {shapes}：每次只有一个轴（全部 data 或全部 model）。两个轴上都多于一台设备，"
              "需要 D 有一对因子，例如 4、6 或 8。",
    },
    "skipped": {
        "en": "Shapes of D = {devices} left out: {shapes}. The model axis must divide the hidden width H = {hidden} "
              "(each device holds H/Y of its columns).",
        "zh": "D = {devices} 中被略去的形状：{shapes}。model 轴必须能整除隐藏宽度 H = {hidden}（每台设备持有其中 H/Y 列）。",
    },
    "per_device": {
        "en": "On {data} × {model}: each device takes {rows} rows of the batch (B/X = {batch}/{data}) and holds "
              "{cols} of the {hidden} hidden columns (H/Y).",
        "zh": "在 {data} × {model} 上：每台设备处理批次中的 {rows} 行（B/X = {batch}/{data}），并持有 {hidden} 个隐藏列中的 "
              "{cols} 列（H/Y）。",
    },
    "types.heading": {"en": "Every array's type: `jax.typeof`", "zh": "每个数组的类型：`jax.typeof`"},
    "types.explain": {
        "en": "Read from the arrays the compiled step takes on {data} × {model}. `@model` marks a dimension split "
              "over the model mesh axis, `@data` over the data mesh axis; a dimension with no mark is whole on "
              "every device. The weights are split over `model` only, so the devices of one column of the mesh "
              "(same model position, different data position) hold the same blocks; the batch is split over "
              "`data` only.",
        "zh": "读自编译后的步骤在 {data} × {model} 上接收的数组。`@model` 表示该维度沿 model 网格轴分片，`@data` 表示沿 data "
              "网格轴分片；没有标记的维度在每台设备上都是完整的。权重只沿 `model` 分片，所以网格同一列上的设备（model "
              "位置相同、data 位置不同）持有相同的块；批次只沿 `data` 分片。",
    },
    "col.name": {"en": "array", "zh": "数组"},
    "col.type": {"en": "jax.typeof", "zh": "jax.typeof"},
    "comm.heading": {"en": "Collectives per mesh axis, read from the compiled HLO",
                     "zh": "每个网格轴上的集合通信，读自编译后的 HLO"},
    "comm.explain": {
        "en": "Each row is one collective of the compiled step: which devices meet (read from its replica groups, "
              "`replica_groups` in the HLO, then named by the mesh axis along which they differ) and the bytes one device sends per step on a "
              "ring. On {data} × {model}: {model_bytes:,.0f} bytes over model, {data_bytes:,.0f} over data, "
              "{total:,.0f} in all; the formula 2(Y−1)/Y·(B/X)·4 + 2(X−1)/X·(IH/Y + 2H/Y + 1)·4 gives "
              "{formula:,.0f}.",
        "zh": "每一行是编译后步骤中的一个集合通信：哪些设备一起参与（读自它的副本组，即 HLO 中的 `replica_groups`，再按"
              "这些设备不同的那个网格轴命名），以及每台设备每步在环上发送的字节数。在 {data} × {model} 上：model 上 "
              "{model_bytes:,.0f} 字节，data 上 {data_bytes:,.0f} 字节，共 {total:,.0f} 字节；公式 2(Y−1)/Y·(B/X)·4 + "
              "2(X−1)/X·(IH/Y + 2H/Y + 1)·4 给出 {formula:,.0f}。",
    },
    "comm.loss": {
        "en": "The formula is {gap:,.0f} bytes short of what the compiled step sends: the loss, one value the same "
              "all-reduce over data carries beside the gradient, 2(X−1)/X·4 = {gap:,.0f} bytes.",
        "zh": "公式比编译后的步骤实际发送的少 {gap:,.0f} 字节：那是损失，同一次 data 上的全归约在梯度之外还携带的一个值，"
              "2(X−1)/X·4 = {gap:,.0f} 字节。",
    },
    "comm.none": {
        "en": "On {data} × {model} the compiled step runs no collective among more than one device: every device "
              "has what it needs.",
        "zh": "在 {data} × {model} 上，编译后的步骤没有在多于一台设备之间运行任何集合通信：每台设备都已有所需的一切。",
    },
    "col.kind": {"en": "collective", "zh": "集合通信"},
    "col.axis": {"en": "mesh axis", "zh": "网格轴"},
    "col.shapes": {"en": "arrays", "zh": "数组"},
    "col.group_size": {"en": "devices per group", "zh": "每组设备数"},
    "col.groups": {"en": "groups", "zh": "组数"},
    "col.runs_per_step": {"en": "per step", "zh": "每步次数"},
    "col.bytes_per_step": {"en": "bytes per device per step", "zh": "每台设备每步字节数"},
    "book.heading": {"en": "Beside the Scaling Book's table, for this MLP's sizes",
                     "zh": "与 Scaling Book 的表格并列，按本 MLP 的尺寸计算"},
    "book.explain": {
        "en": "The book's per-layer bytes (Part 5 \"Training\", its table of takeaways) for DP, FSDP, TP and "
              "FSDP+TP, computed with this MLP's sizes in the book's notation (B = {batch}, D = I = {features}, "
              "F = H = {hidden}, X = {data}, Y = {model}), in bfloat16 as the book counts and in float32 as this "
              "lab trains; then this lab's own formula, with what the compiled step sent beside it.",
        "zh": "书中 DP、FSDP、TP 和 FSDP+TP 每层的字节数（第 5 部分“Training”的要点表），按书中记号代入本 MLP 的尺寸"
              "（B = {batch}，D = I = {features}，F = H = {hidden}，X = {data}，Y = {model}），分别按书中的 bfloat16 和本实验"
              "训练用的 float32 计算；最后一行是本实验自己的公式，旁边是编译后步骤实际发送的字节数。",
    },
    "book.lab_row": {"en": "this lab: DP over X × TP over Y", "zh": "本实验：X 上数据并行 × Y 上张量并行"},
    "book.note": {
        "en": "Where this MLP differs from the book's: its second weight is H values, not F×D, and its output one "
              "value per sample, so its activations all-reduce carries B/X values, not B·D. Its mesh is DP over X "
              "and Megatron's split over Y, not FSDP × TP: the weights are whole on every data device, so the "
              "gradient of 1/Y of them is all-reduced over data, and x is replicated over model, so nothing is "
              "gathered before the first product. The backward pass sends nothing over model because x is data "
              "(it needs no gradient). The lab counts the ring's 2(g−1)/g; the book leaves it out.",
        "zh": "本 MLP 与书中的不同之处：它的第二个权重是 H 个值而不是 F×D，输出每个样本一个值，所以激活值的全归约传输 B/X 个值，"
              "而不是 B·D。它的网格是 X 上的数据并行加 Y 上 Megatron 的切分，而不是 FSDP × TP：权重在每台 data 设备上都是"
              "完整的，所以其中 1/Y 的梯度沿 data 做全归约；x 沿 model 是副本，所以第一个乘积之前不需要收集任何东西。"
              "反向传播不在 model 上发送任何数据，因为 x 是数据（不需要梯度）。本实验计入环形算法的 2(g−1)/g，书中省略了它。",
    },
    "col.strategy": {"en": "strategy", "zh": "策略"},
    "col.formula": {"en": "formula (bytes per layer)", "zh": "公式（每层字节数）"},
    "col.bytes_bf16": {"en": "bfloat16 bytes", "zh": "bfloat16 字节数"},
    "col.bytes_float32": {"en": "float32 bytes", "zh": "float32 字节数"},
    "col.measured_bytes": {"en": "measured (HLO)", "zh": "实测（HLO）"},
    "col.source": {"en": "source", "zh": "来源"},
    "button.train": {"en": "🏋️ Train on this shape", "zh": "🏋️ 在此形状上训练"},
    "button.sweep": {"en": "📏 Measure every shape", "zh": "📏 实测每种形状"},
    "button.sweep.help": {
        "en": "Trains every data × model shape of D (each an MLflow run under one parent), measures this machine's "
              "roofline, and compares the fastest shape with your prediction and the roofline's.",
        "zh": "训练 D 的每种 data × model 形状（每种一个 MLflow 运行，归在同一个父运行下），测出本机的屋顶线，"
              "再把最快的形状与你的预测和屋顶线的预测比较。",
    },
    "progress.compiling": {"en": "Compiling the step…", "zh": "正在编译训练步骤……"},
    "progress.steps": {"en": "Step {done} of {total}", "zh": "第 {done} / {total} 步"},
    "progress.roofline": {"en": "Measuring this machine's roofline (a matmul, then all-reduces)…",
                          "zh": "正在测量本机的屋顶线（先做矩阵乘法，再做全归约）……"},
    "progress.sweep": {"en": "Shape {done} of {total} trained", "zh": "已训练 {done} / {total} 种形状"},
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
        "en": "{what}, recorded in MLflow (its id, then the store); compare it on the Experiments page:",
        "zh": "{what}已记录到 MLflow（先是运行 ID，后是存储）；可在“实验对比”页比较：",
    },
    "tracking.run": {"en": "The run", "zh": "本次运行"},
    "tracking.sweep": {"en": "The sweep (a parent run with one child per shape)",
                       "zh": "这次扫描（一个父运行，每种形状一个子运行）"},
    "result.heading": {"en": "Trained on {data} × {model} (D = {devices}, B = {batch})",
                       "zh": "在 {data} × {model} 上训练（D = {devices}，B = {batch}）"},
    "axis.step": {"en": "step", "zh": "步"},
    "axis.loss": {"en": "loss", "zh": "损失"},
    "axis.shape": {"en": "mesh shape (data × model)", "zh": "网格形状（data × model）"},
    "axis.throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "axis.bytes": {"en": "bytes per device per step", "zh": "每台设备每步字节数"},
    "axis.mesh_axis": {"en": "mesh axis", "zh": "网格轴"},
    "metric.throughput": {"en": "Steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "metric.step_time": {"en": "Step time", "zh": "单步时间"},
    "metric.comm_bytes": {"en": "Bytes sent per step", "zh": "每步发送字节数"},
    "metric.param_bytes": {"en": "Parameter bytes per device", "zh": "每台设备的参数字节数"},
    "metric.final_loss": {"en": "Final loss", "zh": "最终损失"},
    "replicas.same": {
        "en": "Every copy of every block of the weights is identical, bit for bit, on the devices that hold it.",
        "zh": "权重每一块在持有它的各台设备上的副本逐位完全相同。",
    },
    "replicas.differ": {
        "en": "Copies of the same block of the weights differ by up to {diff:.3g} between devices.",
        "zh": "同一块权重在不同设备上的副本最多相差 {diff:.3g}。",
    },
    "predict.heading": {"en": "Predict, then measure: which shape is fastest here?",
                        "zh": "先预测，后实测：这里哪种形状最快？"},
    "predict.body": {
        "en": "Every shape computes the same update with the same FLOPs on the same D devices; they differ in what "
              "they send and how often the devices meet. Choose the shape you expect to be fastest on this machine, "
              "then measure every shape. The page then shows the roofline's prediction beside yours and what ran.",
        "zh": "每种形状都在同样 D 台设备上、用同样的 FLOPs 计算同一个更新；区别在于发送什么、设备多久一起碰头一次。"
              "先选出你认为在本机上最快的形状，再实测每种形状。之后页面会把屋顶线的预测与你的预测以及实际运行结果并列显示。",
    },
    "predict.first": {"en": "Choose your prediction first; then measure.", "zh": "请先选择你的预测，再实测。"},
    "predict.one_device": {
        "en": "With one device there is one shape, 1 × 1, and nothing to predict: the prediction needs D ≥ 2.",
        "zh": "只有一台设备时只有一种形状 1 × 1，没有什么可预测的：预测需要 D ≥ 2。",
    },
    "sweep.heading": {"en": "Every shape of D = {devices}, measured", "zh": "D = {devices} 的每种形状，实测"},
    "chart.throughput": {"en": "Steady throughput per shape", "zh": "每种形状的稳态吞吐量"},
    "chart.bytes": {"en": "Bytes each device sends per step, by mesh axis (from HLO)",
                    "zh": "每台设备每步发送的字节数，按网格轴（读自 HLO）"},
    "col.shape": {"en": "shape", "zh": "形状"},
    "col.data": {"en": "X (data)", "zh": "X（data）"},
    "col.model": {"en": "Y (model)", "zh": "Y（model）"},
    "col.steady_throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "col.step_time_us": {"en": "step time (µs)", "zh": "单步时间（µs）"},
    "col.comm_bytes_per_step": {"en": "bytes sent per step", "zh": "每步发送字节数"},
    "col.bytes_data": {"en": "over data", "zh": "data 上"},
    "col.bytes_model": {"en": "over model", "zh": "model 上"},
    "col.collectives_per_step": {"en": "collectives per step", "zh": "每步集合通信次数"},
    "col.rendezvous_per_step": {"en": "rendezvous per step", "zh": "每步碰头次数"},
    "col.param_bytes_per_device": {"en": "parameter bytes per device", "zh": "每台设备的参数字节数"},
    "col.final_loss": {"en": "final loss", "zh": "最终损失"},
    "verdict.head": {
        "en": "On this machine {winner} won: {throughput:,.0f} samples/s, {speedup:.2f}× the slowest shape ({slowest}).",
        "zh": "在本机上 {winner} 最快：{throughput:,.0f} 样本/秒，是最慢形状（{slowest}）的 {speedup:.2f} 倍。",
    },
    "verdict.compare": {
        "en": "Per step, against {slowest}: {w_bytes:,.0f} bytes sent against {s_bytes:,.0f}, {w_coll:g} "
              "collective(s) against {s_coll:g}, {w_rdv:g} rendezvous against {s_rdv:g}.",
        "zh": "每步与 {slowest} 相比：发送 {w_bytes:,.0f} 字节对 {s_bytes:,.0f}，集合通信 {w_coll:g} 次对 {s_coll:g} 次，"
              "碰头 {w_rdv:g} 次对 {s_rdv:g} 次。",
    },
    "verdict.operands": {
        "en": "Both ran {w_coll:g} collective(s) per step: the rendezvous differ by the arrays those carry, each its "
              "own: {w_rdv:g} against {s_rdv:g}.",
        "zh": "两者每步都运行 {w_coll:g} 次集合通信：碰头次数的差别来自这些集合通信携带的数组数，每个数组各碰头一次："
              "{w_rdv:g} 次对 {s_rdv:g} 次。",
    },
    "verdict.separates": {"en": "What sets them apart: {factors}.", "zh": "两者的区别：{factors}。"},
    "verdict.none": {
        "en": "{winner} had no fewer bytes, collectives or rendezvous than {slowest}: none of these counts explains "
              "the order.",
        "zh": "{winner} 的字节数、集合通信次数和碰头次数都不比 {slowest} 少：这些计数都解释不了这个快慢顺序。",
    },
    "verdict.simulated": {
        "en": "On these simulated devices XLA:CPU runs each array of a collective as its own rendezvous, a meeting "
              "of the {devices} device threads on {cores} shared CPU core(s).",
        "zh": "在这些模拟设备上，XLA:CPU 对集合通信中的每个数组各做一次碰头，即 {devices} 个设备线程在 {cores} 个共享 CPU "
              "核心上的一次会合。",
    },
    "verdict.close": {
        "en": "{winner} was only {lead:.1%} ahead of the next shape ({runner_up}): a gap this small can reverse "
              "from one measurement to the next; measure again before reading much into it.",
        "zh": "{winner} 只比第二快的形状（{runner_up}）快 {lead:.1%}：这么小的差距在下一次测量中可能颠倒；再测一次，再下结论。",
    },
    "factor.rendezvous": {"en": "fewer rendezvous", "zh": "碰头次数更少"},
    "factor.bytes": {"en": "fewer bytes", "zh": "字节更少"},
    "factor.collectives": {"en": "fewer collectives", "zh": "集合通信更少"},
    "list.sep": {"en": ", ", "zh": "、"},
    "verdict.one_shape": {
        "en": "Only one shape ran ({winner}): there is nothing to compare at this D and hidden width.",
        "zh": "只运行了一种形状（{winner}）：在这个 D 和隐藏宽度下没有可比较的东西。",
    },
    "outcome": {
        "en": "You predicted {guess}; the roofline predicted {predicted}; on this machine {winner} was fastest.",
        "zh": "你预测的是 {guess}；屋顶线预测的是 {predicted}；在本机上最快的是 {winner}。",
    },
    "outcome.right": {"en": "Your prediction was right.", "zh": "你的预测是对的。"},
    "outcome.wrong": {
        "en": "Not this time: the table and the sentence above say what set {winner} apart.",
        "zh": "这次没猜中：上面的表格和说明讲了 {winner} 胜在哪里。",
    },
    "roofline.heading": {"en": "This machine's roofline", "zh": "本机的屋顶线"},
    "roofline.explain": {
        "en": "C is the FLOP/s of one device, measured on a {size}² float32 matmul (FLOPs from "
              "`compiled.cost_analysis()`); W is the bandwidth β of the α-β ring model fitted to all-reduces on "
              "the {devices} devices here. The table gives each machine's figures under the Scaling Book's rules, "
              "which it derives for its transformer MLP: data parallelism compute-bound while the batch per "
              "device exceeds C/W, tensor parallelism while Y < F / (C/W), F the book's hidden width (H = "
              "{hidden} here), C/W counted in the values sent (the book's are bfloat16; a float32 value costs "
              "twice as much to send, so 2·C/W here). The book's TPU v5p and H100 rows are its own figures.",
        "zh": "C 是单台设备的 FLOP/s，在 {size}² 的 float32 矩阵乘法上测得（FLOPs 来自 `compiled.cost_analysis()`）；"
              "W 是对这里 {devices} 台设备上的全归约拟合 α-β 环形模型得到的带宽 β。表中按 Scaling Book 的规则给出每台机器的"
              "数值，这些规则是书中为它的 Transformer MLP 推导的：每台设备的批次大于 C/W 时数据并行受计算限制，Y < F / (C/W) "
              "时张量并行受计算限制，F 为书中的隐藏宽度（这里 H = {hidden}），C/W 按发送的值计（书中是 bfloat16；float32 的值"
              "发送代价加倍，所以这里是 2·C/W）。书中 TPU v5p 与 H100 两行是书中的数字。",
    },
    "roofline.this_machine": {"en": "this machine (measured)", "zh": "本机（实测）"},
    "roofline.v5p": {"en": "TPU v5p, one ICI axis (the book)", "zh": "TPU v5p，一个 ICI 轴（书中数字）"},
    "roofline.h100_node": {"en": "H100 within a node, NVLink (the book)", "zh": "H100 节点内，NVLink（书中数字）"},
    "roofline.h100_beyond": {"en": "H100 beyond a node (the book)", "zh": "H100 跨节点（书中数字）"},
    "roofline.book": {
        "en": "Here: C = {flops:.3g} FLOP/s, W = {beta:.3g} bytes/s, C/W = {intensity:,.0f} FLOPs per byte. The "
              "book's rules, for its transformer MLP: a critical batch of 2·C/W = {critical:,.0f} samples per "
              "device in float32, and a TP bound F/(2·C/W) = {bound:.3g} with F = H = {hidden}.",
        "zh": "这里：C = {flops:.3g} FLOP/s，W = {beta:.3g} 字节/秒，C/W = {intensity:,.0f} FLOPs/字节。书中为它的 "
              "Transformer MLP 给出的规则：float32 下每台设备的临界批次 2·C/W = {critical:,.0f} 个样本，张量并行界 "
              "F/(2·C/W) = {bound:.3g}，其中 F = H = {hidden}。",
    },
    "roofline.own": {
        "en": "This MLP is not that model: its input needs no gradient, so a step does f = 4(IH + H) + H = "
              "{per_sample:,.0f} FLOPs per sample (the book's layer does 6 per weight); its output is one value, "
              "so the model axis all-reduces B/X values whatever H; and nothing overlaps on these devices. Derived "
              "the same way for it, with C = {c_device:.3g} FLOP/s for each of the {devices} devices (their share "
              "of the usable cores): data parallelism over all {devices} devices is compute-bound while B/D > "
              "8(D−1)/D·(IH + 2H + 1)/f·C/W = {critical:,.3g}, and a model axis of Y devices while Y < 1 + "
              "f/(8·C/W) = {tp:.3g}.",
        "zh": "本 MLP 并不是那个模型：它的输入不需要梯度，所以一步每个样本做 f = 4(IH + H) + H = {per_sample:,.0f} 次 "
              "FLOPs（书中的层每个权重做 6 次）；它的输出只有一个值，所以不论 H 多大，model 轴都只对 B/X 个值做全归约；而且"
              "在这些设备上没有任何重叠。按同样的方法为它推导，{devices} 台设备每台的 C = {c_device:.3g} FLOP/s（它们分到的"
              "可用核心）：在全部 {devices} 台设备上做数据并行时，B/D > 8(D−1)/D·(IH + 2H + 1)/f·C/W = {critical:,.3g} "
              "才受计算限制；Y 台设备的 model 轴在 Y < 1 + f/(8·C/W) = {tp:.3g} 时受计算限制。",
    },
    "roofline.regime": {
        "en": "On {data} × 1, B/X = {per_device:,.0f} rows per device: a step computes for {compute:.3g} µs and "
              "sends for {send:.3g} µs at W — {regime_send} by bandwidth alone; with the latency α of each "
              "rendezvous, as the prediction table below counts it, its communication takes {comm:.3g} µs — "
              "{regime}. With latency counted, {compute_bound} of the {shapes} shapes are compute-bound.",
        "zh": "在 {data} × 1 上，B/X = 每台设备 {per_device:,.0f} 行：一步计算 {compute:.3g} µs，按 W 发送 {send:.3g} µs——"
              "只看带宽是{regime_send}；按下面预测表的算法计入每次碰头的延迟 α，通信需要 {comm:.3g} µs——{regime}。计入延迟后，"
              "{shapes} 种形状中有 {compute_bound} 种受计算限制。",
    },
    "roofline.comm_bound": {"en": "communication-bound", "zh": "受通信限制"},
    "roofline.compute_bound": {"en": "compute-bound", "zh": "受计算限制"},
    "roofline.refused": {
        "en": "This machine's roofline could not be measured at this D; every shape was still trained and measured "
              "above. Why:",
        "zh": "在这个 D 下无法测量本机的屋顶线；上面的每种形状仍然都已训练并实测。原因：",
    },
    "roofline.no_bandwidth": {
        "en": "With one device no collective can be timed, so W and everything derived from it is left empty.",
        "zh": "只有一台设备时无法为任何集合通信计时，所以 W 以及由它导出的量都留空。",
    },
    "col.machine": {"en": "machine", "zh": "机器"},
    "col.flops_per_s": {"en": "C (FLOP/s)", "zh": "C（FLOP/s）"},
    "col.bandwidth_bytes_per_s": {"en": "W (bytes/s)", "zh": "W（字节/秒）"},
    "col.value_bytes": {"en": "bytes per value", "zh": "每个值的字节数"},
    "col.critical_batch_per_device": {"en": "the book's critical batch per device, C/W × bytes/2",
                                      "zh": "书中每台设备的临界批次 C/W × 字节数/2"},
    "col.tp_bound": {"en": "the book's TP bound F / (C/W × bytes/2)", "zh": "书中的张量并行界 F / (C/W × 字节数/2)"},
    "prediction.explain": {
        "en": "The roofline's prediction for each shape: the same compute on every shape; per step one all-reduce "
              "of the B/X partial outputs over model and one of the gradient of 1/Y of the weights over data, "
              "priced at this machine's α and β. The ring model counts one latency per collective and predicts "
              "{ring}; counting one per rendezvous (XLA:CPU meets once per array of a tuple all-reduce) predicts "
              "{winner}.",
        "zh": "屋顶线对每种形状的预测：每种形状计算量相同；每步沿 model 对 B/X 个部分输出做一次全归约，沿 data 对 1/Y 权重的"
              "梯度做一次全归约，按本机的 α 和 β 计价。环形模型每次集合通信只计一次延迟，预测 {ring}；每次碰头计一次延迟"
              "（XLA:CPU 对元组全归约中的每个数组各碰头一次）则预测 {winner}。",
    },
    "col.comm_bytes": {"en": "bytes per step", "zh": "每步字节数"},
    "col.collectives": {"en": "all-reduces per step", "zh": "每步全归约次数"},
    "col.rendezvous": {"en": "rendezvous per step", "zh": "每步碰头次数"},
    "col.compute_us": {"en": "compute (µs)", "zh": "计算（µs）"},
    "col.send_us": {"en": "sending at W (µs)", "zh": "按 W 发送（µs）"},
    "col.comm_us": {"en": "communication (µs)", "zh": "通信（µs）"},
    "col.step_us": {"en": "predicted step (µs)", "zh": "预测单步时间（µs）"},
    "col.ring_step_us": {"en": "ring model step (µs)", "zh": "环形模型单步时间（µs）"},
    "types_section.heading": {"en": "Sharding in types", "zh": "类型中的分片"},
    "types_section.intro": {
        "en": "In explicit sharding every array's type carries its sharding, and JAX works out the type of each "
              "result from its operands' types. Where that is ambiguous it refuses to guess. The examples below "
              "run on a one-axis Explicit mesh `X` of the {devices} devices (JAX's documentation, \"Distributed "
              "arrays and automatic parallelization\" and \"Autodiff and sharding\"), each read back from what it "
              "compiled to.",
        "zh": "在显式分片中，每个数组的类型都带着它的分片方式，JAX 根据操作数的类型推出每个结果的类型。有歧义的地方它拒绝猜测。"
              "下面的例子运行在由这 {devices} 台设备组成的单轴 Explicit 网格 `X` 上（JAX 文档“Distributed arrays and "
              "automatic parallelization”和“Autodiff and sharding”），每个都从它编译出的程序中读回结果。",
    },
    "dot.heading": {"en": "An ambiguous product", "zh": "有歧义的乘积"},
    "dot.explain": {
        "en": "`jnp.matmul(a, b)` with a: {lhs} and b: {rhs}: the contracted dimension is split on both sides, so "
              "each device holds only a partial sum. JAX raises {kind} and asks for `out_sharding`; its message, "
              "verbatim:",
        "zh": "`jnp.matmul(a, b)`，其中 a：{lhs}，b：{rhs}：被收缩的维度在两边都被切分，所以每台设备只持有部分和。JAX 抛出 "
              "{kind} 并要求给出 `out_sharding`；它的原话如下：",
    },
    "dot.no_error": {"en": "On this JAX the product did not raise.", "zh": "在当前 JAX 上这个乘积没有报错。"},
    "dot.choices": {
        "en": "Each valid `out_sharding`, run, with the collective the compiler inserted (read from the compiled "
              "HLO) and the largest difference from NumPy's product. `jax.reshard` of the unreduced result to "
              "`P()` runs the deferred all-reduce.",
        "zh": "每个合法的 `out_sharding` 都实际运行，并列出编译器插入的集合通信（读自编译后的 HLO）以及与 NumPy 乘积的最大差。"
              "对未归约的结果做 `jax.reshard` 到 `P()`，就运行了推迟的全归约。",
    },
    "dot.sliced": {
        "en": "For {specs} the partitioner chose an all-reduce whose result each device then slices (marked "
              "\"sliced\"), not a reduce-scatter: its choice for this product, not a limit of XLA:CPU, which compiles "
              "`jax.shard_map` with `lax.psum_scatter` to a reduce-scatter (the collectives lab).",
        "zh": "对 {specs}，分区器选择了先全归约、再由每台设备切出自己那一块（标为 sliced），而不是归约散射：这是它对这个乘积的"
              "选择，不是 XLA:CPU 的限制——`jax.shard_map` 加 `lax.psum_scatter` 在 XLA:CPU 上编译出的就是归约散射"
              "（见集合通信实验）。",
    },
    "dot.unreduced_refused": {
        "en": "The unreduced result holds partial sums. This JAX refuses to read it as one array; its message, "
              "verbatim (another JAX may say otherwise, or read it):",
        "zh": "未归约的结果持有部分和。当前 JAX 拒绝把它当作一个数组读出；它的原话如下（别的 JAX 版本可能说法不同，也可能"
              "能读出）：",
    },
    "dot.unreduced_read": {
        "en": "With one device the unreduced result already holds the whole sum, and this JAX reads it as one array.",
        "zh": "只有一台设备时，未归约的结果已经就是完整的和，当前 JAX 能把它当作一个数组读出。",
    },
    "dot.silent": {
        "en": "When a is replicated instead, {silent_lhs} @ {rhs} is not ambiguous: JAX accepts it silently and the compiled "
              "program runs {collectives}. Explicit sharding makes only the ambiguous case an error; a silent "
              "reshard still costs bytes, and the HLO shows them.",
        "zh": "若 a 改为副本，{silent_lhs} @ {rhs} 没有歧义：JAX 不声不响地接受它，编译后的程序运行 {collectives}。显式分片只把"
              "有歧义的情形变成错误；无声的重新分片仍然要花字节，HLO 会显示出来。",
    },
    "col.out_sharding": {"en": "out_sharding", "zh": "out_sharding"},
    "col.result_type": {"en": "jax.typeof(result)", "zh": "jax.typeof(结果)"},
    "col.per_device_shape": {"en": "one device's block", "zh": "单台设备的块"},
    "col.collectives_hlo": {"en": "collectives (HLO)", "zh": "集合通信（HLO）"},
    "col.max_error": {"en": "max |difference| from NumPy", "zh": "与 NumPy 的最大差"},
    "col.error": {"en": "what JAX said", "zh": "JAX 的报错"},
    "none": {"en": "none", "zh": "无"},
    "sliced": {"en": "sliced", "zh": "sliced"},
    "axes.heading": {"en": "`auto_axes`, `explicit_axes`, and `x.sharding` against `jax.typeof(x).sharding`",
                     "zh": "`auto_axes`、`explicit_axes`，以及 `x.sharding` 与 `jax.typeof(x).sharding`"},
    "axes.explain": {
        "en": "`x.sharding` is where an array's blocks are (the compiler's choice, concrete); "
              "`jax.typeof(x).sharding` is what its type says. On an Explicit mesh the two agree. Row by row: the "
              "two agree at the top level; adding f32[n@X,n] to f32[n,n@X] would name X twice, and JAX says so; "
              "`auto_axes` runs the same addition with the compiler choosing inside and an `out_sharding` given "
              "for the result; inside `auto_axes` the type forgets the sharding while the concrete one keeps it; "
              "on an Auto mesh the type never names it; `explicit_axes` inside a jit on that Auto mesh names it "
              "again.",
        "zh": "`x.sharding` 是数组各块实际所在的位置（编译器的选择，具体的）；`jax.typeof(x).sharding` 是它的类型所写的。"
              "在 Explicit 网格上两者一致。逐行来看：在顶层两者一致；把 f32[n@X,n] 与 f32[n,n@X] 相加会让 X 出现两次，JAX "
              "会指出这一点；`auto_axes` 运行同一个加法，内部由编译器选择，并为结果给出 `out_sharding`；在 `auto_axes` "
              "内部，类型忘记了分片，而具体的分片仍保留着；在 Auto 网格上类型从不写出分片；在该 Auto 网格上的 jit 里，"
              "`explicit_axes` 又让类型写出分片。",
    },
    "col.code": {"en": "code", "zh": "代码"},
    "col.concrete": {"en": "x.sharding (concrete), or what JAX said", "zh": "x.sharding（具体的），或 JAX 的报错"},
    "col.typed": {"en": "jax.typeof(x) (the type)", "zh": "jax.typeof(x)（类型）"},
    "accum.heading": {"en": "Gradient accumulation with `reduced` weights", "zh": "使用 `reduced` 权重的梯度累积"},
    "accum.explain": {
        "en": "One SGD step accumulates the gradients of K = {k} micro-batches, each split over the {devices} "
              "devices. With replicated weights each micro-batch's gradient is all-reduced inside the scan; with "
              "the weights cast to `P(reduced={{'X'}})` (type {weight_type}) each gradient comes out unreduced "
              "({gradient_type}), the accumulator stays unreduced across the scan, and one `jax.reshard` to `P()` "
              "all-reduces it once.",
        "zh": "一个 SGD 步骤累积 K = {k} 个微批次的梯度，每个微批次都切分到 {devices} 台设备上。权重为副本时，每个微批次的梯度"
              "都在 scan 内做全归约；把权重转换为 `P(reduced={{'X'}})`（类型 {weight_type}）后，每个梯度以未归约的形式得出"
              "（{gradient_type}），累加器在整个 scan 中保持未归约，最后一次 `jax.reshard` 到 `P()` 只做一次全归约。",
    },
    "accum.result": {
        "en": "Counted in the compiled HLO: {replicated:g} all-reduces per step with replicated weights, "
              "{reduced:g} with `reduced` weights; the two updates differ by at most {difference:.2g}, and both "
              "are within {error:.2g} of NumPy's.",
        "zh": "在编译后的 HLO 中数得：权重为副本时每步 {replicated:g} 次全归约，使用 `reduced` 权重时 {reduced:g} 次；两个更新"
              "最多相差 {difference:.2g}，都与 NumPy 的结果相差在 {error:.2g} 以内。",
    },
    "accum.one_device": {
        "en": "With one device there is no other device to sum with: the compiler inserts no all-reduce in either "
              "program ({replicated:g} and {reduced:g}). Run the lab with more devices to see K against 1.",
        "zh": "只有一台设备时没有其他设备可求和：编译器在两个程序中都不插入全归约（{replicated:g} 次和 {reduced:g} 次）。"
              "用更多设备运行本实验，才能看到 K 次与 1 次的对比。",
    },
    "accum.error": {
        "en": "This JAX could not run the `reduced` version; what it said:",
        "zh": "当前 JAX 无法运行 `reduced` 版本；它的报错如下：",
    },
    "nothing_yet": {
        "en": "Press Train to train on the chosen shape, or predict and Measure every shape.",
        "zh": "点击“训练”在所选形状上训练，或者先预测，再点击“实测每种形状”。",
    },
    "error.unknown_mesh_shape": {"en": "A mesh shape is written data x model (4x2); got {shape!r}.",
                                 "zh": "网格形状写作 data x model（如 4x2）；收到的是 {shape!r}。"},
}
