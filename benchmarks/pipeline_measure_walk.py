"""The pipeline page's Measure click walked from the source, printed (harness/pipeline_measure_walk.py says
what it counts).

    .venv/bin/python -m benchmarks.pipeline_measure_walk
"""

from harness.pipeline_measure_walk import main

if __name__ == "__main__":
    main()
