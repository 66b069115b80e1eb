TEXTS = {
    "title": {"en": "Composing with jit and grad", "zh": "jit 组合"},
    "summary": {
        "en": "pmap with jit and grad: what is redundant, what is required, and why purity matters.",
        "zh": "pmap 与 jit、grad 的组合：哪些多余，哪些必需，为什么要纯函数。",
    },
}
