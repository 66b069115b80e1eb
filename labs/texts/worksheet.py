TEXTS = {
    "title": {"en": "Worksheets", "zh": "练习单"},
    "summary": {
        "en": "Exercise sheets across the labs: open a lab with given settings, predict, and let the code check you.",
        "zh": "贯穿各个实验的练习单：用给定设置打开实验，先预测，再由代码来核对。",
    },
    "intro": {
        "en": "Each step opens a lab with the settings it is about. Explore it, write down your prediction, then "
              "run the code: the right answer is what pmap_core computes on this server, never a typed-in value. "
              "Your progress is kept while this browser tab stays open.",
        "zh": "每一步都会用相关设置打开一个实验。先探索，写下你的预测，再运行代码：正确答案是 pmap_core 在本服务器上"
              "算出的结果，而不是事先写好的数值。只要这个浏览器标签页不关闭，你的进度就会保留。",
    },
    "w.sheet": {"en": "Sheet", "zh": "练习单"},
    "w.step": {"en": "Step", "zh": "步骤"},
    "step_option": {"en": "{number}. {mark}", "zh": "{number}. {mark}"},
    "progress": {"en": "{answered} of {total} steps answered, {right} right",
                 "zh": "已回答 {answered} / {total} 步，答对 {right} 步"},
    "reset": {"en": "🔄 Start the sheet again", "zh": "🔄 重新开始这张练习单"},
    "open_lab": {"en": "Open the {lab} lab with these settings", "zh": "用这些设置打开「{lab}」实验"},
    "uses_devices": {
        "en": "This step runs on {used} of this server's {available} devices: the most it needs, or the most that "
              "split its data evenly. The lab opens with the same count.",
        "zh": "这一步使用本服务器 {available} 台设备中的 {used} 台：这是它需要的最多台数，或能把它的数据均匀切分的最多台数。"
              "实验会以同样的设备数打开。",
    },
    "no_sheets": {"en": "No worksheet could be loaded: the messages above say what is wrong with each file.",
                  "zh": "没有任何练习单能够加载：上面的消息说明了每个文件的问题。"},
    "your_prediction": {"en": "Your prediction", "zh": "你的预测"},
    "shape_help": {"en": "Write a shape like (4, 2) or (8,).", "zh": "按 (4, 2) 或 (8,) 的格式写出形状。"},
    "check": {"en": "▶️ Run the code and check", "zh": "▶️ 运行代码并核对"},
    "running": {"en": "Running the step's code…", "zh": "正在运行这一步的代码……"},
    "right": {"en": "Right: you said {prediction}, the code computed {answer}.",
              "zh": "答对了：你的答案是 {prediction}，代码算出 {answer}。"},
    "wrong": {"en": "Not this time: you said {prediction}, the code computed {answer}.",
              "zh": "这次没答对：你的答案是 {prediction}，代码算出 {answer}。"},
    "tolerance": {"en": "Accepted within {tolerance} of the computed value.", "zh": "与计算值相差 {tolerance} 以内即算正确。"},
    "hints": {"en": "💡 Hints", "zh": "💡 提示"},
    "explanation": {"en": "Why", "zh": "原因"},
    "the_code": {"en": "The code that decides the answer", "zh": "决定答案的代码"},
    "needs_sweep": {
        "en": "This step is checked against your own scaling sweep on this server. Open the lab with the button "
              "above, press the sweep button, then come back here and check.",
        "zh": "这一步要用你自己在本服务器上的扩展扫描来核对。用上面的按钮打开实验，点击扫描按钮，然后回到这里核对。",
    },
    "sweep_used": {
        "en": "Checked against your latest sweep (model {model}, {scaling} scaling):",
        "zh": "按你最近一次的扫描核对（模型 {model}，{scaling} 扩展）：",
    },
    "recorded": {"en": "Recorded for your class.", "zh": "已记录到你的班级。"},
    "attempts_not_recorded": {
        "en": "This session records at most {limit} predictions at one step for your class; this one is kept "
              "here only.",
        "zh": "本次会话在同一步最多为班级记录 {limit} 次预测；这一次只保存在这里。",
    },
    "progress_withheld": {
        "en": "{answered} of {total} steps answered; your teacher reveals the answers of this sheet later",
        "zh": "已回答 {answered} / {total} 步；这张练习单的答案由教师稍后揭晓",
    },
    "held": {
        "en": "Your teacher holds the class at step {number}: everyone predicts this step now.",
        "zh": "教师让全班停在第 {number} 步：现在大家都来预测这一步。",
    },
    "withheld": {
        "en": "Your prediction {prediction} is in. Your teacher has not revealed this sheet's answers and "
              "explanations yet: they show here once revealed. You can change your prediction and check again; "
              "your first one stays your first.",
        "zh": "你的预测 {prediction} 已提交。教师还没有揭晓这张练习单的答案和解释：揭晓后会显示在这里。"
              "你可以修改预测后再次核对；你的第一次预测仍然算作第一次。",
    },
    "record_failed": {
        "en": "Your result is kept in this session, but it could not be recorded for your class:",
        "zh": "你的结果保存在本次会话中，但无法记录到你的班级：",
    },
    "col.devices": {"en": "D", "zh": "D"},
    "col.efficiency": {"en": "efficiency E(D)", "zh": "扩展效率 E(D)"},
    "col.throughput": {"en": "steady throughput (samples/s)", "zh": "稳态吞吐量（样本/秒）"},
    "error.bad_worksheet": {"en": "A worksheet is broken ({where}): {problem}",
                            "zh": "有一张练习单有问题（{where}）：{problem}"},
    "error.needs_sweep": {
        "en": "This step needs your own sweep first.",
        "zh": "这一步需要你先运行自己的扫描。",
    },
    "error.sweep_mismatch": {
        "en": "Your latest sweep trained {got}, but this step is about {wanted}: open the lab with the button above "
              "and run the sweep with its settings.",
        "zh": "你最近一次扫描训练的是 {got}，但这一步针对的是 {wanted}：请用上面的按钮打开实验，并用它的设置运行扫描。",
    },
    "error.not_a_shape": {"en": "{value} is not a shape; write it like (4, 2).",
                          "zh": "{value} 不是形状；请按 (4, 2) 的格式书写。"},
    "error.unknown_step": {"en": "There is no step called {name}.", "zh": "没有名为 {name} 的步骤。"},
}
