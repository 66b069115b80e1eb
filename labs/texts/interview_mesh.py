"""Texts of the interview questions on 2-D meshes (programs in pmap_core/practice/quiz/mesh.py), in the key format
of interview_questions.py: w.question.<id>, q.<id>.text, q.<id>.explain ({n} devices, the computed {answer})."""

_MESH_EN = ("the {n} devices here, arranged as the squarest data × model mesh (data ≤ model: 2 × 4 for 8 devices, "
            "1 × 3 for 3, 1 × 1 for one)")
_MESH_ZH = "这里的 {n} 台设备，排成最接近正方形的 data × model 网格（mesh）（data ≤ model：8 台设备为 2 × 4，3 台为 1 × 3，一台为 1 × 1）"

TEXTS = {
    "w.question.mesh_typeof_product": {"en": "2-D mesh: jax.typeof of a product", "zh": "二维网格：乘积的 jax.typeof"},
    "q.mesh_typeof_product.text": {
        "en": f"On {_MESH_EN}, x of shape (8·{{n}}, 16) float32 is placed with `P('data', None)` and w of shape "
              "(16, 4·{n}) with `P(None, 'model')`. What does `jax.typeof(x @ w)` print?",
        "zh": f"在{_MESH_ZH}上，形状为 (8·{{n}}, 16) 的 float32 数组 x 用 `P('data', None)` 放置，形状为 (16, 4·{{n}}) "
              "的 w 用 `P(None, 'model')` 放置。`jax.typeof(x @ w)` 打印什么？",
    },
    "q.mesh_typeof_product.explain": {
        "en": "It prints {answer}. In explicit sharding (`jax.make_mesh` gives Explicit axes on this JAX) the type of a "
              "result follows from the types of its operands: the rows keep x's split over the data mesh axis, the "
              "columns keep w's split over the model mesh axis, and the contracted dimension (16) is whole on both "
              "sides, so nothing is sent. A mesh axis of one device is still named in the type (at one device: "
              "`@data` and `@model` over 1 × 1).",
        "zh": "打印的是 {answer}。在显式分片中（在当前 JAX 上 `jax.make_mesh` 给出 Explicit 轴），结果的类型由操作数的类型推出："
              "行保留 x 沿 data 网格轴的切分，列保留 w 沿 model 网格轴的切分，而被收缩的维度（16）在两边都是完整的，"
              "因此不发送任何数据。只有一台设备的网格轴仍写在类型中（一台设备时：1 × 1 上的 `@data` 和 `@model`）。",
    },
    "w.question.mesh_ambiguous_dot": {"en": "A contraction split on both sides", "zh": "两边都被切分的收缩"},
    "q.mesh_ambiguous_dot.text": {
        "en": f"On {_MESH_EN}, a is float32[8,4·{{n}}@model] and b is float32[4·{{n}}@model,16]: the contracted "
              "dimension is sharded over the model mesh axis on both sides. What happens when `jax.jit(jnp.dot)(a, b)` "
              "is compiled, with no `out_sharding`?",
        "zh": f"在{_MESH_ZH}上，a 为 float32[8,4·{{n}}@model]，b 为 float32[4·{{n}}@model,16]：被收缩的维度在两边都沿 "
              "model 网格轴分片。不给 `out_sharding` 时编译 `jax.jit(jnp.dot)(a, b)` 会怎样？",
    },
    "q.mesh_ambiguous_dot.explain": {
        "en": "The program found: {answer}. Each device can only form a partial sum over its block of the contracted "
              "dimension. The full result could be all-reduced (replicated), reduce-scattered along either of its "
              "dimensions, or left unreduced (a `{{U:model}}` type, summed later): explicit sharding refuses to pick "
              "and raises `ShardingTypeError`: `Contracting dimensions are sharded and it is ambiguous how the output "
              "should be sharded`. It says so even when the model axis has one device: the rule is about "
              "types, not sizes. The 2-D mesh lab runs each valid `out_sharding` and shows its collective.",
        "zh": "程序的结果：{answer}。每台设备只能对被收缩维度上自己的那一块求出部分和。完整结果可以全归约（得到副本）、"
              "沿它的任一维度归约散射，或保持未归约（类型 `{{U:model}}`，稍后再求和）：显式分片拒绝替你选择，抛出 "
              "`ShardingTypeError`：`Contracting dimensions are sharded and it is ambiguous how the output should be sharded`。即使 model 轴只有一台设备也是如此：这条规则看的是类型，"
              "而不是大小。二维网格实验逐一运行每个合法的 `out_sharding`，并显示它的集合通信。",
    },
    "w.question.mesh_silent_gather": {"en": "A replicated matrix times a sharded one", "zh": "副本矩阵乘以分片矩阵"},
    "q.mesh_silent_gather.text": {
        "en": f"On {_MESH_EN}, a is float32[64,4·{{n}}] (replicated) and b is float32[4·{{n}}@model,8]. "
              "`jax.jit(jnp.dot)(a, b)` compiles without complaint. Which collective does the compiled program run?",
        "zh": f"在{_MESH_ZH}上，a 为 float32[64,4·{{n}}]（副本），b 为 float32[4·{{n}}@model,8]。"
              "`jax.jit(jnp.dot)(a, b)` 编译时没有任何报错。编译后的程序运行哪种集合通信？",
    },
    "q.mesh_silent_gather.explain": {
        "en": "The compiled program answered: {answer}. Only one side of the contraction is split, so the result's "
              "type is fixed (float32[64,8], replicated) and JAX does not ask. How to reach it is the compiler's "
              "choice: gather b's 4·{n} × 8 values, or multiply each device's columns of a by its rows of b and "
              "all-reduce the 64 × 8 result; here gathering b is the smaller message. On one device on the model "
              "axis nothing is sent. Explicit sharding makes the ambiguous case an error, not this one: read the "
              "compiled program to see what a silent reshard costs.",
        "zh": "编译后的程序给出的答案：{answer}。收缩只有一边被切分，所以结果的类型是确定的（float32[64,8]，副本），JAX 不会询问。"
              "如何得到它由编译器决定：全收集 b 的 4·{n} × 8 个值，或者让每台设备用自己那几列 a 乘以自己那几行 b，"
              "再对 64 × 8 的结果做全归约；这里收集 b 的消息更小。model 轴上只有一台设备时不发送任何数据。"
              "显式分片只把有歧义的情形变成错误，而不是这一种：要知道一次无声的重新分片代价多大，请读编译后的程序。",
    },
    "w.question.mesh_sharding_in_jit": {"en": "x.sharding inside jit", "zh": "jit 内部的 x.sharding"},
    "q.mesh_sharding_in_jit.text": {
        "en": f"On {_MESH_EN}, x is placed with `P('data', 'model')`. Inside a function run by `jax.jit`, what does "
              "reading `x.sharding` give?",
        "zh": f"在{_MESH_ZH}上，x 用 `P('data', 'model')` 放置。在 `jax.jit` 运行的函数内部，读取 `x.sharding` 得到什么？",
    },
    "q.mesh_sharding_in_jit.explain": {
        "en": "The program found: {answer}. Inside `jax.jit` x is a tracer: it has a type but no placement yet, so "
              "`x.sharding` (the concrete devices of a placed array) is not there, and JAX's message points to "
              "`jax.typeof(x)`. `jax.typeof(x).sharding` is the sharding in the type: a `NamedSharding` over an "
              "`AbstractMesh` (axis names and sizes, no devices). Outside jit both exist; inside, only the type.",
        "zh": "程序的结果：{answer}。在 `jax.jit` 内部 x 是一个 tracer：它有类型，但还没有放置位置，因此 `x.sharding`"
              "（已放置数组的具体设备）不存在，JAX 的报错指向 `jax.typeof(x)`。`jax.typeof(x).sharding` 是类型中的分片："
              "一个建在 `AbstractMesh`（只有轴名和大小，没有设备）上的 `NamedSharding`。jit 之外两者都有；jit 之内只有类型。",
    },
    "w.question.mesh_tp_param_fraction": {"en": "Tensor parallelism: parameter bytes per device",
                                          "zh": "张量并行：每台设备的参数字节数"},
    "q.mesh_tp_param_fraction.text": {
        "en": f"An MLP (16 inputs, a hidden layer of 32·{{n}}, one output) is split Megatron's way on {_MESH_EN}: "
              "the first weight and its bias by columns over model, the second weight by rows over model, the last "
              "bias whole. What fraction of the parameter bytes that data parallelism keeps on every device does one "
              "device hold? (Within {tolerance}.)",
        "zh": f"一个 MLP（16 个输入，隐藏层宽 32·{{n}}，一个输出）按 Megatron 的方式切分在{_MESH_ZH}上：第一个权重及其偏置沿 "
              "model 按列切分，第二个权重沿 model 按行切分，最后的偏置保持完整。数据并行在每台设备上保存全部参数字节，"
              "一台设备持有其中的多大比例？（误差 {tolerance} 以内。）",
    },
    "q.mesh_tp_param_fraction.explain": {
        "en": "Read from the placed arrays' shards: {answer}, about 1/Y for a model axis of Y devices (slightly "
              "more: the last bias is whole everywhere). Tensor parallelism divides the weights, unlike data "
              "parallelism, and unlike ZeRO it never gathers them back: each device computes with its own columns "
              "and rows, and sends activations instead. The data axis divides nothing here: its devices hold the "
              "same blocks.",
        "zh": "从已放置数组的分片读出：{answer}，对 Y 台设备的 model 轴约为 1/Y（略多一点：最后的偏置在每台设备上都是完整的）。"
              "张量并行把权重分开，这与数据并行不同；也与 ZeRO 不同，它从不把权重收集回来：每台设备用自己的列和行计算，"
              "改为发送激活值。这里 data 轴不分任何东西：它上面的设备持有相同的块。",
    },
    "w.question.mesh_dp_or_tp_bytes": {"en": "Data or model axis: bytes per step", "zh": "data 轴还是 model 轴：每步字节数"},
    "q.mesh_dp_or_tp_bytes.text": {
        "en": "An MLP (32 inputs, a hidden layer of 8·{n}, one output) trains on a global batch of 64·{n} samples "
              "on the {n} devices here, once as a {n} × 1 mesh (data parallelism only) and once as 1 × {n} "
              "(tensor parallelism only). Reading the collectives of each compiled step, which sends fewer bytes "
              "per step?",
        "zh": "一个 MLP（32 个输入，隐藏层宽 8·{n}，一个输出）在这里的 {n} 台设备上以 64·{n} 个样本的全局批次训练，"
              "一次用 {n} × 1 的网格（只有数据并行），一次用 1 × {n}（只有张量并行）。读每个编译后步骤的集合通信，"
              "哪种每步发送的字节更少？",
    },
    "q.mesh_dp_or_tp_bytes.explain": {
        "en": "The compiled steps answered: {answer}. Data parallelism all-reduces the gradient of every weight, "
              "about F·H values whatever the batch; tensor parallelism all-reduces the second layer's partial sums, "
              "one value per sample of the batch (this MLP has one output), whatever the weights. Which is smaller "
              "depends on batch against weights: the JAX Scaling Book's rule (\"Training\": per layer DP moves ~F·H, "
              "TP ~B·D). One device sends nothing.",
        "zh": "编译后的步骤给出的答案：{answer}。数据并行对每个权重的梯度做全归约，不论批次多大都约为 F·H 个值；张量并行对第二层的"
              "部分和做全归约，批次中每个样本一个值（这个 MLP 只有一个输出），不论权重多大。哪个更小取决于批次与权重之比："
              "这是 JAX Scaling Book 的规律（“Training”一章：每层数据并行传输约 F·H，张量并行约 B·D）。一台设备不发送任何数据。",
    },
}
