"""Texts of the interview questions: w.question.<id> (short title), q.<id>.text, q.<id>.explain.

Explanations refer to the computed answer as {answer} and to the device count as {n}; no answer is typed in.
"""

from labs.texts.interview_zero import TEXTS as _ZERO

TEXTS = {
    "w.question.output_shape": {"en": "Output shape of a pmap", "zh": "pmap 的输出形状"},
    "q.output_shape.text": {
        "en": "x has shape ({n}, 4, 3) and there are {n} devices. What shape does `jax.pmap(lambda v: v.sum(axis=-1))(x)` return?",
        "zh": "x 的形状为 ({n}, 4, 3)，共有 {n} 台设备。`jax.pmap(lambda v: v.sum(axis=-1))(x)` 返回什么形状？",
    },
    "q.output_shape.explain": {
        "en": "Each device sees (4, 3) and returns (4,); pmap stacks the {n} results along a new leading axis: {answer}.",
        "zh": "每台设备看到 (4, 3) 并返回 (4,)；pmap 把 {n} 个结果沿新的前导维度堆叠：{answer}。",
    },
    "w.question.per_device_shape": {"en": "What one device sees", "zh": "单台设备看到什么"},
    "q.per_device_shape.text": {
        "en": "A batch of {n}·4 rows of 3 features is reshaped to ({n}, 4, 3) and pmapped. What shape does the "
              "function see on one device?",
        "zh": "一个 {n}·4 行、每行 3 个特征的批次被 reshape 成 ({n}, 4, 3) 后交给 pmap。函数在单台设备上看到的形状是？",
    },
    "q.per_device_shape.explain": {
        "en": "pmap removes the device axis: inside, a device works on its own slice {answer}, the per-device batch b = B/D.",
        "zh": "pmap 去掉设备轴：在函数内部，每台设备处理自己的切片 {answer}，即每台设备的批大小 b = B/D。",
    },
    "w.question.pmean_value": {"en": "pmean of 0 … D−1", "zh": "0 … D−1 的 pmean"},
    "q.pmean_value.text": {
        "en": "Device d holds the value d (d = 0 … {n}−1). After `lax.pmean`, what does the last device (d = {n}−1) hold?",
        "zh": "第 d 台设备持有数值 d（d = 0 … {n}−1）。执行 `lax.pmean` 后，最后一台设备（d = {n}−1）持有什么值？",
    },
    "q.pmean_value.explain": {
        "en": "pmean is an all-reduce with a mean: every device gets (0 + … + {n}−1)/{n} = {answer}, not only the last one.",
        "zh": "pmean 是取平均的全归约：每台设备（不只是最后一台）都得到 (0 + … + {n}−1)/{n} = {answer}。",
    },
    "w.question.psum_of_one": {"en": "psum(1)", "zh": "psum(1)"},
    "q.psum_of_one.text": {
        "en": "Inside a pmap over {n} devices, what is `lax.psum(1, axis_name)`?",
        "zh": "在 {n} 台设备上的 pmap 内部，`lax.psum(1, axis_name)` 等于多少？",
    },
    "q.psum_of_one.explain": {
        "en": "Each device contributes 1, so the sum is the number of devices on the axis: {answer}. It is the "
              "usual way to get D inside the function.",
        "zh": "每台设备贡献 1，所以和就是该轴上的设备数：{answer}。这是在函数内部获得 D 的常用写法。",
    },
    "w.question.ppermute_value": {"en": "ppermute around the ring", "zh": "环上的 ppermute"},
    "q.ppermute_value.text": {
        "en": "Device d holds 10·d. `lax.ppermute` sends each device's value to device d+1 (the last one wraps to 0). "
              "What does device 0 hold afterwards?",
        "zh": "第 d 台设备持有 10·d。`lax.ppermute` 把每台设备的值发送给 d+1 号设备（最后一台绕回 0 号）。之后 0 号设备持有什么？",
    },
    "q.ppermute_value.explain": {
        "en": "Device 0 receives from the last device, {n}−1, whose value was {answer}. Ring all-reduce is built from exactly these neighbour sends.",
        "zh": "0 号设备接收最后一台（{n}−1 号）设备的值 {answer}。环形全归约正是由这种相邻发送构成的。",
    },
    "w.question.all_gather_shape": {"en": "all_gather without tiling", "zh": "不拼接的 all_gather"},
    "q.all_gather_shape.text": {
        "en": "Each of {n} devices holds shape (2,). What is the shape of the pmap output of `lax.all_gather(v, axis)`?",
        "zh": "{n} 台设备每台持有形状 (2,) 的数据。`lax.all_gather(v, axis)` 的 pmap 输出形状是？",
    },
    "q.all_gather_shape.explain": {
        "en": "Every device gets all shards stacked on a new axis, ({n}, 2); pmap adds the device axis in front: {answer}.",
        "zh": "每台设备得到沿新轴堆叠的全部分片 ({n}, 2)；pmap 再在前面加上设备轴：{answer}。",
    },
    "w.question.all_gather_tiled_shape": {"en": "all_gather with tiled=True", "zh": "tiled=True 的 all_gather"},
    "q.all_gather_tiled_shape.text": {
        "en": "Same as before, but with `tiled=True`. What shape comes back?",
        "zh": "与上一题相同，但使用 `tiled=True`。返回什么形状？",
    },
    "q.all_gather_tiled_shape.explain": {
        "en": "tiled=True concatenates instead of stacking: each device holds ({n}·2,), and with the device axis: {answer}.",
        "zh": "tiled=True 是拼接而不是堆叠：每台设备持有 ({n}·2,)，加上设备轴后为 {answer}。",
    },
    "w.question.psum_scatter_value": {"en": "Reduce-scatter", "zh": "归约散射"},
    "q.psum_scatter_value.text": {
        "en": "Each of {n} devices holds a vector of {n} ones. After `lax.psum_scatter`, what value does device 0 hold?",
        "zh": "{n} 台设备每台持有 {n} 个 1 组成的向量。执行 `lax.psum_scatter` 后，0 号设备持有什么值？",
    },
    "q.psum_scatter_value.explain": {
        "en": "The vectors are summed (every entry becomes {answer}) and device d keeps only entry d. "
              "Reduce-scatter followed by all-gather is an all-reduce.",
        "zh": "各向量先求和（每个元素都变成 {answer}），第 d 台设备只保留第 d 个元素。归约散射再接全收集就是全归约。",
    },
    "w.question.uneven_batch": {"en": "A batch that does not divide", "zh": "不能整除的批次"},
    "q.uneven_batch.text": {
        "en": "What happens when you pmap a flat batch of {n} + 4 samples over {n} devices?",
        "zh": "把 {n} + 4 个样本组成的一维批次 pmap 到 {n} 台设备上会怎样？",
    },
    "q.uneven_batch.explain": {
        "en": "Here it gives {answer}. pmap maps the leading axis onto the devices, one row per device, so that "
              "axis may be at most the device count: {n} + 4 rows cannot fit on {n} devices. A shorter axis runs "
              "on fewer devices; a longer one fails, and pmap never splits or pads it for you. Which error you "
              "see depends on whether {n} divides the length (pmap is built on shard_map): ValueError when it "
              "does, IndivisibleError when it does not. The options are the outcomes of the same code for "
              "other batch lengths.",
        "zh": "这里的结果是 {answer}。pmap 把前导维度映射到设备上，每台设备一行，所以该维度最多等于设备数："
              "{n} + 4 行放不进 {n} 台设备。更短的前导维度会在较少的设备上运行；更长的则会出错，"
              "pmap 从不替你切分或补齐。具体报哪种错取决于 {n} 能否整除该长度（pmap 构建在 shard_map 之上）："
              "能整除时是 ValueError，不能整除时是 IndivisibleError。选项是同一段代码在其他批次长度下的结果。",
    },
    "w.question.mean_of_means": {"en": "Mean of per-device gradients", "zh": "各设备梯度的平均"},
    "q.mean_of_means.text": {
        "en": "Each device takes the gradient of the mean loss on its equal-sized shard, then `pmean`. Is that "
              "equal or different from the gradient on the whole batch at once?",
        "zh": "每台设备在大小相同的分片上对平均损失求梯度，然后做 `pmean`。它与一次性在整个批次上求得的梯度相同还是不同？",
    },
    "q.mean_of_means.explain": {
        "en": "Computed here: {answer}. With equal shards the mean of the shard means is the global mean, and "
              "the gradient is linear — the reason data parallelism gives the same update as one big device.",
        "zh": "此处计算结果：{answer}。分片大小相同时，各分片均值的平均就是全局均值，而梯度是线性的——"
              "这正是数据并行与单台大设备给出相同更新的原因。",
    },
    "w.question.out_axes_none_value": {"en": "out_axes=None", "zh": "out_axes=None"},
    "q.out_axes_none_value.text": {
        "en": "Device d holds d + 1. What does `jax.pmap(lambda v: v * 10, out_axes=None)` return?",
        "zh": "第 d 台设备持有 d + 1。`jax.pmap(lambda v: v * 10, out_axes=None)` 返回什么？",
    },
    "q.out_axes_none_value.explain": {
        "en": "It returns {answer}: one device's copy, without checking that the others agree. Use it only on values made equal by a collective.",
        "zh": "它返回 {answer}：一台设备的副本，不检查其他设备是否一致。只应对经集合通信变得一致的值使用。",
    },
    "w.question.distinct_random": {"en": "Random numbers per device", "zh": "各设备的随机数"},
    "q.distinct_random.text": {
        "en": "One PRNG key is passed to all {n} devices with `in_axes=None`, and each draws `jax.random.normal(key, ())`. "
              "How many distinct values come back?",
        "zh": "用 `in_axes=None` 把同一个随机数密钥传给全部 {n} 台设备，每台调用 `jax.random.normal(key, ())`。返回几个不同的值？",
    },
    "q.distinct_random.explain": {
        "en": "{answer}: random numbers are a pure function of the key. Split the key or fold in `lax.axis_index`.",
        "zh": "{answer} 个：随机数是密钥的纯函数。请拆分密钥，或用 `lax.axis_index` 做 fold_in。",
    },
    "w.question.fused_all_reduces": {"en": "All-reduces in the compiled step", "zh": "编译后训练步中的全归约"},
    "q.fused_all_reduces.text": {
        "en": "A train step calls `pmean` twice, once for the gradient of w and once for b. How many all-reduce "
              "operations are in the compiled HLO?",
        "zh": "一个训练步调用了两次 `pmean`，分别作用于 w 和 b 的梯度。编译后的 HLO 中有几个全归约操作？",
    },
    "q.fused_all_reduces.explain": {
        "en": "Counted in the compiled program: {answer}. XLA combines small all-reduces into one tuple all-reduce, "
              "paying the latency α once. (With one device the all-reduce stays in the program, over a group of "
              "one device, and moves nothing.)",
        "zh": "在编译后的程序中数得：{answer} 个。XLA 会把多个小的全归约合并成一个元组全归约，只付一次延迟 α。"
              "（只有一台设备时，这个全归约仍留在程序中，组内只有一台设备，不传输任何数据。）",
    },
    "w.question.ring_bytes": {"en": "Bytes sent by ring all-reduce", "zh": "环形全归约发送的字节数"},
    "q.ring_bytes.text": {
        "en": "Ring all-reduce of a 100 MB gradient on 4 devices: how many MB does each device send?",
        "zh": "在 4 台设备上对 100 MB 的梯度做环形全归约：每台设备发送多少 MB？",
    },
    "q.ring_bytes.explain": {
        "en": "2(D−1)/D · S = {answer} MB: D−1 chunks of S/D in the reduce-scatter and as many in the all-gather. "
              "It approaches 2S however many devices there are.",
        "zh": "2(D−1)/D · S = {answer} MB：归约散射阶段发送 D−1 块 S/D，全收集阶段同样多。无论设备多少，它都趋近于 2S。",
    },
    "w.question.measured_speedup": {"en": "Speedup on this machine", "zh": "本机上的加速比"},
    "q.measured_speedup.text": {
        "en": "A compute-heavy pmap with a fixed global batch (strong scaling): predict the speedup of {n} devices "
              "over 1 on this runtime. Answers within {tolerance} count.",
        "zh": "一个计算密集、全局批次固定（强扩展）的 pmap：预测在本运行时上 {n} 台设备相对 1 台的加速比。误差在 {tolerance} 以内算对。",
    },
    "q.measured_speedup.explain": {
        "en": "Measured here: {answer}×. Simulated CPU devices share the physical cores, so the ceiling is "
              "min(D, cores), and other work on the machine moves the figure.",
        "zh": "此处实测：{answer} 倍。模拟的 CPU 设备共享物理核，上限是 min(D, 核数)，机器上的其他负载也会影响这个数字。",
    },
    # --- the modern ways: jit with shardings, shard_map (pmap_core/practice/quiz/modern.py) ---
    "w.question.collectives_sum_rows": {"en": "Collectives for a sum over split rows",
                                        "zh": "对切分的行求和需要的集合通信"},
    "q.collectives_sum_rows.text": {
        "en": "x has shape ({n}·4, 4) and its rows are split over {n} devices with "
              "`NamedSharding(mesh, P('data'))`. Which collective does XLA put into the compiled "
              "`jax.jit(lambda x: x.sum(axis=0))`?",
        "zh": "x 的形状为 ({n}·4, 4)，它的行通过 `NamedSharding(mesh, P('data'))` 切分到 {n} 台设备上。"
              "XLA 会在编译后的 `jax.jit(lambda x: x.sum(axis=0))` 中插入哪种集合通信？",
    },
    "q.collectives_sum_rows.explain": {
        "en": "Read from the compiled HLO: {answer}. Each device sums its own rows into a partial (4,) result, "
              "and the output is not split, so the partial sums are added across the devices: one all-reduce of "
              "4 numbers, never the whole x. (With one device there is nothing to add across devices, and no "
              "collective.)",
        "zh": "从编译后的 HLO 中读出：{answer}。每台设备先把自己的行加成一个 (4,) 的部分和；输出没有切分，"
              "所以要在设备之间把部分和加起来：一次 4 个数的全归约，而不是整个 x。"
              "（只有一台设备时，没有需要跨设备相加的东西，也就没有集合通信。）",
    },
    "w.question.collectives_replicate": {"en": "Collectives for a replicated output", "zh": "复制输出需要的集合通信"},
    "q.collectives_replicate.text": {
        "en": "x has shape ({n}·4, 4) and its rows are split over {n} devices with `P('data')`. "
              "`jax.jit(lambda x: x * 2, out_shardings=NamedSharding(mesh, P()))` asks for the whole result on "
              "every device. Which collective does XLA insert?",
        "zh": "x 的形状为 ({n}·4, 4)，它的行用 `P('data')` 切分到 {n} 台设备上。"
              "`jax.jit(lambda x: x * 2, out_shardings=NamedSharding(mesh, P()))` 要求每台设备都得到完整的结果。"
              "XLA 会插入哪种集合通信？",
    },
    "q.collectives_replicate.explain": {
        "en": "Read from the compiled HLO: {answer}. Each device doubles its own rows; then every device needs "
              "the rows of all the others, which is an all-gather. `P()` means replicated, and replicating a "
              "split array costs a gather. (With one device its block is already the whole array.)",
        "zh": "从编译后的 HLO 中读出：{answer}。每台设备先把自己的行乘以 2；之后每台设备都需要其他所有设备的行，"
              "这就是全收集。`P()` 表示复制，而复制一个切分的数组要付出一次收集。"
              "（只有一台设备时，它的那一块就是整个数组。）",
    },
    "w.question.shard_map_body_shape": {"en": "What a shard_map body sees", "zh": "shard_map 的函数体看到的形状"},
    "q.shard_map_body_shape.text": {
        "en": "x has shape ({n}·4, 3) and is split over {n} devices with `P('data')`. What shape does `body` "
              "see in `jax.shard_map(body, mesh=mesh, in_specs=P('data'), out_specs=P('data'))`?",
        "zh": "x 的形状为 ({n}·4, 3)，用 `P('data')` 切分到 {n} 台设备上。在 "
              "`jax.shard_map(body, mesh=mesh, in_specs=P('data'), out_specs=P('data'))` 中，`body` 看到的形状是？",
    },
    "q.shard_map_body_shape.explain": {
        "en": "The body sees its own block, {answer}: shard_map keeps the rank and cuts the split axis into {n} "
              "blocks, where pmap drops the device axis of a ({n}, 4, 3) input. The out_specs put the blocks "
              "back together into ({n}·4, 3).",
        "zh": "函数体看到的是它自己的那一块 {answer}：shard_map 保持秩不变，把被切分的轴切成 {n} 块；"
              "而 pmap 会去掉 ({n}, 4, 3) 输入的设备轴。out_specs 再把各块拼回 ({n}·4, 3)。",
    },
    "w.question.replicated_output": {"en": "What P() means for an output", "zh": "输出的 P() 意味着什么"},
    "q.replicated_output.text": {
        "en": "Each of {n} devices holds one row of x (shape ({n}, 2), `P('data')`). A `jax.shard_map` returns "
              "the `lax.psum` of the rows with `out_specs=P()`. On how many devices is the whole result found?",
        "zh": "{n} 台设备各持有 x 的一行（形状 ({n}, 2)，`P('data')`）。一个 `jax.shard_map` 以 `out_specs=P()` "
              "返回各行的 `lax.psum`。完整的结果存在于几台设备上？",
    },
    "q.replicated_output.explain": {
        "en": "Counted from the output's `addressable_shards`: {answer}. `P()` names no mesh axis, so no "
              "dimension is split: the output is replicated, and every device holds the whole (1, 2) value. "
              "`P()` promises that the value is the same everywhere; here `lax.psum` makes it so.",
        "zh": "从输出的 `addressable_shards` 中数得：{answer}。`P()` 没有指定任何 mesh 轴，所以没有哪个维度被切分："
              "输出是复制的，每台设备都持有完整的 (1, 2) 值。`P()` 承诺各处的值相同；这里由 `lax.psum` 保证了这一点。",
    },
    "w.question.same_bytes_three_ways": {"en": "pmap, shard_map, jit: the same bytes?",
                                         "zh": "pmap、shard_map、jit：通信的字节数相同吗？"},
    "q.same_bytes_three_ways.text": {
        "en": "One MLP training step is compiled three ways over {n} devices: pmap, shard_map, and jit with "
              "shardings (`pmap_core.train.programs.build`). Do the three programs put the same number of bytes "
              "into collectives?",
        "zh": "同一个 MLP 训练步在 {n} 台设备上用三种方式编译：pmap、shard_map 和带分片的 jit"
              "（`pmap_core.train.programs.build`）。三个程序投入集合通信的字节数相同吗？",
    },
    "q.same_bytes_three_ways.explain": {
        "en": "Summed over each compiled HLO's collectives: {answer}. With two or more devices all three "
              "all-reduce the gradient of every parameter once per step, in one buffer, whoever wrote the "
              "collective: the programmer (pmap, shard_map) or the compiler (jit). A collective among a single "
              "device moves nothing and is not counted, so with one device every program moves nothing.",
        "zh": "对每个编译后 HLO 中的集合通信求和：{answer}。有两台及以上设备时，三者每步都把每个参数的梯度放进一个缓冲区做一次"
              "全归约，不论集合通信是谁写的：程序员（pmap、shard_map）还是编译器（jit）。只在一台设备内部的集合通信"
              "不搬运任何数据，不计入，所以只有一台设备时每个程序都不搬运数据。",
    },
    "w.question.typeof_sharded": {"en": "jax.typeof of a sharded array", "zh": "分片数组的 jax.typeof"},
    "q.typeof_sharded.text": {
        "en": "mesh = `jax.make_mesh(({n},), ('data',))`, and x of shape ({n}·4, 3) float32 is placed with "
              "`NamedSharding(mesh, P('data'))`. What does `jax.typeof(x)` print?",
        "zh": "mesh = `jax.make_mesh(({n},), ('data',))`，形状为 ({n}·4, 3) 的 float32 数组 x 用 "
              "`NamedSharding(mesh, P('data'))` 放置。`jax.typeof(x)` 打印什么？",
    },
    "q.typeof_sharded.explain": {
        "en": "It prints {answer}: the type names the mesh axis that splits each dimension (`@data`), because "
              "`jax.make_mesh` gives its axes the Explicit type on this JAX. Over Auto axes the sharding is not "
              "part of the type, and the same array prints as a plain shape.",
        "zh": "打印的是 {answer}：类型中写明了切分每个维度的 mesh 轴（`@data`），因为在当前 JAX 上 "
              "`jax.make_mesh` 默认把轴设为 Explicit 类型。在 Auto 轴上，分片方式不属于类型，同一个数组打印出来只是普通的形状。",
    },
    **_ZERO,
}
