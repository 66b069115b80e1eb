"""Texts of the interview questions: w.question.<id> (short title), q.<id>.text, q.<id>.explain.

Explanations refer to the computed answer as {answer} and to the device count as {n}; no answer is typed in.
"""

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
              "paying the latency α once.",
        "zh": "在编译后的程序中数得：{answer} 个。XLA 会把多个小的全归约合并成一个元组全归约，只付一次延迟 α。",
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
}
