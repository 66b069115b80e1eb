"""Texts of the interview questions on ZeRO / FSDP (programs in pmap_core/practice/quiz/zero.py), in the key format of
interview_questions.py: w.question.<id>, q.<id>.text, q.<id>.explain ({n} devices, the computed {answer})."""

_MEMORY_TEXT = {
    "en": "A model of Ψ = 1 billion parameters trains in float32 with Adam (4 bytes of parameter, 4 of gradient "
          "and 8 of optimizer state per parameter) on the {n} devices here, with {stage}. How many GB of "
          "parameters, gradients and optimizer state does each device hold (activations not counted)?",
    "zh": "一个 Ψ = 10 亿参数的模型用 float32 和 Adam 训练（每个参数：参数 4 字节、梯度 4 字节、优化器状态 8 字节），"
          "在这里的 {n} 台设备上使用 {stage}。每台设备持有多少 GB 的参数、梯度和优化器状态（不计激活值）？",
}
_STAGES = {
    "zero1": ("ZeRO-1 (optimizer state sharded)", "ZeRO-1（优化器状态分片）",
              "4 + 4 + 8/{n}", "4 + 4 + 8/{n}"),
    "zero2": ("ZeRO-2 (optimizer state and gradients sharded)", "ZeRO-2（优化器状态与梯度分片）",
              "4 + (4 + 8)/{n}", "4 + (4 + 8)/{n}"),
    "zero3": ("ZeRO-3 / FSDP (everything sharded)", "ZeRO-3 / FSDP（全部分片）",
              "(4 + 4 + 8)/{n}", "(4 + 4 + 8)/{n}"),
}


def _memory(stage: str) -> dict:
    en_name, zh_name, en_sum, zh_sum = _STAGES[stage]
    return {
        f"w.question.{stage}_memory_gb": {"en": f"Memory per device under {en_name.split(' (')[0]}",
                                          "zh": f"{zh_name.split('（')[0]} 下每台设备的显存"},
        f"q.{stage}_memory_gb.text": {"en": _MEMORY_TEXT["en"].replace("{stage}", en_name),
                                      "zh": _MEMORY_TEXT["zh"].replace("{stage}", zh_name)},
        f"q.{stage}_memory_gb.explain": {
            "en": f"Bytes per parameter: {en_sum}, times Ψ = 10⁹: {{answer}} GB on each device (replicated data "
                  "parallelism holds 16 GB). With one device nothing is sharded. The sharded data parallel lab "
                  "measures these bytes on real shards.",
            "zh": f"每个参数的字节数：{zh_sum}，乘以 Ψ = 10⁹：每台设备 {{answer}} GB（复制式数据并行为 16 GB）。"
                  "只有一台设备时没有任何分片。分片数据并行实验在真实分片上实测这些字节数。",
        },
    }


TEXTS = {
    **_memory("zero1"),
    **_memory("zero2"),
    **_memory("zero3"),
    "w.question.scatter_gather_vs_all_reduce": {"en": "Reduce-scatter + all-gather vs all-reduce",
                                                "zh": "归约散射 + 全收集 与 全归约"},
    "q.scatter_gather_vs_all_reduce.text": {
        "en": "On {n} devices, compare `lax.psum(v)` with `lax.all_gather(lax.psum_scatter(v, tiled=True), "
              "tiled=True)` on the same array: their values, and the bytes each device sends on a ring, read from "
              "the compiled HLO. What do you find?",
        "zh": "在 {n} 台设备上，对同一个数组比较 `lax.psum(v)` 与 `lax.all_gather(lax.psum_scatter(v, tiled=True), "
              "tiled=True)`：它们的值，以及从编译后的 HLO 读出的每台设备在环上发送的字节数。结果如何？",
    },
    "q.scatter_gather_vs_all_reduce.explain": {
        "en": "The program found: {answer}. A ring all-reduce is a reduce-scatter (each device ends with the sum of "
              "one 1/D block, sending (D−1)/D·S) followed by an all-gather of those blocks (another (D−1)/D·S): "
              "2(D−1)/D·S in all. That is why ZeRO-2 and ZeRO-3 cost no more than data parallelism for the "
              "gradients: they stop after the reduce-scatter and gather parameters instead.",
        "zh": "程序的结果：{answer}。环形全归约就是一次归约散射（每台设备得到一个 1/D 块的和，发送 (D−1)/D·S）"
              "加上对这些块的一次全收集（再发送 (D−1)/D·S）：共 2(D−1)/D·S。所以 ZeRO-2 和 ZeRO-3 在梯度上的通信"
              "并不比数据并行多：它们在归约散射之后就停下，改为收集参数。",
    },
    "w.question.fsdp_vs_dp_bytes": {"en": "FSDP vs DP: bytes per step", "zh": "FSDP 与 DP：每步字节数"},
    "q.fsdp_vs_dp_bytes.text": {
        "en": "An MLP trains with Adam on the {n} devices here, once replicated (dp) and once with ZeRO-3 / FSDP. "
              "Counting the collectives of each compiled step, how many bytes does FSDP send per step?",
        "zh": "一个 MLP 在这里的 {n} 台设备上用 Adam 训练，一次全部复制（dp），一次使用 ZeRO-3 / FSDP。"
              "数一数每个编译后的步骤中的集合通信，FSDP 每步发送多少字节？",
    },
    "q.fsdp_vs_dp_bytes.explain": {
        "en": "The compiled steps here answered: {answer}. ZeRO counts 3Ψ for FSDP against 2Ψ for DP: the parameters "
              "all-gathered for the forward pass and again for the backward pass, then the gradients "
              "reduce-scattered, where DP's all-reduce is one reduce-scatter plus one all-gather. A compiler that "
              "keeps the gathered parameters from the forward pass for the backward pass gathers once and sends "
              "what DP sends, at the price of holding the whole parameters in between. One device sends nothing.",
        "zh": "这里编译后的步骤给出的答案：{answer}。ZeRO 对 FSDP 计为 3Ψ，对 DP 计为 2Ψ：参数在前向时全收集一次、"
              "反向时再全收集一次，然后对梯度做归约散射；而 DP 的全归约就是一次归约散射加一次全收集。"
              "若编译器把前向时收集到的参数留给反向使用，就只收集一次，发送量与 DP 相同，代价是两者之间要持有完整参数。"
              "一台设备不发送任何数据。",
    },
    "w.question.accumulation_collectives": {"en": "Gradient accumulation in the HLO",
                                            "zh": "HLO 中的梯度累积"},
    "q.accumulation_collectives.text": {
        "en": "A data-parallel step on {n} devices is compiled with K = 1 and with K = 4 micro-batches of gradient "
              "accumulation (`lax.scan` over the micro-batches). How often does the K = 4 step run its gradient "
              "collectives?",
        "zh": "{n} 台设备上的一个数据并行步骤分别以 K = 1 和 K = 4 个微批次的梯度累积编译（对微批次做 `lax.scan`）。"
              "K = 4 的步骤多久运行一次梯度集合通信？",
    },
    "q.accumulation_collectives.explain": {
        "en": "Counted in the compiled HLO: {answer}. What accumulation adds is a loop over the micro-batches whose "
              "body computes and adds up local gradients; the collective stays after the loop, so its bytes per "
              "step do not grow with K, while each step does K micro-batches of compute one after another.",
        "zh": "在编译后的 HLO 中数出：{answer}。梯度累积增加的是一个遍历微批次的循环，循环体计算并累加本地梯度；"
              "集合通信留在循环之后，因此每步的通信字节数不随 K 增长，而每步要依次完成 K 个微批次的计算。",
    },
    "w.question.padded_mean": {"en": "Sum vs mean with padded shards", "zh": "补零分片上的求和与平均"},
    "q.padded_mean.text": {
        "en": "B = 4·{n} + 1 samples with values 1 … B are padded with zeros to a multiple of {n} and split over "
              "{n} devices. Which gives the true mean (B + 1)/2: `lax.pmean` of each shard's mean, or `lax.psum` of "
              "each shard's sum divided by B?",
        "zh": "B = 4·{n} + 1 个样本（值为 1 … B）用零补齐到 {n} 的倍数，再分到 {n} 台设备上。哪种方法得到真实平均值 "
              "(B + 1)/2：对每个分片的平均值做 `lax.pmean`，还是对每个分片的和做 `lax.psum` 再除以 B？",
    },
    "q.padded_mean.explain": {
        "en": "The program found: {answer}. A mean of means counts every padding zero as a sample, so it is too small "
              "whenever padding was added; summing and dividing by the true count B ignores the zeros. ",
        "zh": "程序的结果：{answer}。“平均的平均”把每个补上的零都当作样本，因此只要补了零结果就偏小；"
              "先求和再除以真实样本数 B 则不受零的影响。只有一台设备时没有补零，两者一致。",
    },
}
