TEXTS = {
    "not_recorded": {
        "en": "Not recorded for a class: this page has no class code. Give your name and class code under "
              "\"Your name in a class\" to record your predictions.",
        "zh": "没有记录到班级：本页没有班级代码。在「你在班级中的名字」里填写名字和班级代码，才会记录你的预测。",
    },
    "after_answer": {
        "en": "This browser was shown this step's answer before, so your teacher sees this prediction marked as "
              "made after seeing the answer: it never counts as a first prediction.",
        "zh": "这个浏览器之前已经看到过这一步的答案，所以教师看到的这次预测带有「看过答案之后」的标记：它永远不算第一次预测。",
    },
    "name_taken": {
        "en": "Another browser recorded under this name, or one drawn the same, in this class first. Your "
              "teacher sees your records marked as another browser's under a taken name. If this name is not "
              "yours, choose another.",
        "zh": "本班已有另一个浏览器先用这个名字（或看起来一样的名字）记录过。教师看到的你的记录会标为「另一个浏览器使用已被占用的名字」。"
              "如果这个名字不是你的，请换一个。",
    },
    "name_blank": {
        "en": "Your name has no visible character, so classmates and your teacher see it as blank.",
        "zh": "你的名字里没有可见字符，所以同学和教师看到的是空白。",
    },
    "no_controls": {
        "en": "Your teacher cannot withhold or hold this guess: its answer is this lab's own measurement, which "
              "the lab shows as it runs and the Experiments page and MLflow keep. With a class code your guess "
              "is recorded before the answer shows.",
        "zh": "教师无法对这个猜测隐藏答案或让全班停在这里：它的答案就是本实验自己的测量结果，实验运行时会显示，"
              "实验对比页和 MLflow 也会保存。有班级代码时，你的猜测会在答案显示之前记录下来。",
    },
    "give_prediction": {
        "en": "Give your prediction first: nothing is checked or recorded until you do.",
        "zh": "请先给出你的预测：在此之前不会核对，也不会记录任何内容。",
    },
    "held_sheet": {
        "en": "Your teacher holds the class at the sheet \"{sheet}\": everyone works on it now.",
        "zh": "教师让全班停在练习单「{sheet}」：现在大家都做这一张。",
    },
}
