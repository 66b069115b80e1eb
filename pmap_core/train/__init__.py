"""Training: config, models, the step, the parallel programs, the loop, per-host loading, launch."""
