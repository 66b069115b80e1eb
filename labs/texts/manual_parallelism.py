TEXTS = {
    "title": {"en": "Manual parallelism", "zh": "手动并行"},
    "summary": {
        "en": "Shard a batch by hand and measure what synchronization costs.",
        "zh": "手动切分批次，测量同步的代价。",
    },
    "intro": {
        "en": "Usually pmap takes an array whose leading axis already has size D. Getting there is your job: "
              "reshape the global batch of shape (B, F) into (D, B/D, F) — D labelled baskets of B/D samples "
              "each. When D does not divide B, this lab pads with zero samples and a mask (see *Parallel basics*).",
        "zh": "pmap 通常接收前导维度大小已经是 D 的数组，而把数据整理成这样是你的工作：把形状为 (B, F) 的全局批次"
              " reshape 成 (D, B/D, F)——D 个贴好编号的筐，每筐 B/D 个样本。当 B 不能被 D 整除时，"
              "本实验用零样本填充并加掩码（见“并行基础”）。",
    },
    "w.batch": {"en": "Global batch B", "zh": "全局批次 B"},
    "w.features": {"en": "Features F", "zh": "特征数 F"},
    "w.hidden": {"en": "Hidden units H", "zh": "隐藏单元数 H"},
    "w.max_devices": {"en": "Measure D = 1 … this many devices", "zh": "测量 D = 1 … 到这个设备数"},
    "w.repeats": {"en": "Timed repeats per step", "zh": "每种步骤的计时重复次数"},
    "limits": {
        "en": "Limits on this shared server: B ≤ {batch}, F ≤ {features}, H ≤ {hidden}, repeats ≤ {repeats}.",
        "zh": "本共享服务器上的上限：B ≤ {batch}，F ≤ {features}，H ≤ {hidden}，重复次数 ≤ {repeats}。",
    },
    "reshape.heading": {"en": "The reshape, by hand", "zh": "亲手 reshape"},
    "col.devices": {"en": "D", "zh": "D"},
    "col.per_device": {"en": "b per device", "zh": "每台设备 b"},
    "col.padded": {"en": "padded samples", "zh": "填充样本"},
    "col.global": {"en": "global shape", "zh": "全局形状"},
    "col.sharded": {"en": "sharded shape", "zh": "分片后形状"},
    "barrier.heading": {"en": "Communication is synchronization", "zh": "通信即同步"},
    "barrier.explain": {
        "en": "When a device reaches `lax.pmean` (or any collective) it stops and waits until **every** device "
              "of the axis has reached the same point and the values are exchanged; only then do all continue. "
              "This meeting point is a **synchronization barrier**: the slowest device sets the pace, as nobody "
              "eats until the last cook has poured their sauce. A step therefore costs its local work plus the "
              "exchange plus launching it:",
        "zh": "当一台设备执行到 `lax.pmean`（或任何集合通信）时，它会停下来，等该轴上的**所有**设备都到达同一位置"
              "并交换完数据，大家才一起继续。这个汇合点就是**同步屏障**：最慢的设备决定节奏，就像最后一位厨师"
              "倒完酱汁之前谁也不能开饭。因此一步的耗时是本地计算、数据交换与启动开销之和：",
    },
    "measure.heading": {"en": "Measured: compute vs communication", "zh": "实测：计算与通信"},
    "measure.explain": {
        "en": "The step is a two-layer regression's gradient on each device's shard, with the global batch B "
              "fixed (strong scaling: b = ⌈B/D⌉). Three versions are timed (compile excluded, median of the "
              "repeats, after `block_until_ready`): an empty pmapped step (dispatch), the gradient without a "
              "collective, and the gradient followed by `pmean`. Compute = second − first; communication = "
              "third − second (clipped at 0 when noise makes it negative).",
        "zh": "这一步是在每台设备的分片上计算两层回归模型的梯度，全局批次 B 固定（强扩展：b = ⌈B/D⌉）。"
              "计时三个版本（不含编译，取多次重复的中位数，在 `block_until_ready` 之后）：空的 pmap 步骤（派发开销）、"
              "不带集合通信的梯度、梯度之后再 `pmean`。计算 = 第二个 − 第一个；通信 = 第三个 − 第二个"
              "（噪声导致为负时记为 0）。",
    },
    "measure": {"en": "⏱️ Measure", "zh": "⏱️ 测量"},
    "measure.pending": {
        "en": "No one has measured these settings on this server yet. Press **Measure** to time the step "
              "for D = 1 … {devices} (it compiles and times three programs per device count, about a second "
              "in all; the result is then shared with every visitor).",
        "zh": "这台服务器上还没有人测过这组设置。按 **测量** 为 D = 1 … {devices} 计时"
              "（每个设备数要编译并计时三个程序，总共约一秒；结果随后与所有访问者共享）。",
    },
    "measure.shared": {
        "en": "Measured on this server {minutes} min ago for these settings (by you or another visitor); "
              "press **Measure** to measure again.",
        "zh": "这组设置已于 {minutes} 分钟前在这台服务器上测过（你或其他访问者）；按 **测量** 可重新测量。",
    },
    "progress": {"en": "Measuring D = {devices} of {total}…", "zh": "正在测量 D = {devices} / {total}…"},
    "part.dispatch": {"en": "dispatch", "zh": "派发开销"},
    "part.compute": {"en": "compute", "zh": "计算"},
    "part.comm": {"en": "communication (pmean)", "zh": "通信（pmean）"},
    "chart.devices": {"en": "devices D", "zh": "设备数 D"},
    "chart.ms": {"en": "median time per step (ms)", "zh": "每步中位耗时（毫秒）"},
    "chart.part": {"en": "part of the step", "zh": "步骤组成"},
    "col.step_ms": {"en": "step with pmean (ms)", "zh": "含 pmean 的单步（毫秒）"},
    "col.compute_ms": {"en": "compute (ms)", "zh": "计算（毫秒）"},
    "col.comm_ms": {"en": "communication (ms)", "zh": "通信（毫秒）"},
    "col.dispatch_ms": {"en": "dispatch (ms)", "zh": "派发（毫秒）"},
    "col.compile_ms": {"en": "compile, apart (ms)", "zh": "编译，单列（毫秒）"},
    "lesson": {
        "en": "Cutting the batch finer makes each device's compute lighter; adding devices makes the exchange "
              "heavier and the barrier wider. Choosing D is a balance between the two — on simulated CPU devices "
              "also bounded by the shared cores (see the note above).",
        "zh": "批次切得越细，每台设备的计算越轻；设备越多，通信越重、屏障越宽。选择 D 就是在两者之间求平衡——"
              "在模拟的 CPU 设备上还受到共享核数的限制（见上面的说明）。",
    },
}
