"""Texts of the interview questions on pipeline parallelism (programs in pmap_core/practice/quiz/pipeline.py), in
the key format of interview_questions.py: w.question.<id>, q.<id>.text, q.<id>.explain ({n} devices, the
computed {answer})."""

_SETTING_EN = ("A pipeline of 4 stages (one per device) runs 8 micro-batches per step, one time slot for each "
               "forward and each backward of one micro-batch on one stage")
_SETTING_ZH = "一条 4 个阶段（每台设备一个）的流水线每步运行 8 个微批次，一个阶段对一个微批次的每次前向和每次反向各占一个时间槽"
_TABLE_EN = ("The answer is counted from the schedule's table (`train.pipeline.schedule_table`), which needs no "
             "device: it holds with the {n} devices here too; running the pipeline needs 4.")
_TABLE_ZH = "答案由排程表（`train.pipeline.schedule_table`）数出，不需要任何设备：在这里的 {n} 台设备上同样成立；真正运行这条流水线需要 4 台设备。"

TEXTS = {
    "w.question.pipeline_bubble": {"en": "Pipeline: the bubble of GPipe", "zh": "流水线：GPipe 的气泡"},
    "q.pipeline_bubble.text": {
        "en": f"{_SETTING_EN}, in the order of GPipe (every forward, then every backward). What share of the "
              "devices' time slots is idle (the bubble), as a fraction between 0 and 1?",
        "zh": f"{_SETTING_ZH}，按 GPipe 的顺序（先做完所有前向，再做所有反向）。设备的时间槽中空闲的比例（气泡）是多少？"
              "请给出 0 到 1 之间的小数。",
    },
    "q.pipeline_bubble.explain": {
        "en": "The bubble is {answer} (within {tolerance}). Stage s starts s slots after the first and the last "
              "stage finishes its forwards P − 1 slots after the first does; the backwards drain the same way. A "
              "step takes 2(M + P − 1) slots of which each device works 2M, so (P − 1)/(M + P − 1) of the step "
              "is idle (Huang et al. 2019, GPipe, §2.3; the Ultra-Scale Playbook, \"Pipeline parallelism\", gives it over the "
              "ideal time instead, (P − 1)/M). More "
              f"micro-batches shrink it. {_TABLE_EN}",
        "zh": "气泡为 {answer}（容差 {tolerance}）。第 s 个阶段比第一个阶段晚 s 个时间槽开始，最后一个阶段比第一个阶段晚 P − 1 "
              "个时间槽做完前向；反向以同样的方式排空。一步共 2(M + P − 1) 个时间槽，每台设备工作 2M 个，所以一步中有 "
              "(P − 1)/(M + P − 1) 处于空闲（Huang 等 2019，GPipe，§2.3；Ultra-Scale Playbook 的“Pipeline parallelism”"
              "给出的是它与理想时间之比 (P − 1)/M）。"
              f"微批次越多，气泡越小。{_TABLE_ZH}",
    },
    "w.question.pipeline_slots": {"en": "Pipeline: time slots of one step", "zh": "流水线：一步的时间槽数"},
    "q.pipeline_slots.text": {
        "en": f"{_SETTING_EN}, in the order of 1F1B (one forward, one backward). How many time slots does one "
              "step take, from the first forward to the last backward?",
        "zh": f"{_SETTING_ZH}，按 1F1B 的顺序（一次前向，一次反向）。从第一次前向到最后一次反向，一步占多少个时间槽？",
    },
    "q.pipeline_slots.explain": {
        "en": "One step takes {answer} slots: 2(M + P − 1), as under GPipe. Each stage does 2M pieces of work, "
              "and the last backward of the first stage waits for the forward of the last micro-batch to reach the "
              "last stage and its backward to come back: P − 1 slots of filling, P − 1 of draining. 1F1B changes "
              f"the order, not the length. {_TABLE_EN}",
        "zh": "一步占 {answer} 个时间槽：2(M + P − 1)，与 GPipe 相同。每个阶段做 2M 份工作，第一个阶段的最后一次反向要等最后一个"
              "微批次的前向到达最后一个阶段、它的反向再传回来：P − 1 个时间槽填充，P − 1 个排空。1F1B 改变的是顺序，不是长度。"
              f"{_TABLE_ZH}",
    },
    "w.question.pipeline_bubble_1f1b": {"en": "Pipeline: 1F1B's bubble against GPipe's",
                                        "zh": "流水线：1F1B 与 GPipe 的气泡"},
    "q.pipeline_bubble_1f1b.text": {
        "en": f"{_SETTING_EN}. Compared with GPipe's bubble, is 1F1B's bubble smaller, the same or larger?",
        "zh": f"{_SETTING_ZH}。与 GPipe 的气泡相比，1F1B 的气泡是更小、相同还是更大？",
    },
    "q.pipeline_bubble_1f1b.explain": {
        "en": "Counted from both tables: {answer}. Both schedules fill and drain the pipeline the same way, so "
              "both idle (P − 1)/(M + P − 1) of the step (Huang et al. 2019, GPipe, §2.3; Narayanan et al. 2021). What "
              "1F1B buys is memory: it starts a micro-batch's backward as soon as it can, so a stage keeps fewer "
              "micro-batches' activations waiting for their backward. An interleaved schedule (several stages "
              f"per device; Narayanan et al. 2021) is what shrinks the bubble itself. {_TABLE_EN}",
        "zh": "由两张排程表数出：{answer}。两种排程以同样的方式填充和排空流水线，空闲都占一步的 (P − 1)/(M + P − 1)"
              "（Huang 等 2019，GPipe，§2.3；Narayanan 等 2021）。1F1B 换来的是内存：它尽早开始一个微批次的反向，"
              "所以一个阶段保存的、等待反向的微批次激活值更少。真正缩小气泡的是交错排程（每台设备承担多个阶段；Narayanan 等 2021）。"
              f"{_TABLE_ZH}",
    },
    "w.question.pipeline_kept_activations": {"en": "Pipeline: activations 1F1B keeps",
                                             "zh": "流水线：1F1B 保存的激活值"},
    "q.pipeline_kept_activations.text": {
        "en": f"{_SETTING_EN}, in the order of 1F1B. A stage keeps the input of each micro-batch (the "
              "activations the previous stage sent it) from its arrival until its own backward. At most how many "
              "micro-batches' inputs does the second stage keep at once?",
        "zh": f"{_SETTING_ZH}，按 1F1B 的顺序。一个阶段从每个微批次的输入（上一个阶段发来的激活值）到达起一直保存它，"
              "直到自己做完它的反向。第二个阶段同时最多保存多少个微批次的输入？",
    },
    "q.pipeline_kept_activations.explain": {
        "en": "At most {answer}. On stage s, 1F1B runs P − s − 1 forwards before its first backward, then "
              "alternates one forward and one backward, so the micro-batch in its pair and the next one already "
              "arrived make P − s + 1 (counted from 0); the first stage keeps none, its backward recomputing its "
              "forward from its rows of the batch. GPipe keeps all M until the backwards begin: M grows the "
              "memory of GPipe, not that of 1F1B (Narayanan et al. 2021, PipeDream-Flush). The lab sizes each "
              f"stage's buffers from the table, so the compiled peak shows it. {_TABLE_EN}",
        "zh": "最多 {answer} 个。在第 s 个阶段（从 0 数起），1F1B 在第一次反向之前运行 P − s − 1 次前向，然后一次前向、一次反向交替，"
              "所以加上正在配对的微批次和已经到达的下一个，共 P − s + 1 个；第一个阶段不保存任何输入，它的反向从它那几行批次数据"
              "重算前向。GPipe 在反向开始前保存全部 M 个：M 增大的是 GPipe 的内存，而不是 1F1B 的（Narayanan 等 2021，"
              "PipeDream-Flush）。本实验按排程表确定每个阶段的缓冲区大小，"
              f"所以编译后的峰值能看出这一点。{_TABLE_ZH}",
    },
    "w.question.pipeline_micro_for_small_bubble": {"en": "Pipeline: micro-batches for a small bubble",
                                                   "zh": "流水线：让气泡变小的微批次数"},
    "q.pipeline_micro_for_small_bubble.text": {
        "en": "A pipeline of 4 stages runs GPipe. What is the fewest micro-batches per step that brings the bubble "
              "under 10% of the step?",
        "zh": "一条 4 个阶段的流水线按 GPipe 运行。每步至少需要多少个微批次，才能让气泡低于一步的 10%？",
    },
    "q.pipeline_micro_for_small_bubble.explain": {
        "en": "{answer} micro-batches: the first M whose table idles under a tenth of its slots, which is where "
              "(P − 1)/(M + P − 1) < 0.1, M > 9(P − 1). The price: a global batch split that finely makes each "
              "micro-batch small (poor use of each device), and GPipe keeps the activations of all of them; 1F1B "
              f"keeps at most P. {_TABLE_EN}",
        "zh": "{answer} 个微批次：表中空闲时间槽少于十分之一的最小 M，也就是 (P − 1)/(M + P − 1) < 0.1，即 M > 9(P − 1)。"
              "代价是：全局批次分得这么细，每个微批次都很小（设备利用率低），而且 GPipe 要保存所有微批次的激活值；1F1B 最多保存 P 个。"
              f"{_TABLE_ZH}",
    },
    "w.question.pipeline_peak_1f1b": {"en": "Pipeline: measured peak, 1F1B against GPipe",
                                      "zh": "流水线：实测峰值，1F1B 与 GPipe"},
    "q.pipeline_peak_1f1b.text": {
        "en": "The MLP runs pipelined on min({n}, 4) stages, one per device of the {n} here, with twice as many "
              "micro-batches as stages. Both schedules are compiled and their peak device memory read from "
              "`compiled.memory_analysis()`. Compared with GPipe's peak, is 1F1B's smaller, the same or larger?",
        "zh": "MLP 在 min({n}, 4) 个阶段上流水线运行，这里的 {n} 台设备每台一个阶段，微批次数是阶段数的两倍。两种排程都编译，"
              "并从 `compiled.memory_analysis()` 读出设备内存峰值。与 GPipe 的峰值相比，1F1B 的峰值是更小、相同还是更大？",
    },
    "q.pipeline_peak_1f1b.explain": {
        "en": "Measured: {answer}. With more micro-batches than stages, GPipe keeps every micro-batch's "
              "inputs until the backwards begin and 1F1B at most P, and the compiled programs differ by "
              "exactly those activations (`train.pipeline.stash_bytes`); the rest (the stage's layers, its gradient, "
              "the batch) is the same. With one device there is one stage: nothing waits, no stage receives an "
              "input (device 0 recomputes from its rows of the batch), both keep none, and the peaks are equal; a pipeline of P stages needs P devices. These are the "
              "compiler's figures for float32 on this backend, not a GPU's.",
        "zh": "实测：{answer}。微批次多于阶段时，GPipe 在反向开始前保存每个微批次的激活值，1F1B 最多保存 P 个，"
              "两个编译后的程序恰好相差这些激活值（`train.pipeline.stash_bytes`）；其余部分（该阶段的层、它的梯度、批次）相同。"
              "只有一台设备时只有一个阶段：没有等待，没有阶段会收到输入（设备 0 从它那几行批次数据重算），两者都不保存输入，峰值相等；P 个阶段的流水线需要 P 台设备。"
              "这些是编译器在这个后端上对 float32 给出的数字，不是 GPU 的。",
    },
}
