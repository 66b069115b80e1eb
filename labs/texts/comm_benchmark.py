TEXTS = {
    "title": {"en": "Communication benchmark", "zh": "通信基准"},
    "summary": {
        "en": "Measure collectives and fit a latency–bandwidth model.",
        "zh": "测量集合通信并拟合延迟—带宽模型。",
    },
    "intro": {
        "en": "A data-parallel step costs compute **plus** communication: T_step = T_compute + T_comm. "
              "Compute shrinks as D devices share the batch; the gradient all-reduce does not, and it grows "
              "with D. This lab times the three collectives of data parallelism — all-reduce (`psum`, and "
              "`pmean` = psum ÷ D), all-gather and reduce-scatter (`psum_scatter`) — over message sizes and "
              "device counts, and fits the classic α-β ring model to what it measured.",
        "zh": "数据并行的一步 = 计算 **加上** 通信：T_step = T_compute + T_comm。D 台设备分摊批次后计算变少，"
              "而梯度的全归约并不会变少，反而随 D 增长。本实验测量数据并行的三种集合通信——全归约（`psum`，"
              "以及 `pmean` = psum ÷ D）、全收集和归约散射（`psum_scatter`）——在不同消息大小和设备数下的耗时，"
              "并用经典的 α-β 环形模型拟合测量结果。",
    },
    "method.title": {"en": "How it is measured", "zh": "测量方法"},
    "method.body": {
        "en": "- **Message size S** (nccl-tests convention): the per-device buffer for all-reduce; the per-device "
              "*output* for all-gather (each device contributes S/D); the per-device *input* for reduce-scatter "
              "(each keeps S/D). float32 values, S from 1 KiB to 64 MiB.\n"
              "- **Every timing**: the first call (trace + compile + run) is kept apart, one untimed warm-up "
              "call follows, then `repeats` timed calls, each ended by `block_until_ready` — dispatch is "
              "asynchronous, so a clock read without it measures nothing.\n"
              "- **Per call**: a pmapped program with one collective, dispatched from Python each time "
              "(includes dispatch and allocating the output).\n"
              "- **Chained** (the collective itself): one pmapped program runs the collective in a "
              "`lax.fori_loop`, each iteration feeding the next, with the trip count k as a runtime argument. "
              "It is timed at two lengths k_short < k_long, alternately (k_long = 256 for small S down to 4 for "
              "large S, k_short = k_long / 4), and each repeat pair gives the slope "
              "(t(k_long) − t(k_short)) / (k_long − k_short). Whatever an execution pays once — dispatch, "
              "allocating its output and temporary buffers, the page faults of touching them for the first "
              "time (at 64 MiB they can cost more than the collective) — is in both times and cancels; what is "
              "left is one more collective in a warm loop. k_short ≥ 1, so the first iteration is in both. "
              "The input is donated, so the loop works in place.\n"
              "- **Shown**: the median of the repeats as the line, min…max as the band / error bars.\n"
              "- **algbw** = S / t; **busbw** = algbw × 2(D−1)/D for all-reduce and × (D−1)/D for "
              "all-gather and reduce-scatter: what each link of a ring carries, comparable across D.\n"
              "- **Ceiling**: a jitted element-wise copy (y = x + 1: read S, write S) on one device, timed the "
              "same way; S / t is the machine's memory-copy bandwidth (the grey dotted line).\n"
              "- **Fit**: the (α, β) whose worst ratio max(model / measured, measured / model) over all sizes "
              "is smallest (a minimax fit), so every size counts by its ratio and a model 2× too slow is as bad "
              "as one 2× too fast; fitted to the chained medians, per collective and D, and once over all D. "
              "That worst ratio is how far this machine is from *any* α-β line: buffers that fit in the CPU's "
              "cache move several times faster than those that do not, and one β cannot match both.",
        "zh": "- **消息大小 S**（沿用 nccl-tests 的约定）：全归约为每台设备的缓冲区；全收集为每台设备的*输出*"
              "（每台设备贡献 S/D）；归约散射为每台设备的*输入*（每台设备保留 S/D）。数值为 float32，S 从 1 KiB 到 64 MiB。\n"
              "- **每次计时**：第一次调用（追踪 + 编译 + 运行）单独计时，随后一次不计时的预热调用，再计时 `repeats` 次，"
              "每次都以 `block_until_ready` 结束——派发是异步的，不等待结果的计时毫无意义。\n"
              "- **逐次调用**：每次从 Python 派发一个只含一次集合通信的 pmap 程序（包含派发开销和分配输出的开销）。\n"
              "- **串联**（集合通信本身）：一个 pmap 程序在 `lax.fori_loop` 中重复执行集合通信，前一次的输出是"
              "后一次的输入，循环次数 k 是运行时参数。它在两个长度 k_short < k_long 下交替计时（小 S 时 k_long = 256，"
              "大 S 时降到 4；k_short = k_long / 4），每对重复给出一个斜率 (t(k_long) − t(k_short)) / (k_long − k_short)。"
              "每次执行只付一次的开销——派发、分配输出和临时缓冲区、首次写入这些内存时的缺页（64 MiB 时可能比集合通信本身"
              "还贵）——同时出现在两个时间里，相减后抵消；剩下的就是热循环中多出的一次集合通信。k_short ≥ 1，"
              "因此第一次迭代在两个时间里都有。其输入被捐赠（donate），循环原地更新。\n"
              "- **展示**：折线为各次重复的中位数，阴影带 / 误差线为最小值…最大值。\n"
              "- **algbw** = S / t；**busbw** = algbw × 2(D−1)/D（全归约）或 × (D−1)/D（全收集、归约散射）："
              "即环上每条链路承载的带宽，可在不同 D 之间比较。\n"
              "- **上限参照**：在一台设备上用 jit 编译的逐元素拷贝（y = x + 1：读 S、写 S），同样方式计时；"
              "S / t 就是本机的内存拷贝带宽（灰色点线）。\n"
              "- **拟合**：选取在所有大小上最坏比值 max(模型 / 实测, 实测 / 模型) 最小的 (α, β)（极小极大拟合），"
              "使各个大小按比值同等计入，模型慢 2 倍与快 2 倍同样糟糕；拟合对象是串联测量的中位数，按集合通信和 D "
              "分别拟合，另对所有 D 合并拟合一次。这个最坏比值说明本机离*任何*一条 α-β 直线有多远：能放进 CPU 缓存的"
              "缓冲区比放不进的快好几倍，一个 β 无法同时吻合两者。",
    },
    "need_two": {
        "en": "A collective needs at least 2 devices; this runtime has {devices}.",
        "zh": "集合通信至少需要 2 台设备；当前运行时只有 {devices} 台。",
    },
    "w.op": {"en": "Collective", "zh": "集合通信"},
    "w.op.psum": {"en": "all-reduce (psum / pmean)", "zh": "全归约（psum / pmean）"},
    "w.op.all_gather": {"en": "all-gather", "zh": "全收集（all_gather）"},
    "w.op.psum_scatter": {"en": "reduce-scatter (psum_scatter)", "zh": "归约散射（psum_scatter）"},
    "w.op.all": {"en": "all three", "zh": "全部三种"},
    "w.max_size": {"en": "Largest message S per device", "zh": "每台设备的最大消息 S"},
    "w.max_size.64K": {"en": "64 KiB", "zh": "64 KiB"},
    "w.max_size.256K": {"en": "256 KiB", "zh": "256 KiB"},
    "w.max_size.1M": {"en": "1 MiB", "zh": "1 MiB"},
    "w.max_size.4M": {"en": "4 MiB", "zh": "4 MiB"},
    "w.max_size.16M": {"en": "16 MiB", "zh": "16 MiB"},
    "w.max_size.64M": {"en": "64 MiB", "zh": "64 MiB"},
    "w.view": {"en": "Timing shown", "zh": "展示的计时"},
    "w.view.chained": {"en": "the collective itself (slope of the chained loop)", "zh": "集合通信本身（串联循环的斜率）"},
    "w.view.per_call": {"en": "one dispatched call", "zh": "单次派发调用"},
    "w.max_devices": {"en": "Up to D devices", "zh": "最多 D 台设备"},
    "w.max_devices.help": {
        "en": "Measured at D = 2, 4, 8, … up to this number (powers of two, so every size splits evenly).",
        "zh": "在 D = 2、4、8……直到该数处测量（取 2 的幂，保证每个大小都能均分）。",
    },
    "w.repeats": {"en": "Timed repeats per point", "zh": "每个点的计时重复次数"},
    "full": {"en": "📡 Full sweep: 3 collectives, 1 KiB–64 MiB, D = 2, 4, 8",
             "zh": "📡 完整扫描：3 种集合通信，1 KiB–64 MiB，D = 2、4、8"},
    "full.help": {
        "en": "About a minute or two on a 2-core machine; the result is cached for these settings.",
        "zh": "在 2 核机器上约一两分钟；结果按设置缓存。",
    },
    "run": {"en": "▶️ Run this sweep", "zh": "▶️ 运行此扫描"},
    "press_run": {
        "en": "No one has measured these settings on this server yet. The sweep is estimated at up to "
              "{estimate:.0f} s; press the button above to run it (its result is then shared with every visitor).",
        "zh": "这台服务器上还没有人测过这组设置。此扫描预计最多需要 {estimate:.0f} 秒；按上面的按钮运行"
              "（结果随后与所有访问者共享）。",
    },
    "shared": {
        "en": "Measured on this server {minutes} min ago for these settings (by you or another visitor); "
              "press the button above to measure again.",
        "zh": "这组设置已于 {minutes} 分钟前在这台服务器上测过（你或其他访问者）；按上面的按钮可重新测量。",
    },
    "links_note": {
        "en": "On simulated CPU devices there are no links: a \"transfer\" is a memory copy (and a sum) between "
              "threads of one process, so β here is memory bandwidth shared by all devices, and α is thread "
              "synchronisation. On GPUs/TPUs the same commands measure NVLink/ICI.",
        "zh": "在 CPU 模拟的设备上并没有真正的链路：一次“传输”只是同一进程内线程之间的内存拷贝（和求和），"
              "因此这里的 β 是所有设备共享的内存带宽，α 是线程同步的开销。在 GPU/TPU 上，同样的命令测量的是 NVLink/ICI。",
    },
    "plan": {
        "en": "Sweep: {ops} · D = {devices} · S = {low} … {high} · {repeats} repeats · estimated ≤ {estimate:.0f} s",
        "zh": "扫描：{ops} · D = {devices} · S = {low} … {high} · 重复 {repeats} 次 · 预计 ≤ {estimate:.0f} 秒",
    },
    "progress": {"en": "Measuring {done}/{total} {label}", "zh": "测量中 {done}/{total} {label}"},
    "ran": {
        "en": "Measured in {wall:.1f} s. Memory-copy ceiling on one device: {ceiling:.2f} GB/s.",
        "zh": "测量用时 {wall:.1f} 秒。单设备内存拷贝上限：{ceiling:.2f} GB/s。",
    },
    "axis.bytes": {"en": "message size S (bytes per device, log)", "zh": "消息大小 S（每台设备字节数，对数）"},
    "axis.devices": {"en": "D", "zh": "D"},
    "axis.latency": {"en": "time per collective (µs, log)", "zh": "每次集合通信时间（微秒，对数）"},
    "axis.busbw": {"en": "busbw (GB/s, log)", "zh": "busbw（GB/s，对数）"},
    "chart.latency": {"en": "Latency: median, min–max band, model dashed", "zh": "延迟：中位数、最小–最大阴影带、模型为虚线"},
    "chart.busbw": {"en": "Bus bandwidth, memory-copy ceiling dotted", "zh": "总线带宽，内存拷贝上限为点线"},
    "copy_label": {"en": "memory copy GB/s", "zh": "内存拷贝 GB/s"},
    "legend": {
        "en": "Solid: measured median (band / error bars: min…max of the repeats). Dashed: the fitted ring model. "
              "Thin vertical rules: the crossover S* = D·α·β where the bandwidth term overtakes the latency term. "
              "Grey dotted: memory-copy bandwidth of one device.",
        "zh": "实线：测量中位数（阴影带 / 误差线：各次重复的最小值…最大值）。虚线：拟合的环形模型。"
              "细竖线：交叉点 S* = D·α·β，此后带宽项超过延迟项。灰色点线：单设备的内存拷贝带宽。",
    },
    "fit.title": {"en": "The α-β ring model, fitted", "zh": "拟合的 α-β 环形模型"},
    "fit.body": {
        "en": "A ring all-reduce takes 2(D−1) steps; each pays a per-hop latency α and sends S/D bytes at link "
              "bandwidth β. All-gather and reduce-scatter are half a ring. Below the crossover S*, latency "
              "dominates (fuse small gradients into one message); above it, bandwidth does.",
        "zh": "环形全归约需要 2(D−1) 步，每步付出一次单跳延迟 α，并以链路带宽 β 发送 S/D 字节。"
              "全收集和归约散射各是半个环。小于交叉点 S* 时延迟占主导（应把小梯度合并成一条消息）；大于它时带宽占主导。",
    },
    "col.op": {"en": "collective", "zh": "集合通信"},
    "col.devices": {"en": "D", "zh": "D"},
    "col.alpha": {"en": "α (µs per hop)", "zh": "α（微秒/跳）"},
    "col.beta": {"en": "β (GB/s)", "zh": "β（GB/s）"},
    "col.crossover": {"en": "crossover S* (KiB)", "zh": "交叉点 S*（KiB）"},
    "col.r2": {"en": "R²", "zh": "R²"},
    "col.r2_log": {"en": "R² of log t", "zh": "log t 的 R²"},
    "col.worst": {"en": "worst ratio, S ≥ 64 KiB", "zh": "最差比值（S ≥ 64 KiB）"},
    "all_d": {"en": "all", "zh": "全部"},
    "fit.worst": {
        "en": "Worst model/measurement ratio for S ≥ 64 KiB over the per-D fits: {worst:.2f}× (either way).",
        "zh": "按 D 分别拟合时，S ≥ 64 KiB 的模型/测量最差比值：{worst:.2f} 倍（双向取大）。",
    },
    "fit.worst.why": {
        "en": "On a CPU the bandwidth falls several-fold once D × S outgrows the caches, and no single β follows "
              "both sides (the fit already splits that gap evenly); on a loaded machine the large sizes also "
              "share memory bandwidth and cores with other programs, which widens the gap.",
        "zh": "在 CPU 上，一旦 D × S 超出缓存，带宽会下降数倍，单一的 β 无法同时吻合两侧（拟合已把这个差距平分到两边）；"
              "机器负载高时，大消息还要与其他程序争用内存带宽和 CPU 核，差距会更大。",
    },
    "train.title": {"en": "What this means for training", "zh": "这对训练意味着什么"},
    "train.need_psum": {
        "en": "Measure all-reduce (psum) to predict a training step's communication.",
        "zh": "请先测量全归约（psum），才能预测训练步的通信开销。",
    },
    "train.body": {
        "en": "Each data-parallel step all-reduces the full gradient. The training lab's MLP with {features} "
              "inputs and {hidden} hidden units has **{params:,}** parameters, so S = **{bytes:,}** bytes of float32 "
              "gradient (XLA fuses the per-parameter all-reduces into one). The fit predicts T_comm for that S "
              "at each D; the manual-parallelism lab's step (global batch {batch}) supplies the measured compute "
              "and the measured communication (step with `pmean` − step without; its model has no biases, "
              "a 1.5 % smaller gradient). Predicted share = T_comm / (T_compute + T_dispatch + T_comm).",
        "zh": "数据并行的每一步都要对完整梯度做全归约。训练实验中输入 {features} 维、隐藏层 {hidden} 个单元的 MLP 共有 "
              "**{params:,}** 个参数，即 S = **{bytes:,}** 字节的 float32 梯度（XLA 会把各参数的全归约融合成一次）。"
              "拟合结果给出每个 D 下该 S 的 T_comm 预测；手动并行实验的训练步（全局批次 {batch}）提供实测的计算时间"
              "和实测的通信时间（含 `pmean` 的步 − 不含的步；其模型没有偏置，梯度小 1.5%）。"
              "预测占比 = T_comm / (T_compute + T_dispatch + T_comm)。",
    },
    "w.training": {"en": "Measure a training step and compare", "zh": "测量一个训练步并比较"},
    "train.measuring": {"en": "Timing the training step on each D…", "zh": "正在各个 D 上为训练步计时……"},
    "train.col.predicted_comm": {"en": "predicted T_comm (µs)", "zh": "预测 T_comm（微秒）"},
    "train.col.measured_comm": {"en": "measured T_comm (µs)", "zh": "实测 T_comm（微秒）"},
    "train.col.rest": {"en": "measured compute + dispatch (µs)", "zh": "实测计算 + 派发（微秒）"},
    "train.col.predicted_share": {"en": "predicted share (%)", "zh": "预测占比（%）"},
    "train.col.measured_share": {"en": "measured share (%)", "zh": "实测占比（%）"},
    "train.axis.share": {"en": "communication share of the step (%)", "zh": "通信占训练步的比例（%）"},
    "train.reading": {
        "en": "A gradient this small sits far below the crossover S*, so its all-reduce is pure latency: "
              "about 2(D−1)·α, growing with D while the compute per device shrinks. That is why the share rises "
              "with D. The measured share is a difference of two noisy medians, so it can differ from the model "
              "by more than the sweep's own fit does.",
        "zh": "这么小的梯度远低于交叉点 S*，其全归约几乎全是延迟：约 2(D−1)·α，随 D 增长，而每台设备的计算量在减少。"
              "这就是占比随 D 上升的原因。实测占比是两个带噪声的中位数之差，因此它与模型的偏差可能比扫描本身的拟合更大。",
    },
    "error.no_psum_fit": {
        "en": "Measure all-reduce (psum) first.",
        "zh": "请先测量全归约（psum）。",
    },
    "log.button": {"en": "📝 Log this sweep to MLflow", "zh": "📝 将此扫描记录到 MLflow"},
    "log.done": {
        "en": "Logged as run {run_id} in {uri} (tag kind = bench; metrics per size with step = S in bytes). "
              "Compare machines on the Experiments page.",
        "zh": "已记录为 {uri} 中的运行 {run_id}（标签 kind = bench；每个大小一组指标，step = S 字节数）。"
              "可在“实验”页面比较不同机器。",
    },
    "tracking.refused": {
        "en": "The sweep was not logged: the tracking store set by `MLFLOW_TRACKING_URI` cannot be used.",
        "zh": "未记录此扫描：`MLFLOW_TRACKING_URI` 指定的跟踪存储无法使用。",
    },
    "log.fell_back": {
        "en": "The tracking server {uri} did not answer, so the run went to {fallback}.",
        "zh": "跟踪服务器 {uri} 没有响应，因此该运行已写入 {fallback}。",
    },
    "fit.simulated": {
        "en": "Reading the fit on simulated devices: β falls roughly as 1/D because all D devices share the same "
              "few cores and one memory bus, so the total work of a collective grows with D; on GPUs with a "
              "dedicated link per device, β stays about flat in D and α is microseconds of link latency.",
        "zh": "在模拟设备上解读拟合结果：β 大致按 1/D 下降，因为 D 台设备共享同样的少数几个核和一条内存总线，"
              "一次集合通信的总工作量随 D 增长；在每台设备都有专用链路的 GPU 上，β 基本不随 D 变化，α 是微秒级的链路延迟。",
    },
    "error.unknown_op": {"en": "Unknown collective `{op}`.", "zh": "未知的集合通信 `{op}`。"},
    "error.no_ops": {"en": "Choose at least one collective.", "zh": "请至少选择一种集合通信。"},
    "error.need_two_devices": {
        "en": "A collective needs at least 2 devices (got {devices}).",
        "zh": "集合通信至少需要 2 台设备（收到 {devices}）。",
    },
    "error.size_not_divisible": {
        "en": "A message of {size} bytes cannot be split into {devices} equal float32 shards.",
        "zh": "{size} 字节的消息无法均分成 {devices} 个 float32 分片。",
    },
    "error.sweep_too_big": {
        "en": "This sweep would need about {need} MiB of memory, over this deployment's limit of {limit} MiB.",
        "zh": "此扫描约需 {need} MiB 内存，超过本部署的上限 {limit} MiB。",
    },
    "error.sweep_too_long": {
        "en": "This sweep would take about {estimate:.0f} s, over this deployment's limit of {limit:.0f} s. "
              "Use a smaller largest size, fewer devices or fewer repeats.",
        "zh": "此扫描约需 {estimate:.0f} 秒，超过本部署的上限 {limit:.0f} 秒。请减小最大消息、设备数或重复次数。",
    },
    "error.too_few_points": {
        "en": "A fit needs at least 2 measurements (got {n}).",
        "zh": "拟合至少需要 2 个测量点（收到 {n} 个）。",
    },
    "error.bad_points": {
        "en": "The fit needs positive times and at least 2 devices. A median time ≤ 0 means the machine's "
              "noise swamped the difference between the two loop lengths: measure again, with more repeats.",
        "zh": "拟合需要正的时间值且设备数至少为 2。中位数时间 ≤ 0 说明机器的噪声淹没了两个循环长度之间的差值："
              "请增加重复次数后重新测量。",
    },
}
