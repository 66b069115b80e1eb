"""Interview questions on pmap, shard_map, jit shardings and data parallelism: predict, then run.

`types` holds the question type, one module per topic holds its programs and questions (`pmap`,
`modern`, `zero`), and `registry` gathers them: look a question up, answer it here, score a prediction.
"""
