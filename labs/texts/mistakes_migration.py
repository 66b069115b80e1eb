"""Texts of the migration entries of the common-mistakes page (pmap code for older JAX, on the installed one):
w.entry.<id> (title), entry.<id>.what / .why / .fix, and entry.<id>.one_device where the mistake needs two
or more devices to show."""

TEXTS = {
    "w.entry.committed_input": {"en": "pmap on an input committed to one device",
                                "zh": "pmap 的输入已固定（committed）在单台设备上"},
    "entry.committed_input.what": {
        "en": "Putting a batch on device 0 with `jax.device_put(batch, jax.local_devices()[0])` and handing it "
              "to pmap, as code written for the old pmap often did.",
        "zh": "用 `jax.device_put(batch, jax.local_devices()[0])` 把批次放到 0 号设备上，再交给 pmap——"
              "为旧版 pmap 写的代码常这样做。",
    },
    "entry.committed_input.why": {
        "en": "With two or more devices this fails. An array placed on a device with `jax.device_put` is "
              "committed to it, and pmap is now `jit(shard_map(...))`, which does not move a committed input to "
              "other devices by itself: JAX's message compares the sharding pmap wants (one row per device, over "
              "a mesh of its own) with the one the argument has, `SingleDeviceSharding`. The old pmap copied such "
              "inputs without a word; the migration guide lists this first: inputs are no longer resharded "
              "silently.",
        "zh": "有两台及以上设备时会出错。用 `jax.device_put` 放到某台设备上的数组就固定（committed）在那台设备上，"
              "而 pmap 现在是 `jit(shard_map(...))`，它不会自行把已固定的输入搬到其他设备：JAX 的报错对比了 pmap "
              "需要的分片方式（在它自己的 mesh 上每台设备一行）和该参数实际的分片方式 `SingleDeviceSharding`。"
              "旧版 pmap 会悄悄复制这类输入；迁移指南把这一条列在最前面：输入不再被悄悄地重新分片。",
    },
    "entry.committed_input.fix": {
        "en": "Reshard it yourself before the call: `jax.device_put(batch, NamedSharding(mesh, P('data')))` over "
              "a mesh of the same devices, and give pmap `axis_name='data'`, the mesh's axis name. The output "
              "then spans every device and equals the NumPy result (both computed here).",
        "zh": "调用前自己重新分片：在由同一组设备构成的 mesh 上执行 "
              "`jax.device_put(batch, NamedSharding(mesh, P('data')))`，并给 pmap 传 `axis_name='data'`，"
              "即 mesh 的轴名。这样输出分布在每台设备上，并与 NumPy 的结果一致（两者都在此处计算）。",
    },
    "entry.committed_input.one_device": {
        "en": "With one device, as here, device 0 is all of pmap's devices: the committed batch is already where "
              "pmap wants it, so the mistake runs and gives the fix's result. The error appears with two or more "
              "devices.",
        "zh": "只有一台设备时（如此处），0 号设备就是 pmap 的全部设备：已固定的批次本来就在 pmap 需要的位置，"
              "所以错误写法也能运行，结果与修正写法相同。有两台及以上设备时才会报错。",
    },
    "w.entry.shard_map_in_specs": {"en": "shard_map input not placed as in_specs says",
                                   "zh": "shard_map 的输入没有按 in_specs 放置"},
    "entry.shard_map_in_specs.what": {
        "en": "Calling a `jax.shard_map` over a mesh from `jax.make_mesh`, with `in_specs=P('data')`, on a NumPy "
              "batch, trusting it to split the batch over the devices.",
        "zh": "在由 `jax.make_mesh` 创建的 mesh 上，用 `in_specs=P('data')` 的 `jax.shard_map` 直接处理一个 NumPy "
              "批次，以为它会把批次切分到各设备上。",
    },
    "entry.shard_map_in_specs.why": {
        "en": "On this JAX `jax.make_mesh` gives its axes the Explicit type (`mesh_axis_types` in the fix). Over "
              "Explicit axes shard_map checks each input's sharding against its `in_specs` instead of moving the "
              "data: the NumPy batch is not sharded (`P(None,)` in the message), so the call is refused, and JAX "
              "points to `jax.reshard`. Over a mesh whose axes are Auto the same call still reshards on its own "
              "(`auto_axes_output` in the fix): the axis type is what changed.",
        "zh": "在当前 JAX 上，`jax.make_mesh` 默认把轴设为 Explicit 类型（修正写法中的 `mesh_axis_types`）。"
              "在 Explicit 轴上，shard_map 会把每个输入的分片方式与 `in_specs` 对照，而不是替你搬运数据："
              "NumPy 批次没有分片（报错中的 `P(None,)`），于是调用被拒绝，JAX 提示使用 `jax.reshard`。"
              "在轴类型为 Auto 的 mesh 上，同样的调用仍会自行重新分片（修正写法中的 `auto_axes_output`）："
              "变化的正是轴类型。",
    },
    "entry.shard_map_in_specs.fix": {
        "en": "Place the input as `in_specs` says before the call: "
              "`jax.device_put(batch, NamedSharding(mesh, P('data')))`. `jax.typeof` then shows the sharding in "
              "the type (`placed_type`), and the output equals NumPy's. As JAX's message says, `in_specs` may "
              "also be left out, and shard_map reads the specs from the arguments.",
        "zh": "调用前按 `in_specs` 放置输入：`jax.device_put(batch, NamedSharding(mesh, P('data')))`。"
              "之后 `jax.typeof` 会在类型中显示分片方式（`placed_type`），输出与 NumPy 的一致。"
              "正如 JAX 的报错所说，也可以省略 `in_specs`，由 shard_map 从参数中读取分片规格。",
    },
    "w.entry.mesh_constructors": {"en": "jax.make_mesh in place of jax.sharding.Mesh: other axis types",
                                  "zh": "用 jax.make_mesh 代替 jax.sharding.Mesh：轴类型不同"},
    "entry.mesh_constructors.what": {
        "en": "Replacing `jax.sharding.Mesh(np.array(jax.local_devices()), ('data',))` with "
              "`jax.make_mesh((n,), ('data',))`, as code moved to the newer constructor does, and keeping the "
              "`jax.shard_map` call that ran over the old mesh: `in_specs=P('data')` on a NumPy batch.",
        "zh": "像改用较新构造方式的代码那样，把 `jax.sharding.Mesh(np.array(jax.local_devices()), ('data',))` 换成 "
              "`jax.make_mesh((n,), ('data',))`，却保留原先在旧 mesh 上能运行的 `jax.shard_map` 调用："
              "对一个 NumPy 批次使用 `in_specs=P('data')`。",
    },
    "entry.mesh_constructors.why": {
        "en": "The two constructors do not give the same mesh axes. `jax.sharding.Mesh(...)` gives Auto axes "
              "(`Mesh_axis_types` in the fix), `jax.make_mesh` gives Explicit ones unless told otherwise "
              "(`make_mesh_axis_types`). Over Auto axes shard_map moves the batch as `in_specs` says, and the call "
              "runs (`output_over_Mesh`); over Explicit axes it checks the batch's sharding against `in_specs` "
              "instead, and refuses the unsharded NumPy batch with the message above. Nothing in the call "
              "changed, only the constructor; the entry on `in_specs` is the same refusal seen from the input.",
        "zh": "两种构造方式给出的网格轴并不相同。`jax.sharding.Mesh(...)` 给出 Auto 轴（修正写法中的 "
              "`Mesh_axis_types`），`jax.make_mesh` 在未另行指定时给出 Explicit 轴（`make_mesh_axis_types`）。"
              "在 Auto 轴上，shard_map 会按 `in_specs` 搬运批次，调用能运行（`output_over_Mesh`）；在 Explicit "
              "轴上，它改为把批次的分片方式与 `in_specs` 对照，拒绝未分片的 NumPy 批次，报错见上。调用本身"
              "什么也没变，变的只是构造方式；关于 `in_specs` 的条目是从输入一侧看到的同一种拒绝。",
    },
    "entry.mesh_constructors.fix": {
        "en": "Say which axis types the code was written for: "
              "`jax.make_mesh((n,), ('data',), axis_types=(AxisType.Auto,))` gives the old mesh's Auto axes "
              "(`make_mesh_auto_axis_types`), and the same call runs and equals NumPy's result "
              "(`output_over_make_mesh_auto`, computed here). Or keep the Explicit axes and place the batch as "
              "`in_specs` says first, as the entry on `in_specs` shows. Read `mesh.axis_types` whenever a mesh "
              "comes from code you did not write.",
        "zh": "写明代码所针对的轴类型：`jax.make_mesh((n,), ('data',), axis_types=(AxisType.Auto,))` 给出与旧 "
              "mesh 相同的 Auto 轴（`make_mesh_auto_axis_types`），同样的调用就能运行，结果与 NumPy 的一致"
              "（`output_over_make_mesh_auto`，此处实算）。也可以保留 Explicit 轴，先按 `in_specs` 放置批次，"
              "如关于 `in_specs` 的条目所示。mesh 来自别人写的代码时，先读一读 `mesh.axis_types`。",
    },
    "w.entry.nested_pmap": {"en": "Nested pmap", "zh": "嵌套的 pmap"},
    "entry.nested_pmap.what": {
        "en": "Two pmaps, one inside the other, to map a 2-D array over the devices (an outer and an inner "
              "axis), with a `psum` over the inner one.",
        "zh": "用两层 pmap（一层套在另一层里）把一个二维数组按两个轴（外层轴和内层轴）映射到各设备上，"
              "并在内层轴上做 `psum`。",
    },
    "entry.nested_pmap.why": {
        "en": "Each pmap is now a shard_map over a mesh of its own. Inside the outer one, the context mesh holds "
              "the outer axis only, and the inner pmap brings a mesh with the inner axis: JAX's message says the "
              "two should match. The migration guide says nesting pmaps is no longer supported.",
        "zh": "现在每个 pmap 都是在它自己的 mesh 上的 shard_map。在外层内部，上下文 mesh 只有外层轴，"
              "而内层 pmap 带来一个只有内层轴的 mesh：JAX 的报错说两者应当一致。迁移指南说明嵌套 pmap 已不再受支持。",
    },
    "entry.nested_pmap.fix": {
        "en": "One `jax.shard_map` over one 2-D mesh, `jax.make_mesh((a, b), ('outer', 'inner'))` with a·b = D "
              "(`grid` picks a and b), maps both axes at once; the collective names the axis it runs over. The "
              "result equals the NumPy sum over the inner axis (computed here).",
        "zh": "在一个二维 mesh（`jax.make_mesh((a, b), ('outer', 'inner'))`，a·b = D，由 `grid` 选出 a 和 b）上"
              "用一个 `jax.shard_map` 同时映射两个轴；集合通信写明它作用的轴。结果与 NumPy 沿内层轴求和一致"
              "（此处实算）。",
    },
    "w.entry.pmap_shmap_merge_flag": {"en": "The removed jax_pmap_shmap_merge flag",
                                      "zh": "已移除的 jax_pmap_shmap_merge 选项"},
    "entry.pmap_shmap_merge_flag.what": {
        "en": "Bringing the old pmap back with `jax.config.update('jax_pmap_shmap_merge', False)`, as the "
              "migration guide offered for a while.",
        "zh": "用 `jax.config.update('jax_pmap_shmap_merge', False)` 恢复旧版 pmap——迁移指南曾在一段时间内提供这个办法。",
    },
    "entry.pmap_shmap_merge_flag.why": {
        "en": "JAX 0.10 removed the option, and `jax.config.update` refuses a name it does not know. The guide's "
              "other way back, the environment variable `JAX_PMAP_SHMAP_MERGE=0`, is now ignored: in a fresh "
              "Python it changes nothing and raises no warning (`with_JAX_PMAP_SHMAP_MERGE_0`, "
              "`warnings_about_it`). There is one pmap left, `jit(shard_map(...))`, and its outputs carry a "
              "`NamedSharding`.",
        "zh": "JAX 0.10 移除了这个选项，`jax.config.update` 会拒绝它不认识的名字。指南给出的另一条退路——"
              "环境变量 `JAX_PMAP_SHMAP_MERGE=0`——现在会被忽略：在全新的 Python 进程中它什么也不改变，也不发出任何警告"
              "（`with_JAX_PMAP_SHMAP_MERGE_0`、`warnings_about_it`）。现在只剩一个 pmap，即 `jit(shard_map(...))`，"
              "它的输出带有 `NamedSharding`。",
    },
    "entry.pmap_shmap_merge_flag.fix": {
        "en": "Delete the line and fix what the new pmap reports instead; the entries around this one show the "
              "usual cases. New code can use `jax.shard_map`, or `jax.jit` with shardings, directly.",
        "zh": "删掉这一行，转而修正新版 pmap 报告的问题；本条目前后的条目展示了常见情形。"
              "新代码可以直接使用 `jax.shard_map`，或带分片的 `jax.jit`。",
    },
    "w.entry.device_put_replicated": {"en": "jax.device_put_replicated is gone", "zh": "jax.device_put_replicated 已移除"},
    "entry.device_put_replicated.what": {
        "en": "Replicating parameters the way older tutorials do, with `jax.device_put_replicated`.",
        "zh": "按老教程的做法用 `jax.device_put_replicated` 复制参数。",
    },
    "entry.device_put_replicated.why": {
        "en": "It was deprecated and is now gone: it raises AttributeError, with a pointer to `jax.device_put`. "
              "Its sibling `jax.device_put_sharded` has an entry of its own.",
        "zh": "它先被弃用，现在已被移除：调用会抛出 AttributeError，并提示改用 `jax.device_put`。"
              "与它配套的 `jax.device_put_sharded` 另有单独的条目。",
    },
    "entry.device_put_replicated.fix": {
        "en": "For shard_map and jit, replicate with `jax.device_put(w, NamedSharding(mesh, P()))`: every device "
              "holds the whole w (`devices_holding_all_of_w`). For a pmap, `in_axes=None`; or, where pmap maps "
              "axis 0, D stacked copies placed with `jax.device_put(..., NamedSharding(mesh, P('data')))`. JAX sees "
              "those copies as sharded, not replicated, so `y[0]` on them is a computation across devices "
              "(see the `y[0]` entry).",
        "zh": "对 shard_map 和 jit，用 `jax.device_put(w, NamedSharding(mesh, P()))` 复制：每台设备都持有完整的 w"
              "（`devices_holding_all_of_w`）。对 pmap，用 `in_axes=None`；或者在 pmap 映射第 0 轴时，堆叠 D 份副本并用 "
              "`jax.device_put(..., NamedSharding(mesh, P('data')))` 放置。JAX 把这些副本看作分片而非复制的数据，"
              "所以对它们做 `y[0]` 是一次跨设备的计算（见 `y[0]` 条目）。",
    },
    "w.entry.device_put_sharded": {"en": "jax.device_put_sharded is gone", "zh": "jax.device_put_sharded 已移除"},
    "entry.device_put_sharded.what": {
        "en": "Placing one piece per device with `jax.device_put_sharded(pieces, devices)`, as older pmap code did.",
        "zh": "像旧的 pmap 代码那样，用 `jax.device_put_sharded(pieces, devices)` 给每台设备放一块数据。",
    },
    "entry.device_put_sharded.why": {
        "en": "It was deprecated and is now gone: the attribute no longer exists, and the message points to "
              "`jax.device_put`.",
        "zh": "它先被弃用，现在已被移除：这个属性不再存在，报错提示改用 `jax.device_put`。",
    },
    "entry.device_put_sharded.fix": {
        "en": "Stack the pieces and place the stack one row per device: "
              "`jax.device_put(np.stack(pieces), NamedSharding(mesh, P('data')))`. Device d then holds piece d "
              "(`device_d_holds_piece_d`, checked on every shard).",
        "zh": "把各块堆叠起来，再按每台设备一行放置："
              "`jax.device_put(np.stack(pieces), NamedSharding(mesh, P('data')))`。这样第 d 台设备持有第 d 块"
              "（`device_d_holds_piece_d`，逐个分片核对）。",
    },
}
