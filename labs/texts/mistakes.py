from labs.texts.mistakes_entries import TEXTS as _ENTRIES
from labs.texts.mistakes_migration import TEXTS as _MIGRATION

TEXTS = {
    "title": {"en": "Common mistakes", "zh": "常见误区"},
    "summary": {
        "en": "Mistakes people make with pmap and in moving pmap code to the new JAX, each reproduced live.",
        "zh": "pmap 的常见错误，以及把 pmap 代码迁移到新版 JAX 时的常见错误，每一个都现场复现。",
    },
    "intro": {
        "en": "Each entry shows what people write, runs it on the JAX installed here, and captures what really "
              "happens — the error JAX raises or the result it returns. Then it explains why and runs the fix. "
              "Nothing in the result boxes is typed in. The last entries are what pmap code written for older "
              "JAX meets here: since JAX 0.8 pmap is `jit(shard_map(...))`.",
        "zh": "每个条目展示常见的写法，在此处安装的 JAX 上运行，并捕获真实发生的情况——JAX 抛出的错误或返回的结果。"
              "随后解释原因并运行修正后的代码。结果框中没有任何内容是手写的。最后几个条目是为旧版 JAX 写的 pmap 代码"
              "在这里会遇到的问题：自 JAX 0.8 起，pmap 就是 `jit(shard_map(...))`。",
    },
    "w.entry": {"en": "Mistake", "zh": "误区"},
    "count": {"en": "{count} mistakes: {raises} raise an error, {silent} run with a wrong or surprising result, "
                    "{wasteful} run but waste time or clarity.",
              "zh": "共 {count} 个误区：{raises} 个会报错，{silent} 个能运行但结果错误或出人意料，"
                    "{wasteful} 个能运行但浪费时间或让代码难懂。"},
    "count_harmless": {"en": "{harmless} run and give the right result here.",
                       "zh": "{harmless} 个在这里能运行且结果正确。"},
    "count_one_device": {"en": "With one device, as here, {count} of them do not show: they need two or more devices, "
                               "and each of them says so.",
                         "zh": "只有一台设备时（如此处），其中 {count} 个不会显现：它们需要两台及以上设备，"
                               "每个条目都会说明这一点。"},
    "kind.raises": {"en": "💥 raises an error", "zh": "💥 会报错"},
    "kind.silent": {"en": "🤫 runs, with a wrong or surprising result", "zh": "🤫 能运行，但结果错误或出人意料"},
    "kind.wasteful": {"en": "🐌 runs, but is wasteful or misleading", "zh": "🐌 能运行，但浪费或误导"},
    "kind.harmless": {"en": "✅ runs here, with the fix's result", "zh": "✅ 在这里能运行，结果与修正写法相同"},
    "what_people_write": {"en": "What people write", "zh": "常见写法"},
    "the_fix": {"en": "The fix", "zh": "修正写法"},
    "run": {"en": "▶️ Run both on this JAX", "zh": "▶️ 在当前 JAX 上运行两者"},
    "running": {"en": "Running the mistake and the fix…", "zh": "正在运行错误写法与修正写法……"},
    "press_run": {"en": "Press the button to run this entry here.", "zh": "点击按钮，在此处运行该条目。"},
    "captured_mistake": {"en": "What happened (captured)", "zh": "实际发生了什么（捕获结果）"},
    "captured_fix": {"en": "The fix, running (captured)", "zh": "修正写法的运行结果（捕获结果）"},
    "why": {"en": "Why", "zh": "原因"},
    "fix": {"en": "Fix", "zh": "修正"},
    "claim_holds": {"en": "Checked: on JAX {jax} this behaves as described.",
                    "zh": "已核对：在 JAX {jax} 上，行为与描述一致。"},
    "claim_differs": {"en": "On JAX {jax} this does not behave as described above — trust the captured output.",
                      "zh": "在 JAX {jax} 上，行为与上面的描述不一致——请以捕获的输出为准。"},
    "helpers": {"en": "Helpers these call", "zh": "它们调用的辅助函数"},
    "error.unknown_pitfall": {"en": "There is no mistake called `{name}`.", "zh": "没有名为 `{name}` 的误区。"},
    **_ENTRIES,
    **_MIGRATION,
}
