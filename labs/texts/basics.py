TEXTS = {
    "title": {"en": "Parallel basics", "zh": "并行基础"},
    "summary": {
        "en": "Cut a batch into D shards and check that the parallel result equals one device's.",
        "zh": "把一个批次切成 D 个分片，并验证并行结果与单设备结果一致。",
    },
    "intro": {
        "en": "A kitchen gets an order for a thousand plates. One cook would need all night; four cooks, each "
              "with a quarter of the order at their own stove, finish four times sooner. Training works the "
              "same way: **data parallelism** gives each device its own slice of the batch and runs the same "
              "program on every slice at once.\n\n"
              "Two roles: the **host** (CPU and main memory) takes the order, cuts it and collects the result; "
              "the **devices** (GPUs, TPUs, or CPU devices JAX simulates where there are none — the sidebar says "
              "which) do the heavy work. "
              "`jax.pmap` (*parallel map*) runs one function on every device, each on its own slice of the "
              "input's leading axis.",
        "zh": "厨房接到一千份菜的大单。一位厨师要忙一整夜；四位厨师各领四分之一，在各自的灶台同时开工，"
              "就能快四倍。训练也是如此：**数据并行**把批次切给每台设备，每台设备在自己那一份上运行同一段程序。\n\n"
              "两种角色：**主机**（CPU 与主内存）负责接单、切分、汇总结果；**设备**（GPU、TPU；没有它们时则是 JAX 模拟的 CPU "
              "设备——侧边栏会说明是哪种）负责重活。`jax.pmap`（*parallel map*，并行映射）在每台设备上运行同一个函数，"
              "每台设备处理输入前导维度上属于自己的那一片。",
    },
    "formula_intro": {
        "en": "Each of the D devices gets b samples of the global batch B:",
        "zh": "D 台设备中的每一台，从全局批次 B 中分到 b 个样本：",
    },
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.batch.help": {
        "en": "Samples in one step, across all devices.",
        "zh": "一步中所有设备合计处理的样本数。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.policy": {"en": "When D does not divide B", "zh": "当 B 不能被 D 整除时"},
    "w.policy.error": {"en": "error", "zh": "报错"},
    "w.policy.drop": {"en": "drop the tail", "zh": "丢弃尾部"},
    "w.policy.pad": {"en": "pad with a mask", "zh": "填充并加掩码"},
    "policy.explain": {
        "en": "- **error** — refuse and name the nearest batch sizes that split evenly. The safe default: "
              "nothing happens silently.\n"
              "- **drop the tail** — keep D·⌊B/D⌋ samples and skip the rest this step (common for training "
              "loaders, `drop_last=True`). The skipped samples are simply not seen.\n"
              "- **pad with a mask** — append zero samples up to D·⌈B/D⌉ and send a mask (1 = real, 0 = pad) "
              "with them, so sums and means count only real samples. Needed when every sample matters, "
              "e.g. evaluation.",
        "zh": "- **报错**：拒绝执行，并给出最接近的可整除批次大小。这是稳妥的默认值：不会悄悄发生任何事。\n"
              "- **丢弃尾部**：只保留 D·⌊B/D⌋ 个样本，余下的本步跳过（训练数据加载器常用，`drop_last=True`）。"
              "被跳过的样本这一步看不到。\n"
              "- **填充并加掩码**：补零样本到 D·⌈B/D⌉ 个，并附带掩码（1 = 真实，0 = 填充），"
              "求和与求平均时只计真实样本。每个样本都必须计入时（如评估）需要这样做。",
    },
    "plan.heading": {"en": "Who gets which sample", "zh": "哪个样本分给哪台设备"},
    "metric.per_device": {"en": "b per device", "zh": "每台设备 b"},
    "metric.dropped": {"en": "dropped", "zh": "丢弃"},
    "metric.padded": {"en": "padded", "zh": "填充"},
    "metric.shape": {"en": "sharded shape", "zh": "分片后形状"},
    "chart.slot": {"en": "position in the shard (sample number written in the cell)",
                   "zh": "分片内的位置（格中数字为样本编号）"},
    "chart.owner": {"en": "device", "zh": "设备"},
    "chart.holder": {"en": "held by", "zh": "归属"},
    "chart.dropped": {"en": "dropped", "zh": "丢弃"},
    "chart.pad": {"en": "padding (mask 0)", "zh": "填充（掩码为 0）"},
    "chart.real": {"en": "real samples", "zh": "真实样本数"},
    "chart.partial": {"en": "masked sum on the device", "zh": "设备上的掩码求和"},
    "chart.first_cells": {
        "en": "Showing the first {shown} of {total} cells.",
        "zh": "显示 {total} 个格子中的前 {shown} 个。",
    },
    "compute.heading": {"en": "A real parallel computation", "zh": "一次真实的并行计算"},
    "compute.explain": {
        "en": "Each device computes a per-sample loss ℓ(x) = mean(x²) on its shard, multiplies it by the mask and "
              "sums it. `lax.psum` adds the D partial sums and the D sample counts across devices, and every "
              "device divides: mean = Σ_d s_d / Σ_d n_d. One device computing the mean over the same samples "
              "must get the same number.",
        "zh": "每台设备在自己的分片上计算逐样本损失 ℓ(x) = mean(x²)，乘以掩码后求和。`lax.psum` 跨设备把 D 个部分和"
              "与 D 个样本数分别相加，每台设备再相除：mean = Σ_d s_d / Σ_d n_d。单台设备对同样的样本求平均，"
              "必须得到同一个数。",
    },
    "metric.parallel": {"en": "pmap + psum mean", "zh": "pmap + psum 平均值"},
    "metric.single": {"en": "single-device mean", "zh": "单设备平均值"},
    "metric.diff": {"en": "max abs difference", "zh": "最大绝对误差"},
    "check.ok": {
        "en": "✅ The parallel mean equals the single-device mean (max abs difference {diff:.2e}).",
        "zh": "✅ 并行平均值等于单设备平均值（最大绝对误差 {diff:.2e}）。",
    },
    "check.bad": {
        "en": "❌ The parallel mean differs from the single-device mean by {diff:.2e}.",
        "zh": "❌ 并行平均值与单设备平均值相差 {diff:.2e}。",
    },
    "drop_note": {
        "en": "With the tail dropped, both means are over the {kept} kept samples.",
        "zh": "丢弃尾部后，两个平均值都只针对保留下来的 {kept} 个样本。",
    },
    "error.not_divisible": {
        "en": "A batch of {batch} does not split evenly over {devices} devices. Nearest batch sizes that do: "
              "{nearest}. Or choose *drop the tail* or *pad with a mask*.",
        "zh": "{batch} 个样本无法平均分给 {devices} 台设备。最接近的可整除批次大小：{nearest}。"
              "也可以选择“丢弃尾部”或“填充并加掩码”。",
    },
    "error.nothing_left": {
        "en": "Dropping the remainder of {batch} samples over {devices} devices leaves no samples at all. "
              "Use fewer devices, a larger batch, or *pad with a mask*.",
        "zh": "把 {batch} 个样本分给 {devices} 台设备并丢弃余数后，一个样本都不剩。"
              "请减少设备数、增大批次，或选择“填充并加掩码”。",
    },
    "error.unknown_policy": {
        "en": "Unknown remainder policy `{value}`; choose one of {options}.",
        "zh": "未知的余数策略 `{value}`；请从 {options} 中选择。",
    },
}
