"""The lab's terms in both languages: one Chinese word per concept, used the same way on every page.

Each entry names the concept in English and in Chinese. `en_pattern` finds the concept in an English
text; the Chinese text of the same key then uses one of `zh_forms` (the listed term, or the English
word kept as is, e.g. a code name). `banned_zh` are translations the lab does not use for it (they
mean something else, or give one concept several names): no Chinese text uses them, except where
`banned_where` is "term" (only where the English names the concept). tests/pages/test_texts.py
checks every text against it.

JAX's own error messages are English: pages show them verbatim, in code, and explain them in the
page's language — never a translated "quote".
"""

GLOSSARY = (
    {"en": "data parallelism", "zh": "数据并行", "en_pattern": r"\bdata[- ]parallel", "zh_forms": ("数据并行",)},
    {"en": "host", "zh": "主机", "en_pattern": r"\bhost\b(?![- ]?(platform|name))", "zh_forms": ("主机", "host"),
     "banned_zh": ("主设备", "宿主")},
    {"en": "device", "zh": "设备", "en_pattern": r"\bdevices?\b", "zh_forms": ("设备", "device"),
     "banned_zh": ("装置",)},
    {"en": "shard, sharding", "zh": "分片", "en_pattern": r"\bshard(s|ed|ing)?\b(?!_map)",
     "zh_forms": ("分片", "shard", "切片", "切分")},
    {"en": "device axis (leading axis)", "zh": "设备轴（前导维度）", "en_pattern": r"\bleading (axis|dim)",
     "zh_forms": ("前导维度",), "banned_zh": ("前导轴", "首维", "第一维")},
    {"en": "collective", "zh": "集合通信（通信原语）", "en_pattern": r"\bcollectives?\b",
     "zh_forms": ("集合通信", "通信原语", "collective"), "banned_zh": ("集体通信",)},
    {"en": "all-reduce", "zh": "全归约", "en_pattern": r"\ball-reduce", "zh_forms": ("全归约", "all-reduce", "all_reduce"),
     "banned_zh": ("规约", "全局归约", "全聚合")},
    {"en": "all-gather", "zh": "全收集", "en_pattern": r"\ball-gather", "zh_forms": ("全收集", "all-gather", "all_gather"),
     "banned_zh": ("全聚集",)},
    {"en": "reduce-scatter", "zh": "归约散射", "en_pattern": r"\breduce-scatter",
     "zh_forms": ("归约散射", "reduce-scatter", "psum_scatter")},
    {"en": "synchronization barrier", "zh": "同步屏障", "en_pattern": r"\bbarrier", "zh_forms": ("屏障",)},
    {"en": "replicated parameters", "zh": "参数副本", "en_pattern": r"\breplica(s|ted)?\b",
     "zh_forms": ("副本", "复制", "replica", "replicated")},
    {"en": "pure function", "zh": "纯函数", "en_pattern": r"\bpure function", "zh_forms": ("纯函数",)},
    {"en": "throughput", "zh": "吞吐量", "en_pattern": r"\bthroughput", "zh_forms": ("吞吐量", "throughput")},
    {"en": "scaling ratio (speedup)", "zh": "扩展比（加速比）", "en_pattern": r"\b(speedup|scaling ratio)",
     "zh_forms": ("加速比", "扩展比", "speedup", "倍")},
    {"en": "efficiency", "zh": "扩展效率", "en_pattern": r"\befficiency\b", "zh_forms": ("效率",)},
    {"en": "step time", "zh": "单步时间", "en_pattern": r"\bstep time", "zh_forms": ("单步时间", "T_step")},
    {"en": "dispatch (overhead)", "zh": "派发（开销）", "en_pattern": r"\bdispatch", "zh_forms": ("派发", "dispatch"),
     "banned_zh": ("调度", "分发")},
    {"en": "trace, tracing", "zh": "追踪", "en_pattern": r"\btrac(e|es|ed|ing)\b", "zh_forms": ("追踪", "trace", "tracer"),
     "banned_zh": ("跟踪",), "banned_where": "term"},  # 跟踪 is MLflow's tracking (跟踪存储): banned only for tracing
    {"en": "lower / lowering (to HLO)", "zh": "lower 到 HLO（lowering）", "en_pattern": r"\blower(ed|ing|s)?\b(?! (than|bound|limit|η|learning|case))",
     "zh_forms": ("lower",), "banned_zh": ("降级", "下降到")},
    {"en": "compile", "zh": "编译", "en_pattern": r"\bcompil(e|es|ed|ing|ation)\b", "zh_forms": ("编译", "compile")},
    {"en": "mesh", "zh": "网格（mesh）", "en_pattern": r"\bmesh\b", "zh_forms": ("mesh", "网格")},
    {"en": "PartitionSpec", "zh": "分区规格（PartitionSpec）", "en_pattern": r"\bPartitionSpec\b",
     "zh_forms": ("PartitionSpec",)},
    {"en": "gradient accumulation", "zh": "梯度累积", "en_pattern": r"\bgradient accumulation",
     "zh_forms": ("梯度累积",)},
    {"en": "optimizer state", "zh": "优化器状态", "en_pattern": r"\boptimi[sz]er states?", "zh_forms": ("优化器状态",)},
    {"en": "mixed precision", "zh": "混合精度", "en_pattern": r"\bmixed[- ]precision", "zh_forms": ("混合精度",)},
    {"en": "device memory (peak)", "zh": "设备内存（峰值）", "en_pattern": r"\bdevice memory",
     "zh_forms": ("设备内存",), "banned_zh": ("显存",)},
    {"en": "sharded data parallelism (ZeRO / FSDP)", "zh": "分片数据并行（ZeRO / FSDP）",
     "en_pattern": r"\b(ZeRO|FSDP)\b", "zh_forms": ("ZeRO", "FSDP")},
    {"en": "process (multi-host)", "zh": "进程（多主机）", "en_pattern": r"\bmulti-(process|host)",
     "zh_forms": ("多进程", "多主机")},
    {"en": "global batch", "zh": "全局批次", "en_pattern": r"\bglobal batch", "zh_forms": ("全局批次",),
     "banned_zh": ("全局批大小",)},
    {"en": "replica groups", "zh": "副本组", "en_pattern": r"\breplica groups\b", "zh_forms": ("副本组",)},
    {"en": "strong scaling / weak scaling", "zh": "强扩展 / 弱扩展", "en_pattern": r"\b(strong|weak) scaling",
     "zh_forms": ("强扩展", "弱扩展")},
    {"en": "PRNG key", "zh": "随机数密钥", "en_pattern": r"\bPRNG key", "zh_forms": ("随机数密钥", "密钥")},
    {"en": "mesh axis", "zh": "网格轴", "en_pattern": r"\bmesh ax(is|es)\b", "zh_forms": ("网格轴", "mesh 轴")},
    {"en": "explicit sharding", "zh": "显式分片", "en_pattern": r"\bexplicit sharding", "zh_forms": ("显式分片",)},
    {"en": "tensor parallelism", "zh": "张量并行", "en_pattern": r"\btensor[- ]parallel", "zh_forms": ("张量并行",)},
    {"en": "activations", "zh": "激活值", "en_pattern": r"\bactivations\b", "zh_forms": ("激活值", "激活")},
    {"en": "pipeline parallelism", "zh": "流水线并行", "en_pattern": r"\bpipeline[- ]parallel",
     "zh_forms": ("流水线并行", "Pipeline parallelism")},  # the English: a source's section title, kept as is
    {"en": "stage (of a pipeline)", "zh": "阶段", "en_pattern": r"\bstages?\b", "zh_forms": ("阶段", "stage")},
    {"en": "micro-batch", "zh": "微批次", "en_pattern": r"\bmicro-?batch", "zh_forms": ("微批次", "micro-batch", "microbatch"),
     "banned_zh": ("微批量", "小批次")},
    {"en": "bubble", "zh": "气泡", "en_pattern": r"\bbubbles?\b", "zh_forms": ("气泡", "bubble"),
     "banned_zh": ("空泡",)},
    {"en": "GPipe", "zh": "GPipe", "en_pattern": r"\bGPipe\b", "zh_forms": ("GPipe", "gpipe")},
    {"en": "1F1B", "zh": "1F1B", "en_pattern": r"\b1F1B\b", "zh_forms": ("1F1B", "1f1b")},
    {"en": "schedule (of a pipeline)", "zh": "排程", "en_pattern": r"\bschedul(e|es|ed|ing)\b",
     "zh_forms": ("排程", "schedule")},
)

