TEXTS = {
    "title": {"en": "Interview questions", "zh": "面试题"},
    "summary": {
        "en": "Predict, run, and learn: questions on pmap and data parallelism.",
        "zh": "先预测再运行：关于 pmap 与数据并行的面试题。",
    },
}
