TEXTS = {
    "title": {"en": "The demo program", "zh": "Python 演示"},
    "summary": {
        "en": "The tutorial's program, step by step, fixed for current JAX.",
        "zh": "逐步运行教程程序，并修正为适配当前 JAX 的写法。",
    },
    "intro": {
        "en": "The tutorial ends with one program that walks through everything: count the devices, pmap a "
              "function over a batch, average with `pmean`, collect with `all_gather`, and train y = 3x + 1 "
              "with data parallelism. Here it runs step by step on the devices you pick, each step's source "
              "beside its real output. Below, the tutorial's own lines that fail on current JAX are run too, "
              "with the error JAX raises here and the fix.",
        "zh": "教程最后用一个程序串起全部内容：数设备、用 pmap 把函数映射到一个批次上、用 `pmean` 求平均、"
              "用 `all_gather` 收集分片，再用数据并行训练 y = 3x + 1。这里按你选的设备数逐步运行，每一步的源码旁边"
              "就是它的真实输出。下方还会运行教程原程序中在当前 JAX 上出错的几行，展示此处 JAX 抛出的错误及修正方法。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.per_device": {"en": "Samples per device", "zh": "每台设备的样本数"},
    "w.steps": {"en": "Training steps", "zh": "训练步数"},
    "w.lr": {"en": "Learning rate η", "zh": "学习率 η"},
    "running": {"en": "Running the program on the devices…", "zh": "正在各设备上运行程序……"},
    "steps_heading": {"en": "The corrected program, step by step", "zh": "修正后的程序，逐步运行"},
    "captured_output": {"en": "Output captured from this run", "zh": "本次运行捕获的输出"},
    "captured_error": {"en": "What JAX raised here", "zh": "此处 JAX 抛出的错误"},
    "captured_ran": {"en": "What JAX returned here", "zh": "此处 JAX 返回的结果"},
    "step.devices.title": {"en": "{n}. Count the devices", "zh": "{n}. 数一数设备"},
    "step.devices.body": {
        "en": "`jax.local_device_count()` and `jax.devices()` list what this process can use; the lab uses the "
              "first {devices}.",
        "zh": "`jax.local_device_count()` 和 `jax.devices()` 列出本进程可用的设备；本实验使用前 {devices} 台。",
    },
    "step.map.title": {"en": "{n}. pmap a function over the batch", "zh": "{n}. 用 pmap 把函数映射到批次上"},
    "step.map.body": {
        "en": "The batch of {batch} samples is shaped ({devices}, {per_device}) first: pmap maps the leading axis "
              "onto the devices, one row each, so that axis may be at most the number of devices (shorter runs "
              "on fewer devices, longer fails); here it is the {devices} devices chosen. Device d computes row d; "
              "the rows come back stacked.",
        "zh": "先把 {batch} 个样本整理成 ({devices}, {per_device}) 的形状：pmap 把前导维度映射到设备上，每台设备一行，"
              "所以该维度最多等于设备数（更短时在较少的设备上运行，更长时出错）；这里它等于所选的 {devices} 台设备。"
              "第 d 台设备计算第 d 行，结果按设备编号堆叠返回。",
    },
    "step.pmean.title": {"en": "{n}. All-reduce with pmean", "zh": "{n}. 用 pmean 做全归约"},
    "step.pmean.body": {
        "en": "`lax.pmean` averages the {devices} rows element by element and gives every device the result, "
              "so all rows of the output are equal.",
        "zh": "`lax.pmean` 对 {devices} 行逐元素求平均，并把结果交给每台设备，因此输出的每一行都相同。",
    },
    "step.all_gather.title": {"en": "{n}. all_gather with tiled=True", "zh": "{n}. 使用 tiled=True 的 all_gather"},
    "step.all_gather.body": {
        "en": "Each device holds a shard of shape ({per_device},); `tiled=True` concatenates the shards along "
              "that axis, so every device ends up with the whole batch of {batch}: output ({devices}, {batch}).",
        "zh": "每台设备持有形状为 ({per_device},) 的分片；`tiled=True` 沿该轴拼接所有分片，"
              "于是每台设备都拿到完整的 {batch} 个样本：输出形状为 ({devices}, {batch})。",
    },
    "step.train.title": {"en": "{n}. Data-parallel training of y = 3x + 1",
                         "zh": "{n}. 数据并行训练 y = 3x + 1"},
    "step.train.body": {
        "en": "Both w and b are fitted: the tutorial fits w alone, which cannot reach 3 while the data has the "
              "+1 (`w_fitted_alone` below runs the same loop with b held at 0). Each device takes the gradient "
              "on its own shard, `pmean` makes it the global mean gradient, and every device applies the same update. Parameters go in once with `in_axes=None` and come back "
              "once with `out_axes=None`, which is safe only because `pmean` made them equal. x is scaled to "
              "[0, 1) so the step size stays stable. All the steps run inside one compiled call "
              "(`lax.fori_loop` under `pmap`): no trip back to the host between steps.",
        "zh": "同时拟合 w 和 b：教程只拟合 w，而数据中有 +1，w 不可能收敛到 3（下方的 `w_fitted_alone` "
              "就是把 b 固定为 0 后运行同一循环的结果）。每台设备在自己的分片上求梯度，"
              "`pmean` 把它变成全局平均梯度，所有设备做相同的更新。参数用 `in_axes=None` 传入一份，"
              "用 `out_axes=None` 取回一份——这只有在 `pmean` 让各设备参数完全相同时才安全。"
              "x 被缩放到 [0, 1)，以保持步长稳定。所有步骤都在一次编译调用中运行"
              "（`pmap` 内的 `lax.fori_loop`）：步与步之间不回到主机。",
    },
    "metric.w": {"en": "trained w (target 3)", "zh": "训练后的 w（目标 3）"},
    "metric.b": {"en": "trained b (target 1)", "zh": "训练后的 b（目标 1）"},
    "metric.loss": {"en": "final loss", "zh": "最终损失"},
    "axis.step": {"en": "step", "zh": "步数"},
    "axis.loss": {"en": "mean squared error (log scale)", "zh": "均方误差（对数坐标）"},
    "not_converged": {
        "en": "Not converged yet: try more steps or a somewhat larger learning rate.",
        "zh": "尚未收敛：请增加步数，或适当调大学习率。",
    },
    "diverged": {
        "en": "Diverged: with η = {lr} each step overshoots the minimum and the loss grows. Steps are stable "
              "only while η < 2 / (largest eigenvalue of the loss's Hessian) = {limit} for this data "
              "(`largest_stable_lr` above); try a smaller η.",
        "zh": "发散了：η = {lr} 时每一步都越过了最小值，损失不断增大。只有当 η < 2 /（损失 Hessian 的最大特征值）"
              "= {limit}（即上方的 `largest_stable_lr`）时步长才稳定；请减小 η。",
    },
    "broken_heading": {"en": "Where the tutorial's program breaks", "zh": "教程原程序出错的地方"},
    "broken_intro": {
        "en": "Each box runs the tutorial's line as written, on the devices chosen above.",
        "zh": "每个框都按教程原样运行那一行代码，使用上方选择的设备。",
    },
    "broken.batch.title": {"en": "A flat batch of 8: x = jnp.arange(8.0)", "zh": "长度为 8 的一维批次：x = jnp.arange(8.0)"},
    "broken.batch.why": {
        "en": "pmap maps the leading axis onto the devices, one row per device, so that axis may be at most the "
              "number of devices. A leading axis of {rows} does not fit on {devices} devices. JAX's message, "
              "`cannot select an axis to squeeze out which has size not equal to one`, says that after cutting "
              "the axis into one block per device it found blocks of more than one row where it expected one.",
        "zh": "pmap 把前导维度映射到设备上，每台设备一行，所以该维度最多等于设备数。长度为 {rows} 的前导维度"
              "放不进 {devices} 台设备。JAX 的报错 `cannot select an axis to squeeze out which has size not equal "
              "to one` 的意思是：它把该轴按设备切成块后，发现每块不止一行，而它期望的是一行。",
    },
    "broken.batch.ran_all": {
        "en": "It ran on all {used} of the {devices} devices chosen: a leading axis of {rows} is exactly the device "
              "count, one scalar per device. With fewer devices it fails; with more it runs on {rows} of them.",
        "zh": "它在所选的 {devices} 台设备中的全部 {used} 台上运行：长度为 {rows} 的前导维度正好等于设备数，"
              "每台设备一个标量。设备更少时会出错；设备更多时只在其中 {rows} 台上运行。",
    },
    "broken.batch.ran_fewer": {
        "en": "It ran on {used} of the {devices} devices chosen: pmap maps a leading axis of {rows} onto {rows} "
              "devices, one scalar each, and leaves the other devices idle. With fewer than {rows} devices it fails.",
        "zh": "它只在所选的 {devices} 台设备中的 {used} 台上运行：pmap 把长度为 {rows} 的前导维度映射到 {rows} 台设备上，"
              "每台一个标量，其余设备闲置。设备少于 {rows} 台时会出错。",
    },
    "broken.batch.fix": {
        "en": "Fix: reshape the batch to (D, B/D) first, as step 2 does, so that it uses every device for any D "
              "that divides B.",
        "zh": "修正：像第 2 步那样先把批次整理成 (D, B/D)，这样对任何能整除 B 的 D 都会用上每台设备。",
    },
    "broken.doubled_batch.title": {"en": "A flat batch of 2D samples", "zh": "长度为 2D 的一维批次"},
    "broken.doubled_batch.why": {
        "en": "Twice as many samples as devices ({rows} on {devices} devices) is not split automatically: pmap "
              "does not cut a long axis into chunks, and a leading axis longer than the device count fails.",
        "zh": "样本数是设备数的两倍（{devices} 台设备上 {rows} 个样本）时，pmap 不会自动切块："
              "它不会把长轴切成小块，而比设备数长的前导维度会直接出错。",
    },
    "broken.doubled_batch.ran": {
        "en": "Unexpectedly, this JAX accepted {rows} rows on {devices} devices; look at the output shape to see "
              "what it did.",
        "zh": "出乎意料，这个版本的 JAX 接受了 {devices} 台设备上的 {rows} 行；请查看输出形状了解它做了什么。",
    },
    "broken.doubled_batch.fix": {
        "en": "Fix: x.reshape(D, 2): one row of two samples per device.",
        "zh": "修正：x.reshape(D, 2)，每台设备一行、每行两个样本。",
    },
    "broken.all_gather.title": {"en": "all_gather(tiled=True) on per-device scalars",
                                "zh": "对每台设备上的标量使用 all_gather(tiled=True)"},
    "broken.all_gather.why": {
        "en": "With a flat x every device receives a scalar. `tiled=True` concatenates along axis 0, and a scalar "
              "has no axis 0 — hence the out-of-bounds message.",
        "zh": "x 是一维数组时，每台设备拿到的是标量。`tiled=True` 沿第 0 轴拼接，而标量没有第 0 轴——所以报越界错误。",
    },
    "broken.all_gather.ran": {
        "en": "Unexpectedly, this JAX ran it on {devices} devices; look at the output to see what it did.",
        "zh": "出乎意料，这个版本的 JAX 在 {devices} 台设备上运行了它；请查看输出了解它做了什么。",
    },
    "broken.all_gather.fix": {
        "en": "Fix: give each device at least one axis — shape (D, b) as in step 4 — or use tiled=False to stack "
              "scalars into shape (D,).",
        "zh": "修正：让每台设备至少有一个轴——如第 4 步使用形状 (D, b)——或用 tiled=False 把标量堆叠成形状 (D,)。",
    },
    "broken.params.title": {"en": "Parameters that are not replicated: w = jnp.array([0.0])",
                            "zh": "没有复制的参数：w = jnp.array([0.0])"},
    "broken.params.why": {
        "en": "pmap maps axis 0 of every argument by default, so w of shape (1,) is read as data for one device "
              "while x is for {devices}. The error text names a different array, which makes it hard to track down.",
        "zh": "pmap 默认对每个参数的第 0 轴做映射，于是形状为 (1,) 的 w 被当成只给 1 台设备的数据，"
              "而 x 是给 {devices} 台设备的。错误信息里提到的却是另一个数组，所以很难定位。",
    },
    "broken.params.ran": {
        "en": "It ran on {devices} device(s): w's leading axis of 1 and x's of {devices} both fit, so each device "
              "got a row of each. With more devices than w has rows, w does not match x and it fails.",
        "zh": "它在 {devices} 台设备上运行了：w 长度为 1 的前导维度和 x 长度为 {devices} 的前导维度恰好对得上，"
              "每台设备各拿到一行。设备数多于 w 的行数时，w 与 x 对不上，就会出错。",
    },
    "broken.params.fix": {
        "en": "Fix: `in_axes=None` for the parameters (step 5), or stack D copies. "
              "`jax.device_put_replicated` no longer exists (see Common mistakes).",
        "zh": "修正：对参数使用 `in_axes=None`（第 5 步），或堆叠 D 份副本。"
              "`jax.device_put_replicated` 已不可用（见“常见误区”）。",
    },
    "error.demo_one_sample": {
        "en": "A line needs at least 2 samples; with {count} the fit is undefined. Add devices or samples per device.",
        "zh": "拟合一条直线至少需要 2 个样本；只有 {count} 个时无法确定。请增加设备数或每台设备的样本数。",
    },
}
