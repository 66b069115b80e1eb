TEXTS = {
    "title": {"en": "Home", "zh": "首页"},
    "heading": {"en": "pmap-lab: one program, many devices", "zh": "pmap 实验室：一个程序，多台设备"},
    "intro": {
        "en": "Learn data parallelism with `jax.pmap` by running it. A batch too large for one device is cut along "
              "its leading axis into D shards; every device runs the same compiled program on its own shard; "
              "collectives such as `lax.pmean` make the devices agree. Every number and chart in these labs comes "
              "from JAX running here, on the devices listed in the sidebar.",
        "zh": "通过亲手运行来学习 `jax.pmap` 的数据并行。一台设备装不下的批次沿前导维度被切成 D 个分片；"
              "每台设备在自己的分片上运行同一个编译好的程序；`lax.pmean` 等集合通信让各设备达成一致。"
              "本实验室中的每个数字和图表都来自在此运行的 JAX，设备清单见侧边栏。",
    },
    "formula_intro": {
        "en": "Three formulas carry the whole story: the per-device batch, the global mean gradient, and the update.",
        "zh": "三个公式贯穿全部内容：每台设备的批大小、全局平均梯度，以及参数更新。",
    },
    "labs": {"en": "The labs", "zh": "实验列表"},
    "pmap_status": {
        "en": "About `jax.pmap` today: since JAX 0.8 it is in maintenance mode and implemented as "
              "`jit(shard_map(...))`; new code should prefer `jax.shard_map`. pmap remains the clearest way to "
              "learn the ideas, and the labs show the modern equivalent where it matters.",
        "zh": "关于如今的 `jax.pmap`：自 JAX 0.8 起它处于维护模式，内部实现为 `jit(shard_map(...))`；"
              "新代码应优先使用 `jax.shard_map`。pmap 仍是学习这些概念最直观的方式，各实验会在关键处展示现代写法。",
    },
}
