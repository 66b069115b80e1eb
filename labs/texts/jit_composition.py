TEXTS = {
    "title": {"en": "Composing with jit and grad", "zh": "jit 组合"},
    "summary": {
        "en": "pmap with jit and grad: what is redundant, what is required, and why purity matters.",
        "zh": "pmap 与 jit、grad 的组合：哪些多余，哪些必需，为什么要纯函数。",
    },
    "intro": {
        "en": "`jit` turns a Python function into one XLA program, so the interpreter no longer sits between "
              "the operations. Older texts call `pmap(jit(f))` *the* standard way to combine it with `pmap`. "
              "In current JAX that inner `jit` does nothing: `pmap` compiles `f` with XLA by itself. "
              "This page proves it with the compiled programs and the clock, then looks at what *does* matter "
              "when you compose: `grad` with `lax.pmean`, and pure functions.",
        "zh": "`jit` 把 Python 函数编译成一个 XLA 程序，运算之间不再经过解释器。一些旧教程把 `pmap(jit(f))` "
              "称为与 `pmap` 组合的标准写法。在当前的 JAX 中，里层的 `jit` 不起任何作用：`pmap` 本身就会用 XLA "
              "编译 `f`。本页用编译后的程序和计时来证明这一点，然后看组合时真正重要的东西：`grad` 配合 "
              "`lax.pmean`，以及纯函数。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.rows": {"en": "Rows per device (speed test)", "zh": "每台设备的行数（速度测试）"},
    "w.rows.help": {
        "en": "Each device runs tanh(x·xᵀ)·x on a (rows × 64) block, minus the global mean (pmean).",
        "zh": "每台设备对 (行数 × 64) 的数据块计算 tanh(x·xᵀ)·x，再减去全局平均（pmean）。",
    },
    "w.repeats": {"en": "Timed repeats per round", "zh": "每轮计时次数"},
    "w.layers": {"en": "MLP layers (all-reduce count)", "zh": "MLP 层数（全归约计数）"},
    "running": {"en": "Compiling and timing on the devices…", "zh": "正在设备上编译并计时……"},
    "hlo.heading": {"en": "1. pmap(f) and pmap(jit(f)) compile to the same program",
                    "zh": "1. pmap(f) 与 pmap(jit(f)) 编译出同一个程序"},
    "hlo.body": {
        "en": "Both forms are lowered for the same input and compiled by XLA; we compare the optimised HLO text "
              "(`.lower(x).compile().as_text()`). Raw texts differ only in names, numbering and source-location "
              "metadata, so those are normalised away before comparing.",
        "zh": "两种写法针对同一输入 lower 到 HLO（lowering）并由 XLA 编译；我们比较优化后的 HLO 文本（`.lower(x).compile().as_text()`）。"
              "原始文本只在名字、编号和源码位置元数据上不同，因此比较前先把这些规范化掉。",
    },
    "hlo.identical": {"en": "Same program after normalising", "zh": "规范化后是否相同"},
    "hlo.raw_lines": {"en": "Differing lines (raw)", "zh": "不同的行（原始）"},
    "hlo.normalized_lines": {"en": "Differing lines (normalised)", "zh": "不同的行（规范化后）"},
    "hlo.same": {
        "en": "On {devices} devices the two compiled programs are instruction for instruction the same: "
              "the inner jit adds nothing.",
        "zh": "在 {devices} 台设备上，两个编译后的程序逐条指令完全相同：里层的 jit 没有带来任何东西。",
    },
    "hlo.different": {
        "en": "The normalised programs differ in {lines} lines; the diff is below.",
        "zh": "规范化后的程序有 {lines} 行不同，差异如下。",
    },
    "hlo.expander": {"en": "The compiled HLO of both forms", "zh": "两种写法编译后的 HLO"},
    "hlo.normalized_note": {
        "en": "As XLA printed them. Normalising removes the source tables, `metadata={…}` and renumbers names such as `%sin.5`.",
        "zh": "这是 XLA 打印的原文。规范化会去掉源码表、`metadata={…}`，并对 `%sin.5` 这类名字重新编号。",
    },
    "speed.heading": {"en": "…and run at the same speed", "zh": "……运行速度也相同"},
    "speed.axis": {"en": "median time per call (ms), bar: min–max", "zh": "每次调用的中位时间（毫秒），横线：最小–最大"},
    "speed.ratio": {"en": "pmap(jit(f)) / pmap(f), medians", "zh": "pmap(jit(f)) / pmap(f)（中位数之比）"},
    "speed.max_diff": {"en": "Max |difference| of outputs", "zh": "输出的最大绝对差"},
    "speed.method": {
        "en": "Medians of calls timed after `block_until_ready`, compile time excluded (the first call is listed "
              "apart), in alternating rounds on {devices} devices with {rows} rows each.",
        "zh": "在 {devices} 台设备、每台 {rows} 行的设置下按轮次交替计时，取 `block_until_ready` 之后的中位数，"
              "不含编译时间（首次调用单独列出）。",
    },
    "speed.overlap": {
        "en": "Ratio {ratio:.2f}, and the min–max ranges of the two forms overlap: no measurable difference. "
              "The inner `jit` is redundant.",
        "zh": "比值为 {ratio:.2f}，两种写法的最小–最大范围相互重叠：没有可测量的差别。里层的 `jit` 是多余的。",
    },
    "speed.no_overlap": {
        "en": "Ratio {ratio:.2f}, and this time the min–max ranges do not overlap. The compiled programs are the "
              "same (above), so this is timing noise of a shared machine: rerun or raise the repeats and watch it move.",
        "zh": "比值为 {ratio:.2f}，这次最小–最大范围没有重叠。由于编译出的程序完全相同（见上文），这是共享机器上的"
              "计时噪声：重新运行或增加计时次数，就能看到它来回变化。",
    },
    "speed.differs": {
        "en": "Ratio {ratio:.2f}: the two forms compiled to different programs here, and their times differ.",
        "zh": "比值为 {ratio:.2f}：这里两种写法编译出了不同的程序，运行时间也不同。",
    },
    "shard_map.heading": {"en": "pmap is jit(shard_map(...)) since JAX 0.8", "zh": "自 JAX 0.8 起 pmap 就是 jit(shard_map(...))"},
    "shard_map.body": {
        "en": "`jax.pmap` is in maintenance mode: it is implemented as `jit(shard_map(...))` and its docstring "
              "recommends `jax.shard_map`. The same `f` written with `shard_map` over a one-axis mesh gives the "
              "same numbers (timed above as `jit(shard_map(f))`). Differences from pmap: the input keeps no "
              "device axis — each device gets a block of the global array — and you state in/out shardings.",
        "zh": "`jax.pmap` 已处于维护模式：它的实现就是 `jit(shard_map(...))`，文档建议改用 `jax.shard_map`。"
              "用 `shard_map` 在一维网格上写同一个 `f`，结果完全一致（上面计时中的 `jit(shard_map(f))`）。"
              "与 pmap 的区别：输入不再带设备轴——每台设备拿到全局数组的一块——并且要显式写出输入/输出的分片方式。",
    },
    "shard_map.code": {
        "en": "mesh = Mesh(np.array(jax.devices()[:D]), ('data',))\n"
              "g = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P('data'), out_specs=P('data')))\n"
              "g(x.reshape(D * rows, 64))  # == jax.pmap(f, axis_name='data')(x), reshaped",
        "zh": "mesh = Mesh(np.array(jax.devices()[:D]), ('data',))\n"
              "g = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P('data'), out_specs=P('data')))\n"
              "g(x.reshape(D * rows, 64))  # 等于 jax.pmap(f, axis_name='data')(x) 重排形状后的结果",
    },
    "shard_map.max_diff": {"en": "Max |shard_map − pmap|", "zh": "最大 |shard_map − pmap|"},
    "grad.heading": {"en": "2. grad inside pmap, averaged with lax.pmean", "zh": "2. 在 pmap 内求 grad，用 lax.pmean 求平均"},
    "grad.body": {
        "en": "Regression y = 3x + 1 (plus noise), {batch} samples split over {devices} devices. Each device "
              "takes `jax.grad` of the loss on its own shard at w = {w}, b = {b}; `lax.pmean` averages the "
              "gradients and hands the same mean to every device. With equal shards the mean of the shard "
              "gradients is exactly the gradient of the whole batch, which one device computes as the reference.",
        "zh": "回归 y = 3x + 1（加噪声），{batch} 个样本分到 {devices} 台设备。每台设备在 w = {w}、b = {b} 处对自己"
              "分片上的损失求 `jax.grad`；`lax.pmean` 对梯度求平均，并把同一个平均值交给每台设备。分片大小相同时，"
              "各分片梯度的平均恰好等于整批数据的梯度——由单台设备计算作为参照。",
    },
    "grad.device": {"en": "device {d}", "zh": "设备 {d}"},
    "grad.averaged": {"en": "pmean (every device)", "zh": "pmean（每台设备）"},
    "grad.full_batch": {"en": "full batch, 1 device", "zh": "整批，单设备"},
    "grad.axis": {"en": "gradient", "zh": "梯度"},
    "grad.max_error": {"en": "Max |pmean − full batch|", "zh": "最大 |pmean − 整批|"},
    "grad.same_everywhere": {"en": "Same mean on every device", "zh": "每台设备的平均值相同"},
    "fusion.heading": {"en": "3. XLA fuses the gradient all-reduces", "zh": "3. XLA 融合梯度的全归约"},
    "fusion.body": {
        "en": "An MLP with {layers} layers has {arrays} parameter arrays; the step calls `lax.pmean` once per "
              "array. We count the all-reduces in the program JAX hands to XLA and in the compiled one.",
        "zh": "一个 {layers} 层的 MLP 有 {arrays} 个参数数组；训练步对每个数组调用一次 `lax.pmean`。"
              "我们分别统计 JAX 交给 XLA 的程序中和编译后程序中的全归约数量。",
    },
    "fusion.arrays": {"en": "Parameter arrays", "zh": "参数数组"},
    "fusion.traced": {"en": "all-reduces as traced", "zh": "追踪得到的全归约"},
    "fusion.compiled": {"en": "all-reduces compiled", "zh": "编译后的全归约"},
    "fusion.fused": {
        "en": "XLA combined {traced} all-reduces into {compiled}: one collective carries a tuple of every "
              "gradient, so the per-call latency is paid once per step, not once per array.",
        "zh": "XLA 把 {traced} 次全归约合并成了 {compiled} 次：一次集合通信携带所有梯度组成的元组，"
              "因此每步只付一次通信延迟，而不是每个数组一次。",
    },
    "fusion.one_device": {
        "en": "With one device, as here, the all-reduce runs over a group of one device: it moves no bytes, yet "
              "XLA keeps it in the program, fused the same way.",
        "zh": "只有一台设备时（如此处），全归约是在只有一台设备的组内进行的：它不传输任何字节，但 XLA 仍把它留在程序中，"
              "并以同样的方式融合。",
    },
    "fusion.expander": {"en": "The compiled all-reduce instructions", "zh": "编译后的全归约指令"},
    "purity.heading": {"en": "4. Pure functions: side effects run at trace time", "zh": "4. 纯函数：副作用只在追踪时执行"},
    "purity.body": {
        "en": "A **pure function** computes its outputs from its inputs only: it reads no outer "
              "variable, writes nothing outside, prints nothing. JAX relies on this: it runs your Python once "
              "with abstract values (tracing), records the operations and compiles them; later calls with the "
              "same shapes run only the compiled program. The function below prints, appends to a list, reads "
              "an outer variable `settings['scale']` and registers a `jax.debug.callback` — then is called under pmap.",
        "zh": "**纯函数** 只根据输入计算输出：不读外部变量，不写外部状态，也不打印。JAX 依赖这一点：它用抽象值把你的 "
              "Python 代码执行一次（追踪），记录下运算并编译；之后形状相同的调用只运行编译好的程序。下面的函数会打印、"
              "往列表追加、读取外部变量 `settings['scale']`，并注册一个 `jax.debug.callback`，然后在 pmap 下调用。",
    },
    "purity.captured": {
        "en": "Everything its `print` wrote during {calls} calls, captured:",
        "zh": "{calls} 次调用期间其 `print` 输出的全部内容（已捕获）：",
    },
    "purity.calls": {"en": "Calls", "zh": "调用次数"},
    "purity.trace_effects": {"en": "List appends (Python side effect)", "zh": "列表追加次数（Python 副作用）"},
    "purity.runtime_effects": {"en": "jax.debug.callback runs", "zh": "jax.debug.callback 执行次数"},
    "purity.counts": {
        "en": "{calls} calls, but the Python side effects ran {appends} time(s): only while tracing — not once per "
              "call and not once per device. The `jax.debug.callback`, which is part of the compiled program, "
              "ran {callbacks} times ({calls} calls × {devices} devices). Use `jax.debug.print` or a callback "
              "for anything that must happen at run time.",
        "zh": "调用了 {calls} 次，但 Python 副作用只执行了 {appends} 次：仅在追踪时——既不是每次调用一次，也不是每台"
              "设备一次。而 `jax.debug.callback` 属于编译后的程序，执行了 {callbacks} 次（{calls} 次调用 × {devices} "
              "台设备）。需要在运行时发生的事情，请用 `jax.debug.print` 或回调。",
    },
    "purity.global": {
        "en": "The outer variable was {traced} when JAX traced. After changing it to {changed}:",
        "zh": "JAX 追踪时外部变量的值是 {traced}。把它改成 {changed} 之后：",
    },
    "purity.col.case": {"en": "call", "zh": "调用"},
    "purity.col.scale": {"en": "settings['scale'] now", "zh": "当前 settings['scale']"},
    "purity.col.output": {"en": "output for x = 1", "zh": "x = 1 时的输出"},
    "purity.case.stale": {"en": "impure, same shape (cached program)", "zh": "非纯函数，形状不变（使用缓存程序）"},
    "purity.case.retrace": {"en": "impure, new shape (retraced)", "zh": "非纯函数，形状改变（重新追踪）"},
    "purity.case.pure": {"en": "pure: scale passed as an argument", "zh": "纯函数：scale 作为参数传入"},
    "purity.rule": {
        "en": "The old value stays baked into the compiled program until something forces a retrace. Pass "
              "everything a function needs as arguments and return everything it produces — then every call is correct.",
        "zh": "旧值会一直固化在编译好的程序里，直到某种原因触发重新追踪。把函数需要的一切作为参数传入、把产生的一切作为"
              "返回值传出——这样每次调用都是正确的。",
    },
    "col.form": {"en": "form", "zh": "写法"},
    "col.median_ms": {"en": "median (ms)", "zh": "中位数（毫秒）"},
    "col.min_ms": {"en": "min (ms)", "zh": "最小（毫秒）"},
    "col.max_ms": {"en": "max (ms)", "zh": "最大（毫秒）"},
    "col.first_call_ms": {"en": "first call (ms)", "zh": "首次调用（毫秒）"},
    "col.samples": {"en": "timed calls", "zh": "计时次数"},
    "col.source": {"en": "gradient of", "zh": "梯度来源"},
}
