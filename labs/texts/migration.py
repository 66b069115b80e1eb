TEXTS = {
    "title": {"en": "pmap → shard_map → jit", "zh": "pmap → shard_map → jit"},
    "summary": {
        "en": "One data-parallel step written three ways and run on your devices: what changes, the shardings, "
              "a mesh and PartitionSpec picker, and the collectives of the compiled programs.",
        "zh": "同一个数据并行训练步用三种写法在你的设备上运行：哪些变了、各数组的分片、mesh 与 PartitionSpec "
              "选择器，以及编译后程序中的集合通信。",
    },
    "intro": {
        "en": "Since JAX 0.8, `jax.pmap` is in maintenance mode and is itself implemented as `jit(shard_map(...))`; "
              "new code is written with `jax.shard_map` or with plain `jax.jit` on arrays that carry a sharding. "
              "Here one data-parallel step — the gradient of a tiny linear model y ≈ x·w + b, averaged over D "
              "devices, then w ← w − η ḡ — is written three ways and run on your devices. Everything below is read "
              "from what ran: the shapes the code saw, the shardings of the arrays, the results, the compiled HLO.",
        "zh": "自 JAX 0.8 起，`jax.pmap` 进入维护模式，其本身就由 `jit(shard_map(...))` 实现；新代码用 "
              "`jax.shard_map`，或对带有分片（sharding）的数组直接用 `jax.jit`。这里把同一个数据并行训练步——"
              "小线性模型 y ≈ x·w + b 的梯度在 D 台设备上取平均，再做 w ← w − η ḡ——用三种写法写出，并在你的设备上"
              "运行。下面的一切都读自实际运行：代码看到的形状、数组的分片、结果、编译后的 HLO。",
    },
    "jax_version": {
        "en": "Installed JAX: {version}. Shardings are printed by `jax.typeof` of this version.",
        "zh": "已安装的 JAX：{version}。分片由这个版本的 `jax.typeof` 打印。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.per_device": {"en": "Samples per device b", "zh": "每台设备的样本数 b"},
    "running": {"en": "Compiling and running the three programs…", "zh": "正在编译并运行三个程序……"},
    "compiling": {"en": "Compiling the training program three ways…", "zh": "正在用三种写法编译训练程序……"},
    # --- 1. the three programs -------------------------------------------------------------
    "ways.heading": {"en": "1. One step, three ways", "zh": "1. 同一步，三种写法"},
    "ways.body": {
        "en": "A global batch of B = {batch} samples with {features} features on D = {devices} devices, b = "
              "{per_device} per device. `loss_fn` and `sgd` are the same in all three; what differs is who splits "
              "the batch and who writes the gradient average.",
        "zh": "全局批次 B = {batch} 个样本、每个 {features} 个特征，D = {devices} 台设备，每台设备 b = {per_device} 个。"
              "三种写法中的 `loss_fn` 和 `sgd` 完全相同；不同的是由谁切分批次、由谁写梯度平均。",
    },
    "way.pmap": {"en": "`jax.pmap` (the old way)", "zh": "`jax.pmap`（旧写法）"},
    "way.shard_map": {"en": "`jax.shard_map`", "zh": "`jax.shard_map`"},
    "way.jit": {"en": "`jax.jit` + `NamedSharding`", "zh": "`jax.jit` + `NamedSharding`"},
    "view.label": {"en": "x where the code runs", "zh": "代码运行处看到的 x"},
    "view.in": {"en": "x passed in: shape {shape}", "zh": "传入的 x：形状 {shape}"},
    # --- 2. what changes -------------------------------------------------------------------
    "changes.heading": {"en": "2. What changes and what does not", "zh": "2. 哪些变了，哪些没变"},
    "changes.body": {
        "en": "Each cell is read from the programs and arrays that just ran. The last column says whether the "
              "three cells say the same thing.",
        "zh": "每个单元格都读自刚刚运行的程序和数组。最后一列说明三个单元格的内容是否相同。",
    },
    "change.view": {"en": "What the code sees of x (`jax.typeof`)", "zh": "代码看到的 x（`jax.typeof`）"},
    "change.rank": {"en": "x passed in → x in the code (shape)", "zh": "传入的 x → 代码中的 x（形状）"},
    "change.axis": {"en": "Where the device axis gets its name", "zh": "设备轴的名字从哪里来"},
    "change.in": {"en": "How inputs are split or replicated", "zh": "输入如何切分或复制"},
    "change.out": {"en": "How outputs come back", "zh": "输出如何返回"},
    "change.place": {"en": "Putting inputs on the devices", "zh": "把输入放到设备上"},
    "change.collective": {"en": "The gradient average you write", "zh": "你写的梯度平均"},
    "change.compiled": {"en": "Collectives in the compiled step", "zh": "编译后这一步里的集合通信"},
    "change.math": {"en": "The math: loss, gradient, update", "zh": "数学：损失、梯度、更新"},
    "change.result": {"en": "Result after the step", "zh": "这一步之后的结果"},
    "col.topic": {"en": "what", "zh": "项目"},
    "col.same": {"en": "same in all three", "zh": "三者相同"},
    "rank.note": {
        "en": "**The rank.** `pmap` maps over a leading axis of size D and takes it away: an input of rank "
              "{pmap_in} reaches the code as rank {pmap_body}. `shard_map` cuts the global array and keeps its "
              "rank: rank {sm_in} in, rank {sm_body} in the code, only the split dimension is smaller. `jit` has "
              "no per-device code: it sees the global shape, and the sharding is part of the type.",
        "zh": "**秩（rank）。** `pmap` 沿大小为 D 的前导维度映射并把它拿掉：秩为 {pmap_in} 的输入到了代码里秩变成 "
              "{pmap_body}。`shard_map` 切分全局数组但保留秩：传入秩 {sm_in}，代码中秩 {sm_body}，只是被切分的那一维"
              "变小了。`jit` 没有逐设备的代码：它看到全局形状，分片是类型的一部分。",
    },
    "names.note": {
        "en": "**The names.** pmap's `axis_name` becomes the name of a mesh axis (`jax.make_mesh`). `in_axes=0` "
              "(split the leading axis) becomes `P('data')` (split dimension 0 over mesh axis 'data'); "
              "`in_axes=None` and `out_axes=None` (one value for every device) become `P()`, replicated. "
              "`jax.device_put_replicated` and `jax.device_put_sharded` are gone: `jax.device_put` with a "
              "`NamedSharding` places an array, split or replicated.",
        "zh": "**名字。** pmap 的 `axis_name` 变成网格（mesh）轴的名字（`jax.make_mesh`）。`in_axes=0`（切分前导维度）"
              "变成 `P('data')`（沿 mesh 轴 'data' 切分第 0 维）；`in_axes=None` 和 `out_axes=None`（每台设备同一个值）"
              "变成 `P()`，即复制（replicated）。`jax.device_put_replicated` 和 `jax.device_put_sharded` 已被移除："
              "用 `jax.device_put` 加 `NamedSharding` 放置数组，无论切分还是复制。",
    },
    "vma.note": {
        "en": "**The trap.** In `shard_map` the params come in as `P()`, the same on every device. With "
              "`check_vma` on (the default), autodiff of such a value already sums its gradient over the devices, "
              "so a `pmean` after it would give D times the mean. `lax.pcast(params, 'data', to='varying')` asks "
              "for each device's own gradient; `pmean` then gives the true mean. After the results, the gradient is "
              "computed both ways on your devices.",
        "zh": "**陷阱。** 在 `shard_map` 中，参数以 `P()` 传入，在每台设备上都相同。开启 `check_vma`（默认）时，"
              "对这样的值求导会自动把梯度在各设备上求和，此后再做 `pmean` 会得到平均值的 D 倍。"
              "`lax.pcast(params, 'data', to='varying')` 要求每台设备自己的梯度；然后 `pmean` 给出真正的平均。"
              "结果之后，这个梯度会用两种写法在你的设备上各算一次。",
    },
    "typeof.note": {
        "en": "**Reading `jax.typeof`.** `float32[16@data,3]` is a global 16×3 array whose dimension 0 is split over "
              "mesh axis 'data'; `{V:data}` marks a value that varies over 'data' (each device has its own); "
              "no mark means one value on every device of the mesh.",
        "zh": "**读懂 `jax.typeof`。** `float32[16@data,3]` 是一个全局 16×3 数组，其第 0 维沿 mesh 轴 'data' 切分；"
              "`{V:data}` 表示该值沿 'data' 变化（每台设备各有一份不同的值）；没有标记则表示 mesh 中每台设备上"
              "都是同一个值。",
    },
    "arrays.heading": {"en": "The sharding of every input and output", "zh": "每个输入和输出的分片"},
    "role.input": {"en": "input", "zh": "输入"},
    "role.output": {"en": "output", "zh": "输出"},
    "col.impl": {"en": "implementation", "zh": "写法"},
    "col.role": {"en": "role", "zh": "角色"},
    "col.name": {"en": "array", "zh": "数组"},
    "col.typeof": {"en": "jax.typeof", "zh": "jax.typeof"},
    "col.spec": {"en": ".sharding.spec", "zh": ".sharding.spec"},
    "results.heading": {"en": "The results", "zh": "结果"},
    "col.param": {"en": "value", "zh": "数值"},
    "col.numpy": {"en": "NumPy", "zh": "NumPy"},
    "metric.between": {"en": "max |difference| between the three", "zh": "三者之间的最大 |差|"},
    "metric.numpy": {"en": "max |difference| from NumPy", "zh": "与 NumPy 的最大 |差|"},
    "results.equal": {
        "en": "All three end with the same parameters and loss, and equal the NumPy step on the whole batch "
              "(largest difference {error:.1e}).",
        "zh": "三种写法得到相同的参数和损失，并与 NumPy 在整个批次上算出的一步一致（最大差 {error:.1e}）。",
    },
    "results.differ": {
        "en": "The three results differ (largest difference {error:.1e}); see the table.",
        "zh": "三个结果不一致（最大差 {error:.1e}），见上表。",
    },
    "trap.heading": {"en": "The trap, run: shard_map's gradient without `pcast`",
                     "zh": "陷阱的实际运行：不用 `pcast` 时 shard_map 的梯度"},
    "trap.body": {
        "en": "The gradient that `pmean` hands to `sgd` in the `shard_map` step, computed on the same devices and "
              "batch twice: as the step writes it (with `lax.pcast`) and without `pcast`. NumPy's is the gradient "
              "of the whole batch.",
        "zh": "`shard_map` 训练步中 `pmean` 交给 `sgd` 的梯度，在相同的设备和批次上计算两次：按训练步的写法"
              "（带 `lax.pcast`），以及不带 `pcast`。NumPy 一列是整个批次的梯度。",
    },
    "col.without_pcast": {"en": "without pcast", "zh": "不带 pcast"},
    "col.with_pcast": {"en": "with pcast (the step)", "zh": "带 pcast（训练步）"},
    "col.numpy_grad": {"en": "NumPy, whole batch", "zh": "NumPy，整个批次"},
    "trap.shows": {
        "en": "Without `pcast` the gradient is {factor:.4g}× NumPy's on D = {devices} devices: D times the mean, "
              "and `sgd` would take a step D times too long. With `pcast` it equals NumPy's.",
        "zh": "不带 `pcast` 时，梯度在 D = {devices} 台设备上是 NumPy 的 {factor:.4g} 倍：是平均值的 D 倍，"
              "`sgd` 的步长会大 D 倍。带 `pcast` 时它与 NumPy 的相等。",
    },
    "trap.one_device": {
        "en": "With one device the sum over the devices is that device's own gradient, so without `pcast` the "
              "gradient is still NumPy's ({factor:.4g}×). The factor D shows from two devices on.",
        "zh": "只有一台设备时，对各设备求和就是这台设备自己的梯度，所以不带 `pcast` 的梯度仍等于 NumPy 的"
              "（{factor:.4g} 倍）。从两台设备起才会出现 D 倍。",
    },
    "trap.differs": {
        "en": "On this JAX the gradient without `pcast` is {factor:.4g}× NumPy's on D = {devices} devices, not what "
              "the note above says: trust the table.",
        "zh": "在当前 JAX 上，不带 `pcast` 的梯度在 D = {devices} 台设备上是 NumPy 的 {factor:.4g} 倍，"
              "与上面的说明不符：请以表格为准。",
    },
    # --- 3. mesh and PartitionSpec ----------------------------------------------------------
    "mesh.heading": {"en": "3. A mesh and a PartitionSpec: who holds which block", "zh": "3. mesh 与 PartitionSpec：谁持有哪一块"},
    "mesh.body": {
        "en": "A mesh arranges the D devices in a grid with named axes: 1-D (axis 'x') or 2-D a × b (axes 'x' and "
              "'y'). A PartitionSpec says, per array dimension, which mesh axes split it; a dimension it leaves out "
              "stays whole, and a mesh axis it does not name holds replicated copies. The array is placed with "
              "`jax.device_put(x, NamedSharding(mesh, spec))`; the picture is read from its `addressable_shards` "
              "(`shard.index`, `shard.device`) — what `jax.debug.visualize_array_sharding` draws, as a chart.",
        "zh": "mesh（网格）把 D 台设备排成带命名轴的网格：一维（轴 'x'）或二维 a × b（轴 'x' 和 'y'）。PartitionSpec "
              "逐个数组维度说明由哪些 mesh 轴来切分；它未提到的维度保持完整，它未使用的 mesh 轴上则是复制的副本。"
              "数组用 `jax.device_put(x, NamedSharding(mesh, spec))` 放置；图读自数组的 `addressable_shards`"
              "（`shard.index`、`shard.device`）——也就是 `jax.debug.visualize_array_sharding` 画的内容，这里画成图表。",
    },
    "w.mesh": {"en": "Mesh (D = 1-D; a x b = 2-D)", "zh": "mesh（D = 一维；a x b = 二维）"},
    "w.spec": {"en": "PartitionSpec", "zh": "PartitionSpec"},
    "w.spec.x": {"en": "P('x')", "zh": "P('x')"},
    "w.spec.x,y": {"en": "P('x', 'y')", "zh": "P('x', 'y')"},
    "w.spec.none,y": {"en": "P(None, 'y')", "zh": "P(None, 'y')"},
    "w.spec.y,x": {"en": "P('y', 'x')", "zh": "P('y', 'x')"},
    "w.spec.none,x": {"en": "P(None, 'x')", "zh": "P(None, 'x')"},
    "w.spec.xy": {"en": "P(('x', 'y'))", "zh": "P(('x', 'y'))"},
    "w.spec.replicated": {"en": "P() (replicated)", "zh": "P()（复制）"},
    "w.rows": {"en": "Rows", "zh": "行数"},
    "w.cols": {"en": "Columns", "zh": "列数"},
    "mesh.grid": {"en": "The mesh: device ids by position", "zh": "mesh：各位置上的设备编号"},
    "chart.device": {"en": "device", "zh": "设备"},
    "chart.blocks": {"en": "Which devices hold each block of the {rows}×{cols} array",
                     "zh": "{rows}×{cols} 数组的每一块由哪些设备持有"},
    "chart.row": {"en": "row", "zh": "行"},
    "chart.col": {"en": "column", "zh": "列"},
    "chart.devices": {"en": "held by devices", "zh": "持有的设备"},
    "placed.typeof": {
        "en": "`jax.typeof(x)` = `{typeof}`; each shard is {shard_shape}; each block is held by {copies} device(s).",
        "zh": "`jax.typeof(x)` = `{typeof}`；每个分片的形状是 {shard_shape}；每一块由 {copies} 台设备持有。",
    },
    "placed.ok": {
        "en": "Read from the array: every device holds the block its position in the mesh predicts, and every "
              "shard's data equals the NumPy slice `x[shard.index]`.",
        "zh": "从数组读回：每台设备持有的正是它在 mesh 中的位置所预言的那一块，并且每个分片的数据都等于 NumPy 切片 "
              "`x[shard.index]`。",
    },
    "placed.bad": {
        "en": "Read from the array: the shards are not where the mesh positions predict (see the table).",
        "zh": "从数组读回：分片并不在 mesh 位置所预言的地方（见表）。",
    },
    "shards.expander": {"en": "Every shard: device and index", "zh": "每个分片：设备与索引"},
    "col.device": {"en": "device", "zh": "设备"},
    "col.rows": {"en": "rows [start, stop)", "zh": "行 [起, 止)"},
    "col.cols": {"en": "columns [start, stop)", "zh": "列 [起, 止)"},
    "jax.says": {"en": "What JAX itself raises for this placement:", "zh": "JAX 本身对这种放置抛出的错误："},
    "error.mesh_axis_missing": {
        "en": "`{spec}` names mesh axis '{axis}', but this mesh has only {mesh_axes}. A 1-D mesh has the one axis "
              "'x': choose a 2-D mesh (a x b) or a spec that names 'x' only.",
        "zh": "`{spec}` 用到了 mesh 轴 '{axis}'，但这个 mesh 只有 {mesh_axes}。一维 mesh 只有一个轴 'x'："
              "请选择二维 mesh（a x b），或只使用 'x' 的 spec。",
    },
    "error.block_not_divisible": {
        "en": "`{spec}` cuts dimension {dim} (size {size}) into {parts} equal blocks, but {parts} does not divide "
              "{size}. Sizes nearby that do: {nearest}.",
        "zh": "`{spec}` 要把第 {dim} 维（大小 {size}）切成 {parts} 个相等的块，但 {size} 不能被 {parts} 整除。"
              "附近可以整除的大小：{nearest}。",
    },
    "error.unknown_mesh": {
        "en": "Mesh `{mesh}` is not a shape of {devices} devices; choose one of {options}.",
        "zh": "mesh `{mesh}` 不是 {devices} 台设备的形状；请从 {options} 中选择。",
    },
    "error.unknown_spec": {
        "en": "Unknown PartitionSpec `{spec}`; choose one of {options}.",
        "zh": "未知的 PartitionSpec `{spec}`；请从 {options} 中选择。",
    },
    # --- 4. HLO inspector -----------------------------------------------------------------
    "hlo.heading": {"en": "4. HLO inspector: the communication of the compiled programs",
                    "zh": "4. HLO 检查器：编译后程序中的通信"},
    "hlo.body": {
        "en": "The lab's training program (one step of the {model} model, {per_device} samples per device, on "
              "D = {devices} devices) is compiled in each implementation, and every collective (all-reduce, "
              "all-gather, reduce-scatter, collective-permute, all-to-all) is read from the compiled HLO with its "
              "shapes and the bytes each device puts in. Bytes per step = what each device puts into collectives that span more "
              "than one device in one step.",
        "zh": "本实验的训练程序（{model} 模型的一步，每台设备 {per_device} 个样本，D = {devices} 台设备）用每种写法"
              "编译，并从编译后的 HLO 中读出每个集合通信（全归约 all-reduce、全收集 all-gather、归约散射 "
              "reduce-scatter、collective-permute、all-to-all）及其形状和每台设备放入的字节数。每步字节数 = 一步中每台设备"
              "放入跨越多台设备的集合通信的字节数。",
    },
    "w.model": {"en": "Model", "zh": "模型"},
    "w.model.linear": {"en": "linear (w, b)", "zh": "线性（w、b）"},
    "w.model.mlp": {"en": "MLP (one hidden layer)", "zh": "MLP（一个隐藏层）"},
    "col.kind": {"en": "collective", "zh": "集合通信"},
    "col.shapes": {"en": "shapes (result)", "zh": "形状（结果）"},
    "col.bytes": {"en": "bytes per device", "zh": "每台设备字节数"},
    "col.group": {"en": "devices per group", "zh": "每组设备数"},
    "col.instruction": {"en": "HLO instruction", "zh": "HLO 指令"},
    "hlo.counts": {"en": "Collectives counted in each compiled program", "zh": "每个编译后程序中的集合通信数量"},
    "hlo.bytes_axis": {"en": "bytes per device per step", "zh": "每台设备每步字节数"},
    "hlo.none": {"en": "No collective in this program.", "zh": "这个程序中没有集合通信。"},
    "hlo.same": {
        "en": "The three compiled programs communicate the same: {bytes} bytes per device per step each, in "
              "{all_reduces} all-reduce(s) and {all_gathers} all-gather(s) per program. Writing the average by hand "
              "(`pmap`, `shard_map`) or leaving it to the compiler (`jit`) gives the same communication.",
        "zh": "三个编译后的程序通信量相同：每个程序每步每台设备 {bytes} 字节，包含 {all_reduces} 次全归约、"
              "{all_gathers} 次全收集。手写平均（`pmap`、`shard_map`）还是交给编译器（`jit`），通信都一样。",
    },
    "hlo.same_bytes": {
        "en": "The three compiled programs put the same {bytes} bytes per device per step into collectives, "
              "split into different instructions (see the counts).",
        "zh": "三个编译后的程序每步每台设备放入集合通信的字节数相同，都是 {bytes} 字节，只是拆成了不同的指令"
              "（见计数表）。",
    },
    "hlo.differs": {
        "en": "The three compiled programs do not communicate the same bytes per step: {detail}.",
        "zh": "三个编译后的程序每步通信的字节数不同：{detail}。",
    },
    "hlo.one_device": {
        "en": "With one device there is nobody to talk to: a collective over a group of one device moves no "
              "bytes, so it counts 0.",
        "zh": "只有一台设备时无人可通信：组内只有一台设备的集合通信不传输任何字节，因此计为 0。",
    },
    "hlo.expander": {"en": "Compiled HLO of {impl}", "zh": "{impl} 编译后的 HLO"},
    "hlo.text_note": {
        "en": "As XLA compiled it, without the source tables and `metadata={…}`.",
        "zh": "XLA 编译后的原文，去掉了源码表和 `metadata={…}`。",
    },
    # --- 5. from JAX 0.10.2 to 0.12 ------------------------------------------------------
    "steps.heading": {"en": "5. From JAX 0.10.2 to 0.12: the steps a migration meets",
                      "zh": "5. 从 JAX 0.10.2 到 0.12：迁移时会遇到的几步"},
    "steps.body": {
        "en": "Each step below is a small program that ran just now on the installed JAX, {version}; the first one "
              "on the first D = {devices} devices. Its facts are pieces of code and what each gave here: a value, or "
              "the exception JAX raised, with JAX's own type and message. JAX {recorded} cannot run in this process, "
              "so the column beside is a record: what the same programs gave on JAX {recorded} under Python 3.11.7. "
              "The release is read from JAX's changelog (its 0.11.0 section; the snapshot read ends before 0.11.1). "
              "A step counts as changed when any fact recorded on {recorded} differs from what ran here.",
        "zh": "下面每一步都是一个小程序，刚刚在已安装的 JAX {version} 上运行过；第一步运行在前 D = {devices} 台设备上。"
              "它的事实是一段段代码以及每段代码在这里的结果：一个值，或者 JAX 抛出的异常（JAX 自己的类型和消息）。"
              "JAX {recorded} 无法在本进程中运行，所以旁边那一列是一份记录：同样的程序在 Python 3.11.7 下的 JAX "
              "{recorded} 上得到的结果。版本一列读自 JAX 的更新日志（0.11.0 一节；所读的快照止于 0.11.1 之前）。"
              "只要在 {recorded} 上记录的某个事实与这里运行的结果不同，这一步就算作有变化。",
    },
    "steps.running": {"en": "Running the migration steps on the installed JAX…", "zh": "正在已安装的 JAX 上运行迁移步骤……"},
    "steps.count": {"en": "{changed} of {total} steps behave differently from JAX 0.10.2 here.",
                    "zh": "{total} 步中有 {changed} 步在这里的表现与 JAX 0.10.2 不同。"},
    "col.step": {"en": "step", "zh": "步骤"},
    "col.now": {"en": "what ran here", "zh": "这里运行的结果"},
    "col.recorded": {"en": "recorded on JAX 0.10.2", "zh": "JAX 0.10.2 上的记录"},
    "col.release": {"en": "release (JAX changelog)", "zh": "版本（JAX 更新日志）"},
    "col.verdict": {"en": "verdict", "zh": "结论"},
    "verdict.changed": {"en": "changed since 0.10.2", "zh": "自 0.10.2 起有变化"},
    "verdict.same": {"en": "as on 0.10.2", "zh": "与 0.10.2 相同"},
    "steps.now": {"en": "What ran here, on JAX {version}:", "zh": "在这里（JAX {version}）运行的结果："},
    "steps.recorded": {"en": "Recorded on JAX {version} (Python 3.11.7), not run here:",
                       "zh": "在 JAX {version}（Python 3.11.7）上的记录，未在这里运行："},
    "steps.differs": {"en": "The facts that differ from the record:", "zh": "与记录不同的事实："},
    "steps.changelog": {"en": "JAX's changelog, {section}, verbatim:", "zh": "JAX 更新日志 {section} 的原文："},
    "steps.no_changelog": {
        "en": "JAX's changelog lists no change to these in its 0.11.0 section; what 0.11.1 to 0.12 list is not in "
              "the changelog snapshot read.",
        "zh": "JAX 更新日志的 0.11.0 一节没有列出与此相关的变化；0.11.1 到 0.12 列出了什么不在所读的更新日志快照中。",
    },
    "steps.program": {"en": "The program that ran:", "zh": "运行的程序："},
    "step.three_maps.title": {"en": "pmap, smap and shard_map side by side", "zh": "pmap、smap 与 shard_map 并列"},
    "step.three_maps.release": {"en": "none listed in 0.11.0; pmap is jit(shard_map) since 0.8.0",
                                "zh": "0.11.0 未列出；自 0.8.0 起 pmap 即 jit(shard_map)"},
    "step.three_maps.body": {
        "en": "The same doubling of two values per device, written three ways on the first D devices: `jax.pmap` on "
              "an array of shape (D, 2), `jax.smap` and `jax.shard_map` on the array of shape (2D,) placed with "
              "`NamedSharding(mesh, P('data'))`. `smap` maps one axis at a time and takes its mesh from "
              "`jax.set_mesh`. Over the mesh `jax.make_mesh` gives (its axis types: `mesh.axis_types`), an Explicit "
              "axis makes `smap` and `shard_map` check that the input is placed as their specs say, so the program "
              "places it first. The facts: whether each name exists, the first line of pmap's docstring as the "
              "installed JAX has it, the warnings the three calls raised, and whether the three results equal "
              "NumPy's `2 * x`.",
        "zh": "同一个“每台设备两个值、各乘以 2”的计算，在前 D 台设备上用三种写法写出：`jax.pmap` 作用于形状为 (D, 2) "
              "的数组，`jax.smap` 和 `jax.shard_map` 作用于形状为 (2D,)、用 `NamedSharding(mesh, P('data'))` 放置的"
              "数组。`smap` 一次映射一个轴，它的 mesh 来自 `jax.set_mesh`。在 `jax.make_mesh` 给出的 mesh 上"
              "（其轴类型见 `mesh.axis_types`），Explicit 轴会让 `smap` 和 `shard_map` 检查输入是否按它们的规格放置，"
              "所以程序先放置输入。事实包括：每个名字是否存在、已安装 JAX 中 pmap 文档字符串的第一行、三次调用发出的警告，"
              "以及三个结果是否都等于 NumPy 的 `2 * x`。",
    },
    "step.remat.title": {"en": "Rematerialization: checkpoint policies, custom_remat, jax_remat3",
                         "zh": "重计算：checkpoint 策略、custom_remat、jax_remat3"},
    "step.remat.release": {
        "en": "0.11.0 lists jax.custom_remat, jax.checkpoint_policies as a submodule, name-based policy classes",
        "zh": "0.11.0 列出 jax.custom_remat、作为子模块的 jax.checkpoint_policies 以及按名字选择的策略类",
    },
    "step.remat.body": {
        "en": "The 0.11.0 changelog lists `jax.custom_remat` (per-function control of rematerialization under the "
              "`jax_remat3` implementation) and `jax.checkpoint_policies` as a submodule with name-based policy "
              "classes such as `SaveOnlyTheseNames`. The program asks the installed JAX instead of the changelog: the "
              "type of `jax.checkpoint_policies` and its names, the lookup of `jax.custom_remat` (a value, or JAX's "
              "own error), and the `jax_remat3` flag read through `jax.config`. Where the two disagree, trust what "
              "ran. It then runs `jax.checkpoint` with two policies on a layer of two matmuls and counts what the "
              "backward pass keeps besides the inputs (`residuals_kept`, read off the jaxpr of `jax.vjp`): "
              "`dots_saveable` keeps the outputs of the matmuls, `nothing_saveable` keeps none and computes them "
              "again.",
        "zh": "0.11.0 的更新日志列出了 `jax.custom_remat`（在 `jax_remat3` 实现下逐函数控制重计算）以及作为子模块的 "
              "`jax.checkpoint_policies`，后者带有 `SaveOnlyTheseNames` 等按名字选择的策略类。程序不看更新日志，而是直接"
              "询问已安装的 JAX：`jax.checkpoint_policies` 的类型和其中的名字、查找 `jax.custom_remat` 的结果（一个值，"
              "或 JAX 自己的报错），以及通过 `jax.config` 读到的 `jax_remat3` 选项。两者不一致时，以运行结果为准。"
              "随后它在一个含两次矩阵乘法的层上用两种策略运行 `jax.checkpoint`，统计反向传播除输入之外保留了多少个值"
              "（`residuals_kept`，读自 `jax.vjp` 的 jaxpr）：`dots_saveable` 保留矩阵乘法的输出，`nothing_saveable` "
              "一个也不保留，反向时重新计算。",
    },
    "step.empty.title": {"en": "jnp.empty", "zh": "jnp.empty"},
    "step.empty.release": {"en": "0.11.0, a breaking change: uninitialized arrays",
                           "zh": "0.11.0，破坏性变更：未初始化的数组"},
    "step.empty.body": {
        "en": "On 0.10.2 `jnp.empty` filled its array with zeros: its jaxpr was a `broadcast_in_dim` of 0.0 (the "
              "record). The 0.11.0 changelog says it now gives an uninitialized array, as NumPy's does. The "
              "program prints the jaxpr of `jnp.empty(4)` on the installed JAX, lists its primitives and looks for "
              "that fill. Code that needs zeros calls `jnp.zeros`.",
        "zh": "在 0.10.2 上，`jnp.empty` 会把数组填成 0：它的 jaxpr 是对 0.0 做 `broadcast_in_dim`（见记录）。"
              "0.11.0 的更新日志说它现在像 NumPy 的一样给出未初始化的数组。程序打印 `jnp.empty(4)` 在已安装 JAX 上的 "
              "jaxpr，列出其中的原语，并查找那次填 0。需要 0 的代码请调用 `jnp.zeros`。",
    },
    "step.cross.title": {"en": "jnp.cross of 2-element vectors", "zh": "两元素向量的 jnp.cross"},
    "step.cross.release": {
        "en": "deprecated in 0.11.0, removal announced for 0.12.0 (the 0.12 notes are not in the changelog snapshot)",
        "zh": "0.11.0 弃用，并预告在 0.12.0 移除（0.12 的说明不在所读的更新日志快照中）",
    },
    "step.cross.body": {
        "en": "On 0.10.2 `jnp.cross` of two 2-element vectors returned the number a0·b1 − a1·b0. The 0.11.0 "
              "changelog deprecated 2-element inputs, following NumPy, and announced their removal for 0.12.0; the "
              "table shows what the installed JAX does with them. The form that runs on both versions pads each "
              "vector with a zero to 3 elements and takes the last component of the cross product; it is checked "
              "against the formula computed with NumPy.",
        "zh": "在 0.10.2 上，两个两元素向量的 `jnp.cross` 返回数 a0·b1 − a1·b0。0.11.0 的更新日志随 NumPy 一起弃用了"
              "两元素输入，并预告在 0.12.0 移除；表中显示已安装的 JAX 如何处理它们。两个版本上都能运行的写法是：给每个"
              "向量补一个 0 成为 3 个元素，再取叉积的最后一个分量；它与用 NumPy 按公式算出的结果对照。",
    },
    "step.cloud_tpu_init.title": {"en": "import jax.cloud_tpu_init", "zh": "import jax.cloud_tpu_init"},
    "step.cloud_tpu_init.release": {"en": "0.11.0, removed (its warning on 0.10.2: deprecated in 0.8.1)",
                                    "zh": "0.11.0 移除（它在 0.10.2 上的警告：0.8.1 起弃用）"},
    "step.cloud_tpu_init.body": {
        "en": "A module that did nothing: 0.10.2 imported it with a DeprecationWarning (the record), and the 0.11.0 "
              "changelog removed it. The program imports it on the installed JAX. Delete the import: nothing "
              "replaces it.",
        "zh": "一个什么也不做的模块：0.10.2 导入它时会发出 DeprecationWarning（见记录），0.11.0 的更新日志把它移除了。"
              "程序在已安装的 JAX 上导入它。删掉这条 import 即可，没有替代品。",
    },
    "step.core.title": {"en": "Names removed from jax.core", "zh": "从 jax.core 移除的名字"},
    "step.core.release": {"en": "0.11.0, removed after their deprecation", "zh": "0.11.0，在弃用之后移除"},
    "step.core.body": {
        "en": "0.10.2 still answered `jax.core.new_jaxpr_eqn`, `jax.core.Effect` and `jax.core.check_jaxpr`, each "
              "with a DeprecationWarning that points to `jax.extend.core` (the record); the 0.11.0 changelog removed "
              "them with about thirty other `jax.core` names. The program looks each one up in `jax.core` on the "
              "installed JAX, and checks that `jax.extend.core` has the same name: where it does, import it from "
              "there.",
        "zh": "0.10.2 仍然能找到 `jax.core.new_jaxpr_eqn`、`jax.core.Effect` 和 `jax.core.check_jaxpr`，每次都发出指向 "
              "`jax.extend.core` 的 DeprecationWarning（见记录）；0.11.0 的更新日志把它们连同另外约三十个 `jax.core` "
              "名字一起移除了。程序在已安装的 JAX 上逐个在 `jax.core` 中查找它们，并检查 `jax.extend.core` 中是否有同名"
              "对象：有的话，就从那里导入。",
    },
    "step.inline.title": {"en": "jax.Inline for jax.jit", "zh": "用于 jax.jit 的 jax.Inline"},
    "step.inline.release": {"en": "0.11.0, a new feature", "zh": "0.11.0，新功能"},
    "step.inline.body": {
        "en": "New in the 0.11.0 changelog: an enum of inlining policies for `jax.jit` (its `inline=` argument). "
              "The program lists the members the installed JAX has and runs one `jax.jit` with "
              "`inline=jax.Inline.AUTO`. On 0.10.2 the name did not exist (the record).",
        "zh": "0.11.0 更新日志中的新功能：供 `jax.jit` 使用的内联策略枚举（即它的 `inline=` 参数）。程序列出已安装 JAX "
              "中的成员，并用 `inline=jax.Inline.AUTO` 运行一次 `jax.jit`。在 0.10.2 上这个名字并不存在（见记录）。",
    },
    "step.python.title": {"en": "The Python interpreter", "zh": "Python 解释器"},
    "step.python.release": {"en": "0.11.0 dropped Python 3.11", "zh": "0.11.0 不再支持 Python 3.11"},
    "step.python.body": {
        "en": "The 0.11.0 changelog dropped Python 3.11. A JAX release states the interpreters it accepts in its "
              "package metadata (`Requires-Python`); the program reads it for the installed jax with "
              "`importlib.metadata` and prints the interpreter running. An environment on Python 3.11 stays on JAX "
              "0.10; moving to a newer JAX means a new environment on an interpreter its `Requires-Python` accepts.",
        "zh": "0.11.0 的更新日志不再支持 Python 3.11。每个 JAX 版本在包元数据中写明它接受的解释器（`Requires-Python`）；"
              "程序用 `importlib.metadata` 读出已安装 jax 的这一项，并打印正在运行的解释器。Python 3.11 上的环境只能"
              "停留在 JAX 0.10；升级到更新的 JAX，需要在其 `Requires-Python` 接受的解释器上新建环境。",
    },
}

