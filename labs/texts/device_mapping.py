TEXTS = {
    "title": {"en": "Device mapping", "zh": "设备映射"},
    "summary": {
        "en": "See your devices and how the leading axis becomes the device axis.",
        "zh": "查看设备清单，观察前导维度如何变成设备轴。",
    },
    "intro": {
        "en": "Before service the head cook counts the staff and assigns each one a stove. In JAX that roll call "
              "is `jax.devices()` (every device, with its id, platform and kind) and `jax.local_device_count()` "
              "(how many belong to this process). pmap works from this list.",
        "zh": "开工之前，主厨先点名，再给每位厨师分配一个灶台。在 JAX 中，点名就是 `jax.devices()`"
              "（列出所有设备及其编号、平台、类型）和 `jax.local_device_count()`（本进程拥有几台设备）。"
              "pmap 就依据这张清单分配任务。",
    },
    "devices.heading": {"en": "Your devices", "zh": "你的设备"},
    "metric.local": {"en": "jax.local_device_count()", "zh": "jax.local_device_count()"},
    "metric.processes": {"en": "jax.process_count()", "zh": "jax.process_count()"},
    "col.id": {"en": "id", "zh": "编号"},
    "col.platform": {"en": "platform", "zh": "平台"},
    "col.kind": {"en": "device kind", "zh": "设备类型"},
    "col.process": {"en": "process index", "zh": "进程编号"},
    "axis.heading": {"en": "The leading axis is the device axis", "zh": "前导维度就是设备轴"},
    "axis.explain": {
        "en": "Under `pmap`, the first axis of the input is not data any more: it is the **device axis**. "
              "Slice d of the input goes to device d, the function runs there on one slice (the leading axis "
              "is gone inside it), and the D results are stacked again into an output whose leading axis has "
              "size D. The function here adds 1000 × `lax.axis_index` to its slice, so the thousands digit of "
              "each output value tells which position on the device axis computed it.",
        "zh": "在 `pmap` 下，输入的第一个维度不再是普通数据，而是**设备轴**。输入的第 d 片交给第 d 台设备，"
              "函数在那里只处理这一片（函数内部看不到前导维度），D 个结果再沿前导维度堆叠成大小为 D 的输出。"
              "这里的函数给自己那一片加上 1000 × `lax.axis_index`，因此输出值的千位数字说明它是由设备轴上"
              "哪个位置算出来的。",
    },
    "w.devices": {"en": "Devices D", "zh": "设备数 D"},
    "w.per_device": {"en": "Values per device n", "zh": "每台设备的元素数 n"},
    "shape.input": {"en": "input on the host", "zh": "主机上的输入"},
    "shape.per_device": {"en": "what f sees on each device", "zh": "每台设备上 f 看到的"},
    "shape.output": {"en": "output", "zh": "输出"},
    "owners.heading": {"en": "Who holds which slice of the output", "zh": "输出的每一片由谁持有"},
    "owners.explain": {
        "en": "Read from the output array itself: `out.addressable_shards` lists, for every shard, "
              "`shard.device`, `shard.index` (its slice of the global array) and `shard.data`. "
              "Colour = the device holding the cell; the number = its value.",
        "zh": "直接从输出数组读取：`out.addressable_shards` 为每个分片给出 `shard.device`、"
              "`shard.index`（它在全局数组中的切片）和 `shard.data`。颜色 = 持有该格的设备；数字 = 它的值。",
    },
    "chart.row": {"en": "position on the device axis", "zh": "设备轴上的位置"},
    "chart.element": {"en": "element", "zh": "元素"},
    "chart.device": {"en": "held by device", "zh": "所在设备"},
    "col.index": {"en": "shard.index", "zh": "shard.index"},
    "col.values": {"en": "shard.data", "zh": "shard.data"},
    "sharding.note": {
        "en": "`out.sharding` is `{sharding}`. Since JAX 0.8, `pmap` is implemented as `jit(shard_map(...))` "
              "and is in maintenance mode; its output is an ordinary `jax.Array` sharded over a one-axis mesh. "
              "New code writes the same thing as `jax.shard_map(f, mesh=mesh, in_specs=P('data'), "
              "out_specs=P('data'))`.",
        "zh": "`out.sharding` 是 `{sharding}`。自 JAX 0.8 起，`pmap` 由 `jit(shard_map(...))` 实现并进入维护模式；"
              "它的输出就是分布在一维网格（mesh）上的普通 `jax.Array`。新代码写作 "
              "`jax.shard_map(f, mesh=mesh, in_specs=P('data'), out_specs=P('data'))`。",
    },
    "ownership.ok": {
        "en": "Read back from the array: slice d of the output is on the d-th device of the list, for every d.",
        "zh": "从数组读回的结果：对每个 d，输出的第 d 片都位于设备清单中的第 d 台设备上。",
    },
    "ownership.other": {
        "en": "Read back from the array: the slices are not on the devices in list order (see the table).",
        "zh": "从数组读回的结果：各片并未按设备清单顺序放置（见上表）。",
    },
}
