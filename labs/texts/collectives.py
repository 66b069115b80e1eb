TEXTS = {
    "title": {"en": "Collectives", "zh": "通信原语"},
    "summary": {
        "en": "Run pmean, psum, all_gather and the rest, and check them against NumPy.",
        "zh": "运行 pmean、psum、all_gather 等集合通信，并与 NumPy 对照。",
    },
    "intro": {
        "en": "Each cook seasons their own pan, yet the whole table must taste the same. So everyone pours their "
              "sauce into one bowl, it is stirred, and each takes a ladle back. That pour–stir–share is an "
              "**all-reduce**: every device contributes, the contributions are combined, and every device gets "
              "the combined result. A **collective** is such a step that all devices named by the same "
              "`axis_name` take together. Pick one below: the data are random (from the seed), the result is "
              "what the devices really hold after running it, and NumPy checks it.",
        "zh": "每位厨师各调各的酱汁，可整桌菜必须一个味道。于是大家把酱汁倒进同一个盆，搅匀，再各舀一勺回去。"
              "这个“倒入—搅匀—分回”就是**全归约**（all-reduce）：每台设备贡献自己的数值，合并后每台设备都拿到"
              "合并结果。**集合通信**就是所有使用同一个 `axis_name` 的设备一起完成的这一步。在下面选一个："
              "数据是随机生成的（由种子决定），结果是设备运行后真实持有的数值，并由 NumPy 核对。",
    },
    "w.op": {"en": "Collective", "zh": "集合通信"},
    "w.op.pmean": {"en": "pmean (all-reduce: mean)", "zh": "pmean（全归约：平均）"},
    "w.op.psum": {"en": "psum (all-reduce: sum)", "zh": "psum（全归约：求和）"},
    "w.op.pmax": {"en": "pmax (all-reduce: max)", "zh": "pmax（全归约：最大值）"},
    "w.op.pmin": {"en": "pmin (all-reduce: min)", "zh": "pmin（全归约：最小值）"},
    "w.op.all_gather": {"en": "all_gather (stacked)", "zh": "all_gather（堆叠）"},
    "w.op.all_gather_tiled": {"en": "all_gather, tiled=True (concatenated)", "zh": "all_gather，tiled=True（拼接）"},
    "w.op.psum_scatter": {"en": "psum_scatter (reduce-scatter)", "zh": "psum_scatter（归约散射）"},
    "w.op.psum_scatter_tiled": {"en": "psum_scatter, tiled=True", "zh": "psum_scatter，tiled=True"},
    "w.op.ppermute": {"en": "ppermute (ring shift by one)", "zh": "ppermute（环上移一位）"},
    "w.op.all_to_all": {"en": "all_to_all", "zh": "all_to_all（全交换）"},
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.size": {"en": "Values per device n", "zh": "每台设备的元素数 n"},
    "w.seed": {"en": "Random seed", "zh": "随机种子"},
    "use.pmean": {
        "en": "**In training:** the gradient all-reduce of data parallelism. Every device computes g_d on its "
              "shard; after `pmean` all hold the same mean gradient, so all replicas apply the same update "
              "w ← w − η ḡ and stay identical.",
        "zh": "**训练中的用途：** 数据并行的梯度全归约。每台设备在自己的分片上算出 g_d；`pmean` 之后所有设备"
              "持有同一个平均梯度，于是所有副本执行同样的更新 w ← w − η ḡ，始终保持一致。",
    },
    "use.psum": {
        "en": "**In training:** sums across devices — total loss and sample counts for a correct global mean "
              "(see the masked mean on *Parallel basics*), gradients when the loss is already divided by the "
              "global batch, and global-norm gradient clipping: each device sums the squares of its gradient "
              "entries, `psum` adds them up, and ‖g‖ = √(Σ_d ‖g_d‖²) is the norm of the whole gradient.",
        "zh": "**训练中的用途：** 跨设备求和——总损失和样本数（得到正确的全局平均，见“并行基础”中的掩码平均），"
              "在损失已除以全局批次时对梯度求和，以及按全局范数裁剪梯度：每台设备先求自己梯度元素的平方和，"
              "`psum` 把它们加起来，‖g‖ = √(Σ_d ‖g_d‖²) 就是整个梯度的范数。",
    },
    "use.pmax": {
        "en": "**In training:** global maxima — e.g. the max logit for a numerically stable softmax over a "
              "sharded vocabulary, or an overflow check in mixed precision (any device with a non-finite "
              "gradient sets a flag of 1). Not for clipping: the largest per-device norm is not the norm of "
              "the whole gradient; global-norm clipping uses a `psum` of squared norms.",
        "zh": "**训练中的用途：** 全局最大值——例如词表分片时为数值稳定的 softmax 求最大 logit，"
              "或混合精度中的溢出检查（任何一台设备出现非有限梯度就把标志置为 1）。不要用于梯度裁剪："
              "各设备范数的最大值不是整个梯度的范数；按全局范数裁剪要对平方范数做 `psum`。",
    },
    "use.pmin": {
        "en": "**In training:** global minima — e.g. in a multi-process (multi-host) run, where each process "
              "reads its own data, agreeing on the smallest number of batches any process has left, so that no "
              "process enters a step the others skip (its collective would wait for them). Within one process "
              "pmap runs every device in the same step, so this cannot happen there.",
        "zh": "**训练中的用途：** 全局最小值——例如在多进程（多主机）运行中，每个进程读取自己的数据，"
              "需要就各进程剩余批次数的最小值达成一致，避免某个进程进入其他进程跳过的一步"
              "（它的集合通信会一直等待）。在单个进程内，pmap 让所有设备执行同一步，不会出现这种情况。",
    },
    "use.all_gather": {
        "en": "**In training:** gathering per-device metrics or predictions for evaluation, and rebuilding full "
              "parameters from shards before a layer runs (ZeRO-3 / FSDP).",
        "zh": "**训练中的用途：** 收集各设备的指标或预测结果用于评估；在层计算前由分片重建完整参数（ZeRO-3 / FSDP）。",
    },
    "use.all_gather_tiled": {
        "en": "**In training:** the same gathering, concatenated along the existing axis instead of stacked — "
              "what you want when the pieces are slices of one long vector (sharded parameters, a sharded batch).",
        "zh": "**训练中的用途：** 同样是收集，但沿已有维度拼接而不是新增一维堆叠——当各片本是同一长向量的切片时"
              "（分片参数、分片批次）正好需要这种形式。",
    },
    "use.psum_scatter": {
        "en": "**In training:** reduce-scatter — each device ends with the sum of only its own part. ZeRO-style "
              "optimizers use it so that each device updates just its shard of the parameters; a reduce-scatter "
              "followed by an all-gather is exactly an all-reduce. Untiled, the scattered dimension must equal "
              "the device count: here each device's n values are scattered, so n must be D, and device d keeps "
              "element d of the sum. Nothing is reshaped for you: with another n the lab runs it anyway and "
              "shows the error JAX raises.",
        "zh": "**训练中的用途：** 归约散射——每台设备只得到属于自己那一部分的和。ZeRO 类优化器用它让每台设备只更新"
              "自己那份参数分片；归约散射再接全收集，恰好等于一次全归约。不拼接（untiled）时，被散射的维度必须"
              "等于设备数：这里散射的是每台设备的 n 个值，所以 n 必须等于 D，第 d 台设备保留和向量的第 d 个元素。"
              "实验不会替你 reshape：换成其他 n 时照样运行，并展示 JAX 抛出的错误。",
    },
    "use.psum_scatter_tiled": {
        "en": "**In training:** the same reduce-scatter on a flat vector: each device keeps n/D consecutive "
              "values of the sum (how a flattened gradient buffer is sharded).",
        "zh": "**训练中的用途：** 在一维向量上做同样的归约散射：每台设备保留和向量中连续的 n/D 个值"
              "（展平的梯度缓冲区就是这样分片的）。",
    },
    "use.ppermute": {
        "en": "**In training:** point-to-point passing along a ring — pipeline parallelism hands activations to "
              "the next stage, ring attention passes key/value blocks, and ring all-reduce is built from such steps.",
        "zh": "**训练中的用途：** 沿环的点对点传递——流水线并行把激活交给下一阶段，环形注意力传递 key/value 块，"
              "环形全归约也由这样的步骤组成。",
    },
    "use.all_to_all": {
        "en": "**In training:** resharding — chunk c of device d goes to device c. Mixture-of-experts layers send "
              "each token to its expert's device, and sequence parallelism switches from sharding the sequence to "
              "sharding the heads.",
        "zh": "**训练中的用途：** 重新分片——设备 d 的第 c 块发往设备 c。混合专家层把每个 token 发到其专家所在设备；"
              "序列并行借此从按序列分片切换为按注意力头分片。",
    },
    "formula": {"en": "What every device d holds afterwards:", "zh": "之后每台设备 d 持有的内容："},
    "formula.elementwise": {
        "en": "x_s is device s's vector of n values; operations act element by element.",
        "zh": "x_s 是设备 s 上的 n 维向量；运算逐元素进行。",
    },
    "formula.chunks": {
        "en": "x_s is device s's vector of n values; v_[c] is chunk c of a vector cut into D chunks of n/D values.",
        "zh": "x_s 是设备 s 上的 n 维向量；v_[c] 表示把向量切成 D 块（每块 n/D 个值）后的第 c 块。",
    },
    "shapes": {
        "en": "Per device: input shape {inp} → output shape {out}.",
        "zh": "每台设备：输入形状 {inp} → 输出形状 {out}。",
    },
    "before": {"en": "Before: each device's input", "zh": "之前：每台设备的输入"},
    "after": {"en": "After: each device's output", "zh": "之后：每台设备的输出"},
    "chart.device": {"en": "device", "zh": "设备"},
    "chart.element": {"en": "element", "zh": "元素"},
    "chart.value": {"en": "value", "zh": "数值"},
    "check.ok": {
        "en": "✅ Matches NumPy on all {devices} devices (max abs error {error:.2e}).",
        "zh": "✅ 在全部 {devices} 台设备上与 NumPy 一致（最大绝对误差 {error:.2e}）。",
    },
    "check.bad": {
        "en": "❌ Differs from NumPy (max abs error {error:.2e}).",
        "zh": "❌ 与 NumPy 不一致（最大绝对误差 {error:.2e}）。",
    },
    "error.size_not_divisible": {
        "en": "`{op}` cuts each device's {size} values into {devices} chunks, one per device, so n must be a "
              "multiple of {devices}. Choose another n (e.g. {devices}) or another device count.",
        "zh": "`{op}` 要把每台设备的 {size} 个值切成 {devices} 块（每台设备一块），所以 n 必须是 {devices} 的倍数。"
              "请换一个 n（例如 {devices}）或换一个设备数。",
    },
    "scatter.needs_n_equal_d": {
        "en": "Untiled `psum_scatter` needs the scattered dimension to equal the device count: n = {size} on "
              "{devices} devices does not. Choose n = {devices}, or `psum_scatter, tiled=True`, which needs n "
              "divisible by {devices}. This is what JAX raised here:",
        "zh": "不拼接的 `psum_scatter` 要求被散射的维度等于设备数：{devices} 台设备上 n = {size} 不满足。"
              "请选择 n = {devices}，或改用 `psum_scatter, tiled=True`（它要求 n 能被 {devices} 整除）。"
              "下面是 JAX 在此处抛出的错误：",
    },
    "error.unknown_op": {
        "en": "Unknown collective `{op}`; choose one of {options}.",
        "zh": "未知的集合通信 `{op}`；请从 {options} 中选择。",
    },
}
