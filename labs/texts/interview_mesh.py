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
    "w.question.mesh_gradient_axis": {"en": "Tensor parallelism: where the gradient goes",
                                      "zh": "张量并行：梯度在哪个轴上归约"},
    "q.mesh_gradient_axis.text": {
        "en": f"An MLP (8 inputs, a hidden layer of 16 per model device, one output) trains with the lab's tensor "
              f"program on {_MESH_EN}: Megatron's split over model, the batch over data. Reading the replica groups "
              "of the compiled step's collectives, over which mesh axis is the gradient of w1 all-reduced?",
        "zh": f"一个 MLP（8 个输入，每台 model 设备 16 个隐藏单元，一个输出）用本实验的 tensor 程序在{_MESH_ZH}上训练："
              "沿 model 按 Megatron 的方式切分，批次沿 data 切分。读编译后步骤中集合通信的副本组（replica groups），w1 的梯度沿哪个"
              "网格轴做全归约？",
    },
    "q.mesh_gradient_axis.explain": {
        "en": "Read from the compiled step: {answer}. The gradient of a weight is a sum over the batch's rows, and "
              "the rows are split over data, so each device's block of the gradient is all-reduced among the "
              "devices that hold the same block: those that differ only in their data position. Over model the "
              "blocks are different columns, not copies, so there is nothing to sum; the model axis carries the "
              "forward pass's activations instead. With one device on the data axis (a prime count, or one "
              "device) no gradient is sent at all.",
        "zh": "从编译后的步骤读出：{answer}。权重的梯度是对批次各行的求和，而行沿 data 切分，所以每台设备上的梯度块在持有同一块"
              "的设备之间做全归约：也就是只有 data 位置不同的那些设备。沿 model，各块是不同的列而不是副本，没有什么可求和；"
              "model 轴传输的是前向的激活值。data 轴上只有一台设备时（设备数为质数，或只有一台设备）根本不发送梯度。",
    },
    "w.question.mesh_reduced_all_reduces": {"en": "Accumulation with reduced weights",
                                            "zh": "使用 reduced 权重的梯度累积"},
    "q.mesh_reduced_all_reduces.text": {
        "en": "One SGD step accumulates the gradients of K = 4 micro-batches on the {n} devices here, the batch "
              "split over them. The weights are cast to `P(reduced={{'X'}})`, so each micro-batch's gradient comes "
              "out unreduced and the accumulator stays unreduced until one `jax.reshard` to `P()`. Counted in the "
              "compiled HLO, how many all-reduces does one step run? (0 if none.)",
        "zh": "一个 SGD 步骤在这里的 {n} 台设备上累积 K = 4 个微批次的梯度，批次切分到这些设备上。权重被转换为 "
              "`P(reduced={{'X'}})`，所以每个微批次的梯度以未归约的形式得出，累加器一直保持未归约，直到一次 `jax.reshard` 到 "
              "`P()`。在编译后的 HLO 中数一数，一步运行多少次全归约？（没有则填 0。）",
    },
    "q.mesh_reduced_all_reduces.explain": {
        "en": "Counted in the compiled step: {answer}. With replicated weights each micro-batch's gradient is "
              "all-reduced inside the scan, K all-reduces per step; with `reduced` weights the sum waits for the "
              "end of the scan and runs once (JAX's documentation, \"Autodiff and sharding\"), the same bytes as "
              "data parallelism without accumulation. On one device the compiler inserts none.",
        "zh": "在编译后的步骤中数得：{answer}。权重为副本时，每个微批次的梯度都在 scan 内做全归约，每步 K 次；使用 `reduced` "
              "权重时，求和等到 scan 结束才做，只做一次（JAX 文档“Autodiff and sharding”），字节数与不做梯度累积的数据并行"
              "相同。只有一台设备时编译器一次也不插入。",
    },
}
