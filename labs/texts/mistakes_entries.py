"""Texts of the common-mistakes entries: w.entry.<id> (title), entry.<id>.what / .why / .fix."""

TEXTS = {
    # --- shapes and axes ---
    "w.entry.leading_axis": {"en": "Leading axis longer than the device count", "zh": "前导维度超过设备数"},
    "entry.leading_axis.what": {
        "en": "Passing a flat batch of 2·D samples and expecting pmap to split it into D chunks.",
        "zh": "传入长度为 2·D 的一维批次，以为 pmap 会自动把它切成 D 块。",
    },
    "entry.leading_axis.why": {
        "en": "pmap does not chunk. It maps the leading axis (the device axis) onto the devices, one row per "
              "device, so that axis may be at most the number of devices: as long, it runs on every device; "
              "shorter, it runs on that many devices (`short_axis_ran_on_devices` in the fix, measured here); "
              "longer, it fails. JAX's message, `cannot select an axis to squeeze out which has size not equal "
              "to one`, says that after cutting the axis into one block per device it tried to drop the mapped "
              "axis from each block and found blocks of more than one row.",
        "zh": "pmap 不会切块。它把前导维度（设备轴）映射到设备上，每台设备一行，所以该维度最多等于设备数："
              "相等时在每台设备上运行；更短时就在相应数量的设备上运行（修正写法中的 `short_axis_ran_on_devices`，"
              "此处实测）；更长时出错。JAX 的报错 `cannot select an axis to squeeze out which has size not equal "
              "to one` 的意思是：它把该轴按设备切成块后，想从每块中去掉被映射的那一维，却发现每块不止一行。",
    },
    "entry.leading_axis.fix": {
        "en": "Reshape to (D, B/D) before calling pmap, so that the leading axis is the device count.",
        "zh": "调用 pmap 前先 reshape 成 (D, B/D)，使前导维度等于设备数。",
    },
    "w.entry.indivisible": {"en": "Batch not divisible by D", "zh": "批大小不能被 D 整除"},
    "entry.indivisible.what": {"en": "A flat batch of D + 1 samples on D devices.", "zh": "在 D 台设备上处理 D + 1 个样本的一维批次。"},
    "entry.indivisible.why": {
        "en": "A flat batch longer than the device count never runs, whatever its length; it has to be reshaped "
              "to (D, B/D), and that needs B to be a multiple of D so that every device gets the same shape. "
              "JAX words the failure in terms of its sharding machinery (pmap is built on shard_map): "
              "`IndivisibleError` and `tiling factors` say that D + 1 rows cannot be cut into D equal blocks. "
              "(With one device every length divides, and the message is the squeeze one of the entry above.)",
        "zh": "比设备数长的一维批次无论长度多少都不能直接运行；必须先 reshape 成 (D, B/D)，而这要求 B 是 D 的倍数，"
              "每台设备才能拿到相同形状的数据。JAX 用分片机制的术语描述这个失败（pmap 构建在 shard_map 之上）："
              "`IndivisibleError` 和 `tiling factors` 说的是 D + 1 行无法切成 D 个等大的块。"
              "（只有一台设备时任何长度都能整除，报错就是上一个条目中关于 squeeze 的那条。）",
    },
    "entry.indivisible.fix": {
        "en": "Drop the remainder (as here) or pad the batch up to a multiple of D and mask the padding in the "
              "loss, then reshape to (D, B/D).",
        "zh": "丢掉余数（如本例），或把批次补齐到 D 的倍数并在损失中屏蔽补齐的样本，然后 reshape 成 (D, B/D)。",
    },
    "w.entry.unreplicated_params": {"en": "Parameters not replicated", "zh": "参数没有复制到各设备"},
    "entry.unreplicated_params.what": {
        "en": "Passing one copy of the parameters, w = jnp.array([0.0]), to a pmapped train step.",
        "zh": "把一份参数 w = jnp.array([0.0]) 直接传给 pmap 包装的训练步。",
    },
    "entry.unreplicated_params.why": {
        "en": "By default pmap maps axis 0 of every argument, so w of shape (1,) is read as data for one device. "
              "With two or more devices that fails, and the message even names another array's shape (x's).",
        "zh": "pmap 默认对每个参数的第 0 轴做映射，形状 (1,) 的 w 被当成只属于 1 台设备的数据。"
              "有两台及以上设备时这会出错，而且报错里给出的竟是另一个数组（x）的形状。",
    },
    "entry.unreplicated_params.one_device": {
        "en": "With one device, as here, w's one row is exactly one row for the one device: the step runs, and w "
              "comes out right (it equals the fix's). The error appears with two or more devices.",
        "zh": "只有一台设备时（如此处），w 唯一的一行恰好就是这台设备的一行：训练步能运行，w 的结果也正确"
              "（与修正写法相同）。有两台及以上设备时才会报错。",
    },
    "entry.unreplicated_params.fix": {
        "en": "`in_axes=(None, 0, 0)`: None sends the same w to every device.",
        "zh": "使用 `in_axes=(None, 0, 0)`：None 表示把同一个 w 发给每台设备。",
    },
    "w.entry.gather_scalar": {"en": "all_gather(tiled=True) on scalars", "zh": "对标量使用 all_gather(tiled=True)"},
    "entry.gather_scalar.what": {
        "en": "Gathering per-device scalars with `tiled=True`, as the tutorial's demo does.",
        "zh": "像教程演示那样，用 `tiled=True` 收集每台设备上的标量。",
    },
    "entry.gather_scalar.why": {
        "en": "`tiled=True` concatenates along axis 0 of each shard; a scalar has no axis 0.",
        "zh": "`tiled=True` 沿每个分片的第 0 轴拼接；标量没有第 0 轴。",
    },
    "entry.gather_scalar.fix": {
        "en": "Give each device shape (1,) or more, or use `tiled=False`, which stacks scalars into (D,).",
        "zh": "让每台设备的数据形状至少为 (1,)，或使用 `tiled=False` 把标量堆叠成 (D,)。",
    },
    "w.entry.out_axes_none": {"en": "out_axes=None on values that differ", "zh": "对各设备不同的值使用 out_axes=None"},
    "entry.out_axes_none.what": {
        "en": "Returning a per-device value with `out_axes=None` to get \"the\" result.",
        "zh": "对每台设备各不相同的值使用 `out_axes=None`，想得到“唯一”的结果。",
    },
    "entry.out_axes_none.why": {
        "en": "`out_axes=None` promises the value is the same on every device; JAX does not check it and hands "
              "back one device's copy (device 0's: `returned` equals `per_device[0]`). With two or more devices "
              "the values differ: no error, just a wrong number.",
        "zh": "`out_axes=None` 表示你保证各设备上的值相同；JAX 不做检查，直接返回其中一台设备的副本"
              "（0 号设备的：`returned` 等于 `per_device[0]`）。有两台及以上设备时各设备的值不同：不报错，只是数字错了。",
    },
    "entry.out_axes_none.one_device": {
        "en": "With one device, as here, there is only one value, so the returned number is right. The mistake "
              "shows with two or more devices.",
        "zh": "只有一台设备时（如此处），只有一个值，所以返回的数字是对的。有两台及以上设备时这个错误才会显现。",
    },
    "entry.out_axes_none.fix": {
        "en": "Make the value equal first (`pmean`/`psum`), or keep `out_axes=0` and reduce on the host.",
        "zh": "先用 `pmean`/`psum` 让各设备的值一致，或保留 `out_axes=0` 再在主机端归约。",
    },
    "w.entry.unbound_axis": {"en": "A collective outside pmap", "zh": "在 pmap 之外调用集合通信"},
    "entry.unbound_axis.what": {"en": "Calling `lax.psum(x, 'data')` in ordinary code.", "zh": "在普通代码里调用 `lax.psum(x, 'data')`。"},
    "entry.unbound_axis.why": {
        "en": "An axis name exists only inside the pmap (or shard_map) that declares it; outside, there is no "
              "axis called 'data' to sum over.",
        "zh": "轴名只在声明它的 pmap（或 shard_map）内部存在；在外面没有名为 'data' 的轴可以求和。",
    },
    "entry.unbound_axis.fix": {
        "en": "Call the collective inside the pmapped function, with the same `axis_name`.",
        "zh": "在 pmap 包装的函数内部调用集合通信，并使用相同的 `axis_name`。",
    },
    "w.entry.wrong_axis_name": {"en": "Wrong axis_name in a collective", "zh": "集合通信中的 axis_name 写错"},
    "entry.wrong_axis_name.what": {
        "en": "pmap declares `axis_name='data'`, the collective asks for 'batch'.",
        "zh": "pmap 声明了 `axis_name='data'`，集合通信却用了 'batch'。",
    },
    "entry.wrong_axis_name.why": {
        "en": "Names are matched exactly; the message suggests shard_map, but the real cause is the mismatched name.",
        "zh": "轴名必须完全一致；报错建议使用 shard_map，但真正原因是名字不匹配。",
    },
    "entry.wrong_axis_name.fix": {"en": "Use one constant for the axis name everywhere.", "zh": "全程用同一个常量作为轴名。"},
    "w.entry.same_key": {"en": "One PRNG key on every device", "zh": "所有设备共用同一个随机数密钥"},
    "entry.same_key.what": {
        "en": "Replicating one key (`in_axes=None`) for dropout or noise on every device.",
        "zh": "把同一个密钥复制到每台设备（`in_axes=None`），用于 dropout 或噪声。",
    },
    "entry.same_key.why": {
        "en": "JAX random numbers are a pure function of the key: same key, same numbers on every device.",
        "zh": "JAX 的随机数是密钥的纯函数：密钥相同，每台设备得到的随机数也相同。",
    },
    "entry.same_key.fix": {
        "en": "Pass `jax.random.split(key, D)` mapped over devices, or `fold_in(key, lax.axis_index('data'))` inside. "
              "Both give the same numbers here, one per device, no two alike.",
        "zh": "传入按设备映射的 `jax.random.split(key, D)`，或在内部使用 `fold_in(key, lax.axis_index('data'))`。"
              "两者在这里给出相同的随机数：每台设备一个，互不相同。",
    },
    "entry.same_key.one_device": {
        "en": "With one device, as here, there is one number either way. The mistake shows with two or more "
              "devices: then every device draws the same number.",
        "zh": "只有一台设备时（如此处），两种写法都只有一个数。有两台及以上设备时这个错误才会显现："
              "那时每台设备抽到的都是同一个数。",
    },
    # --- runtime, compilation, timing ---
    "w.entry.late_config": {"en": "Setting the device count after JAX started", "zh": "JAX 启动后才设置设备数"},
    "entry.late_config.what": {
        "en": "Calling `jax.config.update('jax_num_cpu_devices', 4)` after some JAX operation already ran "
              "(run in a fresh Python process, so this server is untouched).",
        "zh": "在某个 JAX 操作已经运行之后才调用 `jax.config.update('jax_num_cpu_devices', 4)`"
              "（在全新的 Python 进程中运行，不影响本服务器）。",
    },
    "entry.late_config.why": {
        "en": "The device count is fixed when the backend starts, at the first operation. Later changes are refused.",
        "zh": "设备数在后端启动（第一次运算）时就固定了，之后的修改会被拒绝。",
    },
    "entry.late_config.fix": {
        "en": "Set it right after `import jax`, before anything runs — this lab does it once, in `pmap_core.runtime`.",
        "zh": "在 `import jax` 之后、任何运算之前设置——本实验室在 `pmap_core.runtime` 中统一设置一次。",
    },
    "w.entry.late_xla_flags": {"en": "XLA_FLAGS set too late", "zh": "XLA_FLAGS 设置得太晚"},
    "entry.late_xla_flags.what": {
        "en": "Setting `XLA_FLAGS=--xla_force_host_platform_device_count=4` in `os.environ` after JAX started.",
        "zh": "JAX 启动后才在 `os.environ` 中设置 `XLA_FLAGS=--xla_force_host_platform_device_count=4`。",
    },
    "entry.late_xla_flags.why": {
        "en": "XLA reads the flag once when the backend starts. Unlike the config option there is no error: the "
              "device count silently stays as it was.",
        "zh": "XLA 只在后端启动时读取一次该标志。与配置项不同，这里不会报错：设备数悄悄保持原样。",
    },
    "entry.late_xla_flags.fix": {
        "en": "Set it before `import jax` (or in the shell), or prefer `jax_num_cpu_devices`, which fails loudly.",
        "zh": "在 `import jax` 之前（或在 shell 中）设置，或改用会明确报错的 `jax_num_cpu_devices`。",
    },
    "w.entry.pmap_of_jit": {"en": "pmap(jit(f)) as \"the standard form\"", "zh": "把 pmap(jit(f)) 当作“标准写法”"},
    "entry.pmap_of_jit.what": {
        "en": "Wrapping f in jit before pmap, as the tutorial recommends.",
        "zh": "像教程推荐的那样，先用 jit 包装 f 再交给 pmap。",
    },
    "entry.pmap_of_jit.why": {
        "en": "pmap already traces and compiles f with XLA. The inner jit changes nothing: the compiled HLO is "
              "the same (compared here, names aside) and so is the time per call.",
        "zh": "pmap 本身就会追踪并用 XLA 编译 f。内层的 jit 不改变任何东西：编译出的 HLO 相同"
              "（此处已比较，忽略命名差异），每次调用的耗时也相同。",
    },
    "entry.pmap_of_jit.fix": {"en": "Write `pmap(f)`.", "zh": "直接写 `pmap(f)`。"},
    "w.entry.jit_of_pmap": {"en": "jit(pmap(f))", "zh": "jit(pmap(f))"},
    "entry.jit_of_pmap.what": {"en": "Wrapping a pmapped function in jit.", "zh": "用 jit 包装一个 pmap 过的函数。"},
    "entry.jit_of_pmap.why": {
        "en": "Older JAX warned that this moves data between devices. In the installed JAX pmap is itself "
              "`jit(shard_map(...))`: the capture shows no warning, one trace for three calls and the output "
              "still spread over the devices. It is harmless here, but the outer jit adds nothing and hides "
              "where the device axis is.",
        "zh": "旧版 JAX 会警告这样做会在设备间搬运数据。在当前安装的 JAX 中，pmap 本身就是 `jit(shard_map(...))`："
              "捕获结果显示没有警告、三次调用只追踪一次、输出仍分布在各设备上。这里无害，但外层 jit 毫无作用，"
              "还掩盖了设备轴的位置。",
    },
    "entry.jit_of_pmap.fix": {
        "en": "Use pmap alone, or for new code `jax.jit(jax.shard_map(...))` with an explicit mesh.",
        "zh": "单独使用 pmap；新代码可用带显式 mesh 的 `jax.jit(jax.shard_map(...))`。",
    },
    "w.entry.index_output": {"en": "y[0] on a pmap output", "zh": "对 pmap 输出做 y[0] 索引"},
    "entry.index_output.what": {
        "en": "Reading one device's result with `y[0]`.",
        "zh": "用 `y[0]` 读取某台设备的结果。",
    },
    "entry.index_output.why": {
        "en": "y is one array spread over all devices, one row each. Indexing it is a new computation over that "
              "whole array, and its result is replicated on every device (`y0_devices`), so with two or more "
              "devices the compiled indexing moves row 0 to all of them: `y0_collectives` lists the collectives "
              "found in its compiled HLO, and `y0_collective_bytes_per_device` what each device puts in (the "
              "migration guide calls this the gather behind `x[0]`). Reading the shard that already sits on "
              "device 0 runs nothing. The times below were measured here.",
        "zh": "y 是分布在所有设备上的一个数组，每台设备一行。对它索引是一次覆盖整个数组的新计算，"
              "结果会复制到每台设备上（`y0_devices`），所以有两台及以上设备时，编译出的索引程序要把第 0 行送到所有设备："
              "`y0_collectives` 列出它编译后的 HLO 中的集合通信，`y0_collective_bytes_per_device` 是每台设备投入的字节数"
              "（迁移指南把它称为 `x[0]` 背后的 gather）。直接读取已经在 0 号设备上的分片则什么都不用运行。"
              "下面的时间是此处实测的。",
    },
    "entry.index_output.one_device": {
        "en": "With one device, as here, row 0 is already on the only device: the compiled indexing holds no "
              "collective (`y0_collectives` is empty), though it is still a computation of its own (timed "
              "below). The collective appears with two or more devices.",
        "zh": "只有一台设备时（如此处），第 0 行本来就在唯一的设备上：编译出的索引程序里没有集合通信"
              "（`y0_collectives` 为空），但它仍是一次单独的计算（下面有计时）。有两台及以上设备时才会出现集合通信。",
    },
    "entry.index_output.fix": {
        "en": "`y.addressable_shards[0].data` (note its leading axis of 1), or fetch everything once with `jax.device_get(y)`.",
        "zh": "使用 `y.addressable_shards[0].data`（注意它的前导维度为 1），或用 `jax.device_get(y)` 一次取回全部。",
    },
    "w.entry.timing": {"en": "Timing without block_until_ready", "zh": "不调用 block_until_ready 就计时"},
    "entry.timing.what": {
        "en": "Timing the first call, and timing calls without waiting for the result.",
        "zh": "把第一次调用计入时间，或者不等结果就结束计时。",
    },
    "entry.timing.why": {
        "en": "The first call traces and compiles; later calls return as soon as the work is queued (dispatch is "
              "asynchronous). So the first number is mostly compilation and the second mostly nothing.",
        "zh": "第一次调用包含追踪和编译；之后的调用在任务入队后立刻返回（派发是异步的）。"
              "因此第一个数字主要是编译时间，第二个几乎什么都没测到。",
    },
    "entry.timing.fix": {
        "en": "Time the first call apart, then the median of repeats, each ended by `block_until_ready` "
              "(`pmap_core.timing.time_call`).",
        "zh": "把第一次调用单独计时，再取多次重复的中位数，每次都以 `block_until_ready` 结束"
              "（`pmap_core.timing.time_call`）。",
    },
    "w.entry.shard_map_trap": {"en": "shard_map gradients D× too large", "zh": "shard_map 梯度大了 D 倍"},
    "entry.shard_map_trap.what": {
        "en": "Porting a pmap train step to `jax.shard_map` as is: grad on each shard, then `pmean`.",
        "zh": "把 pmap 训练步原样迁移到 `jax.shard_map`：每个分片求梯度，再做 `pmean`。",
    },
    "entry.shard_map_trap.why": {
        "en": "With the default `check_vma=True`, shard_map knows the parameters are the same on every device "
              "(spec `P()`), so autodiff already sums their gradient over devices. The pmean then averages D "
              "equal sums: the result is D times the full-batch gradient (ratio measured here).",
        "zh": "在默认的 `check_vma=True` 下，shard_map 知道参数在每台设备上都相同（spec 为 `P()`），"
              "因此自动微分已经把梯度在各设备间求和。随后的 pmean 对 D 个相同的和取平均：结果是全批次梯度的 D 倍"
              "（比值为此处实测）。",
    },
    "entry.shard_map_trap.one_device": {
        "en": "With one device, as here, the sum over the devices is the one device's gradient, and the pmean of "
              "one value is that value: the ratio is 1 and the gradient is right. The factor D shows with two or "
              "more devices.",
        "zh": "只有一台设备时（如此处），对各设备求和就是这台设备自己的梯度，对一个值做 pmean 仍是它本身："
              "比值为 1，梯度是对的。有两台及以上设备时才会出现 D 倍。",
    },
    "entry.shard_map_trap.fix": {
        "en": "The idiomatic form: let shard_map compute only the loss (`pmean` of the shard losses) and take "
              "`jax.grad` outside it, so autodiff handles the collective (`grad_outside_shard_map`). Inside "
              "shard_map, any one of: `check_vma=False` + pmean (pmap's behaviour); "
              "`lax.pcast(w, 'data', to='varying')` before grad + pmean; or no collective and divide by D. "
              "All four match the full-batch gradient (computed here).",
        "zh": "惯用写法：只让 shard_map 计算损失（对各分片损失做 `pmean`），在它外面求 `jax.grad`，"
              "由自动微分处理集合通信（`grad_outside_shard_map`）。若要在 shard_map 内部修正，任选其一："
              "`check_vma=False` + pmean（与 pmap 行为一致）；在 grad 之前 `lax.pcast(w, 'data', to='varying')` "
              "+ pmean；或不做集合通信、直接除以 D。四者都与全批次梯度一致（此处实算）。",
    },
    "w.entry.side_effects": {"en": "Side effects inside a traced function", "zh": "在被追踪的函数里写副作用"},
    "entry.side_effects.what": {
        "en": "Appending to a Python list (or printing) inside the pmapped function to log each call.",
        "zh": "在 pmap 包装的函数里向 Python 列表追加（或 print）来记录每次调用。",
    },
    "entry.side_effects.why": {
        "en": "Python code in f runs once, while JAX traces it with abstract values; the compiled program that "
              "runs afterwards contains no Python. Two calls, one append, and what it saw was a tracer.",
        "zh": "f 中的 Python 代码只在 JAX 用抽象值追踪时运行一次；之后运行的编译程序里没有 Python。"
              "调用两次只追加一次，而且看到的是一个 tracer。",
    },
    "entry.side_effects.fix": {
        "en": "`jax.debug.callback` (or `jax.debug.print`): it runs on every call, on every device, with real values.",
        "zh": "使用 `jax.debug.callback`（或 `jax.debug.print`）：每次调用、在每台设备上都会用真实值运行。",
    },
}
