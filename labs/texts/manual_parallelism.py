TEXTS = {
    "title": {"en": "Manual parallelism", "zh": "手动并行"},
    "summary": {
        "en": "Shard a batch by hand and measure what synchronization costs.",
        "zh": "手动切分批次，测量同步的代价。",
    },
}
