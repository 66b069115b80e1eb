TEXTS = {
    "title": {"en": "The demo program", "zh": "Python 演示"},
    "summary": {
        "en": "The tutorial's program, step by step, fixed for current JAX.",
        "zh": "逐步运行教程程序，并修正为适配当前 JAX 的写法。",
    },
}
