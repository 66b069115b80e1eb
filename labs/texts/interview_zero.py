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
                                          "zh": f"{zh_name.split('（')[0]} 下每台设备的内存"},
        f"q.{stage}_memory_gb.text": {"en": _MEMORY_TEXT["en"].replace("{stage}", en_name),
                                      "zh": _MEMORY_TEXT["zh"].replace("{stage}", zh_name)},
        f"q.{stage}_memory_gb.explain": {
            "en": f"Bytes per parameter: {en_sum}, times Ψ = 10⁹: {{answer}} GB on each device (replicated data "
                  "parallelism holds 16 GB). With one device nothing is sharded. The sharded data parallel lab "
                  "measures these bytes on real shards, which pad each layer with zeros to a multiple of D: at "
                  "most D − 1 values per layer, nothing against 10⁹.",
            "zh": f"每个参数的字节数：{zh_sum}，乘以 Ψ = 10⁹：每台设备 {{answer}} GB（复制式数据并行为 16 GB）。"
                  "只有一台设备时没有任何分片。分片数据并行实验在真实分片上实测这些字节数；这些分片把每一层用零补齐到 D 的倍数："
                  "每层最多 D − 1 个值，相对 10⁹ 可以忽略。",
        },
    }


TEXTS = {
    **_memory("zero1"),
    **_memory("zero2"),
    **_memory("zero3"),
    "w.question.mixed_zero1_memory_gb": {"en": "ZeRO-1 in mixed precision", "zh": "混合精度下的 ZeRO-1"},
    "q.mixed_zero1_memory_gb.text": {
        "en": "The same model of Ψ = 1 billion parameters trains in the ZeRO paper's mixed precision with Adam: "
              "bfloat16 parameters and gradients (2 bytes each), a float32 master copy of the parameters and "
              "Adam's two float32 moments (12 bytes): 16 bytes per parameter, as in float32. With ZeRO-1 on the "
              "{n} devices here, how many GB of parameters, gradients and optimizer state does each device hold?",
        "zh": "同一个 Ψ = 10 亿参数的模型按 ZeRO 论文的混合精度用 Adam 训练：bfloat16 参数和梯度（各 2 字节），"
              "float32 参数主副本和 Adam 的两个 float32 矩（共 12 字节）：每个参数 16 字节，与 float32 相同。"
              "在这里的 {n} 台设备上使用 ZeRO-1，每台设备持有多少 GB 的参数、梯度和优化器状态？",
    },
    "q.mixed_zero1_memory_gb.explain": {
        "en": "Bytes per parameter: 2 + 2 + 12/{n}, times Ψ = 10⁹: {answer} GB on each device. ZeRO-1 shards only "
              "the optimizer state, and in mixed precision that is 12 of the 16 bytes (ZeRO §3), so it saves up to "
              "4× as D grows; in float32 it is 8 of 16 (4 + 4 + 8/{n}), so it saves at most 2×. With one device "
              "nothing is sharded: 16 GB either way.",
        "zh": "每个参数的字节数：2 + 2 + 12/{n}，乘以 Ψ = 10⁹：每台设备 {answer} GB。ZeRO-1 只对优化器状态分片，"
              "混合精度下它占 16 字节中的 12 字节（ZeRO §3），所以随 D 增大最多省到 4 倍；float32 下只占 16 字节中的"
              " 8 字节（4 + 4 + 8/{n}），所以最多省 2 倍。只有一台设备时没有任何分片：两种精度都是 16 GB。",
    },
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
              "2(D−1)/D·S in all, and 0 on one device. That is why ZeRO-1 and ZeRO-2 send what data parallelism "
              "sends (ZeRO §7.2): they reduce-scatter the gradients, update their shard, and all-gather the updated "
              "parameters instead of the summed gradients.",
        "zh": "程序的结果：{answer}。环形全归约就是一次归约散射（每台设备得到一个 1/D 块的和，发送 (D−1)/D·S）"
              "加上对这些块的一次全收集（再发送 (D−1)/D·S）：共 2(D−1)/D·S，一台设备时为 0。所以 ZeRO-1 和 ZeRO-2 "
              "发送的与数据并行相同（ZeRO §7.2）：它们对梯度做归约散射，更新自己的分片，然后全收集更新后的参数，"
              "而不是求和后的梯度。",
    },
    "w.question.fsdp_vs_dp_bytes": {"en": "FSDP vs DP: bytes per step", "zh": "FSDP 与 DP：每步字节数"},
    "q.fsdp_vs_dp_bytes.text": {
        "en": "An MLP trains with Adam on the {n} devices here, once replicated (dp) and once with ZeRO-3 / FSDP. "
              "Counting the collectives of each compiled step, how many bytes does FSDP send per step?",
        "zh": "一个 MLP 在这里的 {n} 台设备上用 Adam 训练，一次全部复制（dp），一次使用 ZeRO-3 / FSDP。"
              "数一数每个编译后的步骤中的集合通信，FSDP 每步发送多少字节？",
    },
    "q.fsdp_vs_dp_bytes.explain": {
        "en": "The compiled steps here answered: {answer}. On more than one device ZeRO (§7.2) counts 3Ψ for FSDP "
              "against 2Ψ for DP: each layer all-gathered just before its forward pass and again before its "
              "backward pass, then its gradient reduce-scattered, where DP's all-reduce is one reduce-scatter plus "
              "one all-gather. The extra Ψ buys memory: between the two gathers a device keeps only its shard of "
              "each layer, not the gathered layer (the sharded data parallel lab measures the peak this leaves). "
              "One device sends nothing.",
        "zh": "这里编译后的步骤给出的答案：{answer}。多于一台设备时，ZeRO（§7.2）对 FSDP 计为 3Ψ，对 DP 计为 2Ψ："
              "每一层在前向之前全收集一次、反向之前再全收集一次，然后对它的梯度做归约散射；而 DP 的全归约就是一次归约散射"
              "加一次全收集。多出的 Ψ 换来的是内存：两次收集之间设备只保留每一层的分片，而不是收集来的整层"
              "（分片数据并行实验实测由此得到的峰值）。一台设备不发送任何数据。",
    },
    "w.question.accumulation_collectives": {"en": "Gradient accumulation in the HLO",
                                            "zh": "HLO 中的梯度累积"},
    "q.accumulation_collectives.text": {
        "en": "A data-parallel step on {n} devices is compiled with K = 1 and with K = 4 micro-batches of gradient "
              "accumulation (`lax.scan` over the micro-batches). Counting the bytes each compiled step sends, how "
              "often does the K = 4 step send its gradient collectives?",
        "zh": "{n} 台设备上的一个数据并行步骤分别以 K = 1 和 K = 4 个微批次的梯度累积编译（对微批次做 `lax.scan`）。"
              "按每个编译后的步骤发送的字节数来数，K = 4 的步骤多久发送一次梯度集合通信？",
    },
    "q.accumulation_collectives.explain": {
        "en": "Read from the bytes the compiled steps send: {answer}. What accumulation adds is a loop over the "
              "micro-batches whose body computes and adds up local gradients; in data parallelism the collective "
              "stays after the loop, so its bytes per step do not grow with K, while each step does K micro-batches "
              "of compute one after another. On one device the all-reduce is still in the program, and it sends 0 "
              "bytes. ZeRO-2 and ZeRO-3 differ: they keep the gradient as a shard, so each micro-batch's gradient "
              "is reduce-scattered inside the loop (the sharded data parallel lab shows it).",
        "zh": "从编译后步骤发送的字节数读出：{answer}。梯度累积增加的是一个遍历微批次的循环，循环体计算并累加本地梯度；"
              "数据并行中集合通信留在循环之后，因此每步的通信字节数不随 K 增长，而每步要依次完成 K 个微批次的计算。"
              "只有一台设备时全归约仍在程序中，但发送 0 字节。ZeRO-2 和 ZeRO-3 不同：它们以分片形式保存梯度，"
              "因此每个微批次的梯度都在循环内做归约散射（分片数据并行实验中可以看到）。",
    },
    "w.question.zero3_layer_gathers": {"en": "ZeRO-3: gathers per layer", "zh": "ZeRO-3：每层的收集次数"},
    "q.zero3_layer_gathers.text": {
        "en": "An MLP of two layers trains with ZeRO-3 / FSDP on the {n} devices here (K = 1). Reading the bytes "
              "its compiled step all-gathers, how many times per step is each layer's parameter shard gathered "
              "whole?",
        "zh": "一个两层 MLP 在这里的 {n} 台设备上用 ZeRO-3 / FSDP 训练（K = 1）。从编译后的步骤全收集的字节数来看，"
              "每一层的参数分片每步被全收集成完整参数多少次？",
    },
    "q.zero3_layer_gathers.explain": {
        "en": "Read from the compiled step: {answer}. FSDP (Zhao et al. 2023) and ZeRO stage 3 (§7.2) gather a layer "
              "just before its forward pass and free it after, then gather it again just before its backward pass: "
              "two gathers of the parameters per step, a third Ψ beside the gradients' reduce-scatter. Keeping the "
              "gathered layer from the forward for the backward would save those bytes and hold each gathered "
              "layer from its forward pass until its backward pass, the memory stage 3 exists to save. On one device the all-gathers are in the "
              "program and carry 0 bytes.",
        "zh": "从编译后的步骤读出：{answer}。FSDP（Zhao 等 2023）和 ZeRO 第 3 阶段（§7.2）在一层前向之前收集它，用完即释放，"
              "反向之前再收集一次：每步收集参数两次，加上梯度的归约散射共 3Ψ。若把前向收集到的层留给反向使用，"
              "能省下这些字节，却要从每层的前向一直持有收集来的整层到它的反向，而这正是第 3 阶段要省的内存。只有一台设备时，"
              "全收集仍在程序中，但发送 0 字节。",
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
              "whenever padding was added; summing and dividing by the true count B ignores the zeros. With one "
              "device there is no padding, and both agree.",
        "zh": "程序的结果：{answer}。“平均的平均”把每个补上的零都当作样本，因此只要补了零结果就偏小；"
              "先求和再除以真实样本数 B 则不受零的影响。只有一台设备时没有补零，两者一致。",
    },
}
