from labs.texts.interview_mesh import TEXTS as _MESH
from labs.texts.interview_pipeline import TEXTS as _PIPELINE
from labs.texts.interview_questions import TEXTS as _QUESTIONS

TEXTS = {
    "title": {"en": "Interview questions", "zh": "面试题"},
    "summary": {
        "en": "Predict, run, and learn: questions on pmap, shard_map, jit shardings and data parallelism.",
        "zh": "先预测再运行：关于 pmap、shard_map、jit 分片与数据并行的面试题。",
    },
    "intro": {
        "en": "Pick a question, write down your prediction, then run the real code. The right answer is whatever "
              "the program returns on this JAX, so it can never be out of date.",
        "zh": "选一道题，写下你的预测，再运行真实代码。正确答案就是程序在当前 JAX 上的返回值，因此永远不会过时。",
    },
    "w.question": {"en": "Question", "zh": "题目"},
    "score": {"en": "Score", "zh": "得分"},
    "score_value": {"en": "{right} / {answered}", "zh": "{right} / {answered}"},
    "progress": {"en": "{answered} of {total} questions answered", "zh": "已回答 {answered} / {total} 题"},
    "reset": {"en": "🔄 Reset score", "zh": "🔄 重置得分"},
    "held": {
        "en": "Your teacher holds the class at this question: everyone predicts it now.",
        "zh": "教师让全班停在这道题：现在大家都来预测它。",
    },
    "withheld": {
        "en": "Your prediction {prediction} is in. Your teacher has not revealed these answers and explanations "
              "yet: they show here once revealed.",
        "zh": "你的预测 {prediction} 已提交。教师还没有揭晓这些题的答案和解释：揭晓后会显示在这里。",
    },
    "your_prediction": {"en": "Your prediction", "zh": "你的预测"},
    "check": {"en": "▶️ Run the code and check", "zh": "▶️ 运行代码并核对"},
    "running": {"en": "Running the question's code…", "zh": "正在运行题目代码……"},
    "right": {"en": "Right: you said {prediction}, the code returned {answer}.",
              "zh": "答对了：你的答案是 {prediction}，代码返回 {answer}。"},
    "wrong": {"en": "Not this time: you said {prediction}, the code returned {answer}.",
              "zh": "这次没答对：你的答案是 {prediction}，代码返回 {answer}。"},
    "the_code": {"en": "The code that decides the answer", "zh": "决定答案的代码"},
    "heavy_note": {"en": "This question times real work, so it takes a few seconds.",
                   "zh": "这道题要对真实计算计时，需要几秒钟。"},
    "error.unknown_question": {"en": "There is no question called `{name}`.", "zh": "没有名为 `{name}` 的题目。"},
    **_QUESTIONS,
    **_MESH,
    **_PIPELINE,
}
