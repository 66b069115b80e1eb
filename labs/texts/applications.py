TEXTS = {
    "title": {"en": "Applications and cost", "zh": "AI 应用场景"},
    "summary": {
        "en": "Where data parallelism is used and when communication stops it scaling.",
        "zh": "数据并行的应用场景，以及通信何时让它不再扩展。",
    },
    "intro": {
        "en": "Data parallelism is the first tool reached for whenever one device is too slow and the model still "
              "fits on it. Where it is used, and what it costs as the number of devices grows:",
        "zh": "只要单台设备太慢、而模型还放得下，数据并行就是首选工具。下面是它的用武之地，以及设备增多时它的代价：",
    },
    "use.training.title": {"en": "🏋️ Training large models", "zh": "🏋️ 训练大模型"},
    "use.training.body": {
        "en": "Pre-training image and language models processes billions of samples; splitting every batch over "
              "many devices and averaging gradients is how that finishes in days instead of years. Each step pays "
              "one gradient all-reduce, which the calculator below prices. When the model itself no longer fits on "
              "one device, data parallelism is combined with sharding the parameters, gradients and optimizer "
              "state (ZeRO, FSDP) or with tensor and pipeline parallelism.",
        "zh": "预训练图像和语言模型要处理数十亿样本；把每个批次分到多台设备上并平均梯度，才能把几年的工作缩短到几天。"
              "每一步都要付出一次梯度全归约的代价，下方的计算器会估算它。当模型本身在一台设备上放不下时，"
              "数据并行会与参数、梯度和优化器状态的分片（ZeRO、FSDP）或张量并行、流水线并行结合使用。",
    },
    "use.finetuning.title": {"en": "🎯 Fine-tuning", "zh": "🎯 微调"},
    "use.finetuning.body": {
        "en": "Adapting a pre-trained model to a task uses the same train step on a smaller data set. With "
              "parameter-efficient methods (adapters, LoRA) only a small fraction of parameters has gradients, so "
              "the all-reduce is small and data parallelism scales almost perfectly.",
        "zh": "把预训练模型适配到具体任务，使用同样的训练步，只是数据集更小。采用参数高效的方法（adapter、LoRA）时，"
              "只有一小部分参数有梯度，全归约的数据量很小，数据并行几乎可以线性扩展。",
    },
    "use.inference.title": {"en": "📦 Batch inference", "zh": "📦 批量推理"},
    "use.inference.body": {
        "en": "Scoring a large data set offline (embeddings, labels, evaluation) needs no gradients at all: each "
              "device runs the forward pass on its shard and no collective is needed until the results are "
              "gathered. It is the easiest case: the limit is usually reading the data, not communication.",
        "zh": "离线处理大数据集（生成向量、打标签、评估）完全不需要梯度：每台设备对自己的分片做前向计算，"
              "直到最后收集结果之前都不需要集合通信。这是最简单的情形：瓶颈通常是读数据，而不是通信。",
    },
    "use.search.title": {"en": "🔎 Hyper-parameter search", "zh": "🔎 超参数搜索"},
    "use.search.body": {
        "en": "The same mechanism maps over settings instead of samples: each device trains the same model with "
              "its own learning rate or seed, with no communication between devices. pmap (or vmap on one "
              "device) over a stacked axis of settings runs a whole sweep in one compiled program.",
        "zh": "同样的机制也可以沿超参数而不是样本做映射：每台设备用自己的学习率或随机种子训练同一个模型，"
              "设备之间无需通信。对堆叠起来的超参数轴使用 pmap（单台设备上用 vmap），一个编译好的程序就能跑完整个搜索。",
    },
    "calc_heading": {"en": "What does it cost? A calculator", "zh": "代价有多大？计算器"},
    "calc_intro": {
        "en": "Every device holds the whole model and all-reduces a full gradient of S = N × bytes per value every "
              "step. Compute per step follows the ≈ 6 × N × tokens rule for transformers (2 FLOPs per parameter and "
              "token forward, 4 backward; Kaplan et al. 2020) and ≈ 3 × the forward FLOPs for the CNN. Strong "
              "scaling keeps the global batch, so compute per device shrinks as 1/D while the all-reduce does not. "
              "These are model estimates, not measurements; the Communication benchmark lab measures real links.",
        "zh": "每台设备持有完整模型，每一步都要对大小为 S = N × 每个数值的字节数的完整梯度做全归约。每步计算量按"
              "Transformer 的 ≈ 6 × N × token 数规则估算（前向每参数每 token 2 FLOPs，反向 4 FLOPs；Kaplan 等 2020），"
              "CNN 按 ≈ 3 × 前向 FLOPs 估算。强扩展保持全局批次不变，每台设备的计算量按 1/D 缩小，而全归约不会。"
              "这些是模型估算而非实测；真实链路的测量见“通信基准”实验。",
    },
    "w.model": {"en": "Model", "zh": "模型"},
    "w.model.resnet50": {"en": "ResNet-50 (25.6M)", "zh": "ResNet-50（2560 万）"},
    "w.model.bert_base": {"en": "BERT-base (110M)", "zh": "BERT-base（1.1 亿）"},
    "w.model.gpt2_xl": {"en": "GPT-2 (1.5B)", "zh": "GPT-2（15 亿）"},
    "w.model.llama2_7b": {"en": "Llama-2-7B", "zh": "Llama-2-7B"},
    "w.model.custom": {"en": "Custom", "zh": "自定义"},
    "w.params_m": {"en": "Parameters N (millions)", "zh": "参数量 N（百万）"},
    "w.gflops": {"en": "Training GFLOPs per sample", "zh": "每个样本的训练 GFLOPs"},
    "model_values": {"en": "N = {params:,.1f} M parameters, {gflops:,.4g} GFLOPs per sample per step",
                     "zh": "N = {params:,.1f} 百万参数，每样本每步 {gflops:,.4g} GFLOPs"},
    "w.precision": {"en": "Precision", "zh": "精度"},
    "w.precision.bf16": {"en": "bf16 mixed (2 B)", "zh": "bf16 混合精度（2 字节）"},
    "w.precision.fp32": {"en": "fp32 (4 B)", "zh": "fp32（4 字节）"},
    "w.optimizer": {"en": "Optimizer", "zh": "优化器"},
    "w.optimizer.sgd": {"en": "SGD", "zh": "SGD"},
    "w.optimizer.momentum": {"en": "Momentum", "zh": "动量"},
    "w.optimizer.adam": {"en": "Adam", "zh": "Adam"},
    "w.device": {"en": "Accelerator", "zh": "加速器"},
    "w.device.v100": {"en": "NVIDIA V100 (125 TFLOP/s)", "zh": "NVIDIA V100（125 TFLOP/s）"},
    "w.device.a100": {"en": "NVIDIA A100 (312 TFLOP/s)", "zh": "NVIDIA A100（312 TFLOP/s）"},
    "w.device.h100": {"en": "NVIDIA H100 SXM (989 TFLOP/s)", "zh": "NVIDIA H100 SXM（989 TFLOP/s）"},
    "w.util": {"en": "Utilisation u (fraction of peak)", "zh": "利用率 u（峰值的比例）"},
    "w.batch": {"en": "Global batch (samples)", "zh": "全局批次（样本数）"},
    "w.mode": {"en": "Scaling", "zh": "扩展方式"},
    "w.mode.strong": {"en": "strong (same global batch)", "zh": "强扩展（全局批次不变）"},
    "w.mode.weak": {"en": "weak (same batch per device)", "zh": "弱扩展（每台设备批次不变）"},
    "w.link": {"en": "Link", "zh": "互连链路"},
    "w.link.pcie4_x16": {"en": "PCIe 4.0 x16", "zh": "PCIe 4.0 x16"},
    "w.link.nvlink4_h100": {"en": "NVLink 4 (H100)", "zh": "NVLink 4（H100）"},
    "w.link.ib_ndr": {"en": "InfiniBand NDR 400 Gb/s", "zh": "InfiniBand NDR 400 Gb/s"},
    "w.link.eth_100g": {"en": "100 GbE", "zh": "100 GbE"},
    "w.link.custom": {"en": "Custom", "zh": "自定义"},
    "w.bw": {"en": "Link bandwidth β (GB/s, one way)", "zh": "链路带宽 β（GB/s，单向）"},
    "w.alpha_us": {"en": "Latency α per hop (µs)", "zh": "每跳延迟 α（微秒）"},
    "link_values": {"en": "β = {bw:g} GB/s, α = {alpha:g} µs", "zh": "β = {bw:g} GB/s，α = {alpha:g} 微秒"},
    "w.max_devices": {"en": "Largest D", "zh": "最大设备数 D"},
    "w.overlap": {"en": "Overlap communication with compute", "zh": "通信与计算重叠"},
    "m.gradient": {"en": "Gradient per step (S)", "zh": "每步梯度量（S）"},
    "m.comm": {"en": "All-reduce at D = {d}", "zh": "D = {d} 时的全归约"},
    "m.compute": {"en": "Compute at D = {d}", "zh": "D = {d} 时的计算"},
    "m.efficiency": {"en": "Efficiency at D = {d}", "zh": "D = {d} 时的扩展效率"},
    "dominates": {
        "en": "From D = {d} on, the all-reduce takes longer than the compute of a step: data parallelism stops "
              "paying off unless the batch grows or communication overlaps compute.",
        "zh": "从 D = {d} 起，全归约比一步的计算还要久：除非增大批次或让通信与计算重叠，否则数据并行不再划算。",
    },
    "never_dominates": {"en": "Up to D = {d}, compute stays larger than communication.",
                        "zh": "直到 D = {d}，计算时间始终大于通信时间。"},
    "best": {"en": "Highest throughput in this range at **D = {d}**.", "zh": "在此范围内吞吐量最高的是 **D = {d}**。"},
    "part.compute": {"en": "compute", "zh": "计算"},
    "part.comm": {"en": "communication (not hidden)", "zh": "通信（未被掩盖部分）"},
    "axis.devices": {"en": "devices D", "zh": "设备数 D"},
    "axis.step_time": {"en": "step time (s)", "zh": "单步时间（秒）"},
    "axis.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "chart.step_time": {"en": "Step time: compute vs communication", "zh": "单步时间：计算与通信"},
    "chart.efficiency": {"en": "Scaling efficiency", "zh": "扩展效率"},
    "model_note": {
        "en": "Modelled, not measured: the α-β ring model with the figures chosen above. This machine's devices "
              "are not involved.",
        "zh": "这是模型估算而非实测：使用上面所选参数的 α-β 环形模型，与本机的设备无关。",
    },
    "memory_heading": {"en": "Memory per device at D = {d} ({zero})", "zh": "D = {d} 时每台设备的设备内存（{zero}）"},
    "w.zero": {"en": "Sharding of the training state (ZeRO stage)", "zh": "训练状态的分片（ZeRO 阶段）"},
    "w.zero.dp": {"en": "none: everything replicated", "zh": "不分片：全部复制"},
    "w.zero.zero1": {"en": "ZeRO-1: optimizer state", "zh": "ZeRO-1：优化器状态"},
    "w.zero.zero2": {"en": "ZeRO-2: + gradients", "zh": "ZeRO-2：+ 梯度"},
    "w.zero.zero3": {"en": "ZeRO-3 / FSDP: + parameters", "zh": "ZeRO-3 / FSDP：+ 参数"},
    "mem.weights": {"en": "weights", "zh": "权重"},
    "mem.gradients": {"en": "gradients", "zh": "梯度"},
    "mem.optimizer": {"en": "optimizer state (fp32)", "zh": "优化器状态（fp32）"},
    "mem.master": {"en": "fp32 master weights", "zh": "fp32 主权重"},
    "fits": {
        "en": "{total:,.1f} GB per device ({bytes:.3g} bytes per parameter, activations not counted) fits in the "
              "{capacity:g} GB of an {device}.",
        "zh": "每台设备 {total:,.1f} GB（每个参数 {bytes:.3g} 字节，未计激活值），可以放进 {device} 的 {capacity:g} GB。",
    },
    "does_not_fit": {
        "en": "{total:,.1f} GB per device ({bytes:.0f} bytes per parameter, before activations) does not fit in the "
              "{capacity:g} GB of an {device}: plain data parallelism cannot train this; shard the optimizer state, "
              "gradients and parameters (ZeRO / FSDP).",
        "zh": "每台设备 {total:,.1f} GB（每个参数 {bytes:.0f} 字节，尚未计激活值），放不进 {device} 的 {capacity:g} GB："
              "单纯的数据并行无法训练它；需要对优化器状态、梯度和参数分片（ZeRO / FSDP）。",
    },
    "does_not_fit_sharded": {
        "en": "{total:,.1f} GB per device ({bytes:.2f} bytes per parameter, before activations) does not fit in the "
              "{capacity:g} GB of an {device} with {zero} on {d} devices: shard further, use more devices, or add "
              "tensor or pipeline parallelism.",
        "zh": "在 {d} 台设备上使用 {zero} 时，每台设备 {total:,.1f} GB（每个参数 {bytes:.2f} 字节，尚未计激活值）放不进 "
              "{device} 的 {capacity:g} GB：需要进一步分片、使用更多设备，或加上张量并行、流水线并行。",
    },
    "sources_heading": {"en": "Where the preset figures come from", "zh": "预设数值的来源"},
    "col.item": {"en": "Preset", "zh": "预设"},
    "col.source": {"en": "Source", "zh": "来源"},
    "latency_note": {
        "en": "The per-hop latencies α are assumed orders of magnitude, not vendor figures; bandwidths are one-way "
              "per device from the specifications named.",
        "zh": "每跳延迟 α 是假设的数量级，并非厂商数据；带宽取自所列规格，为每台设备的单向带宽。",
    },
    "error.not_positive": {"en": "`{name}` must be greater than zero (got {value}).",
                           "zh": "`{name}` 必须大于零（收到 {value}）。"},
    "error.unknown_mode": {"en": "There is no scaling mode `{name}`.", "zh": "没有名为 `{name}` 的扩展方式。"},
    "error.unknown_optimizer": {"en": "There is no optimizer `{name}`.", "zh": "没有名为 `{name}` 的优化器。"},
    "source.resnet50": {
        "en": "He et al. 2016 (Deep Residual Learning): 3.8×10⁹ multiply-adds forward per 224×224 image = 7.6 GFLOPs; "
              "training ≈ 3 × forward; 25.6M parameters (torchvision)",
        "zh": "He 等 2016（Deep Residual Learning）：每张 224×224 图像前向 3.8×10⁹ 次乘加 = 7.6 GFLOPs；"
              "训练 ≈ 3 × 前向；参数 2560 万（torchvision）",
    },
    "source.bert_base": {"en": "Devlin et al. 2019 (BERT): 110M parameters; 512 tokens per sample",
                         "zh": "Devlin 等 2019（BERT）：1.1 亿参数；每个样本 512 个 token"},
    "source.gpt2_xl": {"en": "Radford et al. 2019 (GPT-2): 1.5B parameters; 1024 tokens per sample",
                       "zh": "Radford 等 2019（GPT-2）：15 亿参数；每个样本 1024 个 token"},
    "source.llama2_7b": {"en": "Touvron et al. 2023 (Llama 2): 7B class, 6.7B parameters; 4096 tokens per sample",
                         "zh": "Touvron 等 2023（Llama 2）：7B 级，67 亿参数；每个样本 4096 个 token"},
    "source.pcie4_x16": {"en": "PCI-SIG PCIe 4.0 specification: 16 GT/s × 16 lanes ≈ 32 GB/s each way",
                         "zh": "PCI-SIG PCIe 4.0 规范：16 GT/s × 16 通道 ≈ 每方向 32 GB/s"},
    "source.nvlink4_h100": {"en": "NVIDIA H100 datasheet: NVLink 900 GB/s per GPU, both directions together (450 each way)",
                            "zh": "NVIDIA H100 数据手册：每块 GPU 的 NVLink 双向合计 900 GB/s（单向 450）"},
    "source.ib_ndr": {"en": "NVIDIA ConnectX-7 / InfiniBand NDR: 400 Gb/s = 50 GB/s",
                      "zh": "NVIDIA ConnectX-7 / InfiniBand NDR：400 Gb/s = 50 GB/s"},
    "source.eth_100g": {"en": "IEEE 802.3 100 Gb/s Ethernet = 12.5 GB/s", "zh": "IEEE 802.3 100 Gb/s 以太网 = 12.5 GB/s"},
    "source.v100": {"en": "NVIDIA V100 datasheet: 125 TFLOP/s tensor, 32 GB", "zh": "NVIDIA V100 数据手册：张量算力 125 TFLOP/s，32 GB"},
    "source.a100": {"en": "NVIDIA A100 datasheet: 312 TFLOP/s BF16 dense, 80 GB",
                    "zh": "NVIDIA A100 数据手册：BF16 稠密算力 312 TFLOP/s，80 GB"},
    "source.h100": {"en": "NVIDIA H100 SXM datasheet: 989 TFLOP/s BF16 dense, 80 GB",
                    "zh": "NVIDIA H100 SXM 数据手册：BF16 稠密算力 989 TFLOP/s，80 GB"},
}
